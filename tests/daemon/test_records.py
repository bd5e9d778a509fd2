#!/usr/bin/env python3
"""Issue 22: a job's record is its own. A do-nothing job's max_rss_kb,
cpu_time_s and verdict are the same run alone and run while the daemon's
heap is big with other clients' work: one client holds a 112 MiB request line
(not yet ended), another job is running (so freed heap is not trimmed), and
a job that wrote 16 MiB of non-UTF-8 output was just answered. Also
/proc/1/status inside the job shows the sandbox init's size, not the
daemon's, and under a 16 MiB memory limit no do-nothing job ends
memory_limit where memory is polled (no memory cgroup).

Run as: test_records.py BIN_DIR CASE, CASE one of v1, v2, none, user (an
unprivileged daemon), each inside the unshare wrapper. With --measure the
figures are printed as JSON and nothing is asserted (to pick thresholds).

Thresholds (bench/FINDINGS.md, "Records under load"): with the spawner a
/bin/true job measured 1.15-1.34 MB max_rss_kb and 0.7-1.0 ms CPU (median)
alone and the same beside; the daemon's clones gave 132 MB and, with a
cgroup counting the init's exit, 2-4x the CPU beside. max_rss_kb: the
largest beside at most the largest alone x 1.25 + 1 MiB. cpu_time_s: the
median beside at most the median alone x 1.5 + 1 ms (the median, not the
largest: a loaded machine moves single jobs, not the middle of 40).

Case spawner: the spawner itself (pid and restarts in status, what it
holds, the init's parent is the daemon, restarted when killed or wedged,
gone with the daemon)."""
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_daemon as td  # noqa: E402  the Daemon and Client of the daemon tests

N = 40          # do-nothing jobs per phase
N_LIMITED = 120  # under a 16 MiB memory limit, per phase (the old code lost 1-2 of 60 beside)
HOLD = 112 << 20
USER = 4242


def job(c, id_, argv, **limits):
    req = td.exec_req(id_, argv)
    if limits:
        req["steps"][0]["limits"] = limits
    r = c.call(req, timeout=120)
    s = (r.get("steps") or [{}])[0]
    return {"status": r.get("status"), "step": s.get("status"), "rss": s.get("max_rss_kb"),
            "cpu": s.get("cpu_time_s"), "stdout": s.get("stdout", ""), "error": r.get("error") or s.get("error")}


def phase(sock, tag):
    c = td.Client(sock)
    out = {"true": [job(c, f"{tag}-t{i}", ["/bin/true"]) for i in range(N)]}
    out["limited"] = [job(c, f"{tag}-m{i}", ["/bin/true"], memory_mib=16) for i in range(N_LIMITED)]
    out["pid1"] = [job(c, f"{tag}-p{i}", ["sh", "-c", "grep -E '^VmRSS' /proc/1/status"]) for i in range(5)]
    c.close()
    return out


def make_heap_big(sock):
    """Another job running (no malloc_trim while one runs), a 16 MiB
    non-UTF-8 output answered, a 112 MiB request line held open. Returns
    what to close afterwards."""
    sleeper = td.Client(sock)
    sleeper.send(td.exec_req("sleeper", ["sleep", "300"], limits={"time_s": 600}))
    big = td.Client(sock)
    r = job(big, "big-output", ["sh", "-c", "head -c 16777216 /dev/zero | tr '\\0' '\\377'"],
            output_bytes=32 << 20)
    holder = socket.socket(socket.AF_UNIX)
    holder.connect(sock)
    holder.sendall(b'{"id":"held","type":"exec","files":[{"path":"x","content_b64":"' + b"A" * HOLD)
    time.sleep(1.0)  # the daemon read it all (sendall returned: it is in the daemon or its socket)
    return [sleeper, big, holder], r


def measure(sock):
    alone = phase(sock, "alone")
    keep, big = make_heap_big(sock)
    beside = phase(sock, "beside")
    for k in keep:
        k.close()
    return {"alone": alone, "beside": beside, "big_output": big["status"]}


def daemon_rss(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return [x.split()[1] for x in f if x.startswith("VmRSS")][0]
    except OSError:
        return "?"


def run_root(kind):
    empty = tempfile.mkdtemp(prefix="sbd-rec-tc-")
    d = td.Daemon("--jobs", "2", "--no-cache", "--toolchains", empty, "--cgroup", kind, "--max-line", str(128 << 20))
    try:
        st = td.Client(d.sock).call({"id": "st", "type": "status"})
        if st.get("cgroup") != kind:
            print(f"SKIPPED: --cgroup {kind} gave {st.get('cgroup')}")
            sys.exit(td.SKIP)
        return measure(d.sock), d
    finally:
        d.stop()


def run_user():
    """An unprivileged daemon (uid 4242, case_unprivileged_daemon's way):
    memory is polled, its clients are its own user."""
    top = tempfile.mkdtemp(prefix="sbd-rec-user-")
    os.chmod(top, 0o755)
    xdg = os.path.join(top, "xdg")
    os.mkdir(xdg, 0o700)
    os.chown(xdg, USER, USER)
    os.chmod(td.BIN, 0o755)
    sock = os.path.join(xdg, "s.sock")
    log = open(os.path.join(top, "log"), "w+")
    env = {"PATH": "/usr/bin:/bin", "HOME": xdg, "XDG_RUNTIME_DIR": xdg}
    proc = subprocess.Popen(["setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups",
                             os.path.join(td.BIN, "surgeboxd"), "--socket", sock, "--jobs", "2", "--no-cache",
                             "--toolchains", top, "--max-line", str(128 << 20)], stderr=log, env=env)
    rd, wr = os.pipe()
    try:
        deadline = time.time() + 30
        while time.time() < deadline and not os.path.exists(sock) and proc.poll() is None:
            time.sleep(0.05)
        pid = os.fork()
        if pid == 0:
            os.close(rd)
            code = 5
            try:
                os.setgroups([])
                os.setgid(USER)
                os.setuid(USER)
                with os.fdopen(wr, "w") as f:
                    json.dump(measure(sock), f)
                code = 0
            except Exception as e:  # noqa: BLE001 - said, and the parent finds no figures
                print("child:", repr(e), flush=True)
            os._exit(code)
        os.close(wr)
        with os.fdopen(rd) as f:
            text = f.read()
        os.waitpid(pid, 0)
        if not text:
            log.seek(0)
            td.check(False, "the unprivileged daemon's client got no figures: " + log.read()[-2000:])
            return None
        return json.loads(text)
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def proc_status(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
    except OSError:
        return {}


def spawner_of(c):
    return c.call({"id": "st", "type": "status"}).get("spawner") or {}


def case_spawner():
    """The spawner: small, holding nothing of the daemon's, the inits'
    parent the daemon; killed or wedged, it is restarted (counted, logged)
    and the next job runs; it dies with the daemon."""
    empty = tempfile.mkdtemp(prefix="sbd-rec-tc-")
    d = td.Daemon("--jobs", "1", "--no-cache", "--toolchains", empty)
    check = td.check
    try:
        c = td.Client(d.sock)
        sp = spawner_of(c)
        pid = sp.get("pid")
        check(isinstance(pid, int) and pid > 0 and sp.get("restarts") == 0, f"status' spawner: {sp}")
        if not isinstance(pid, int) or pid <= 0:
            return
        st = proc_status(pid)
        check(st.get("PPid") == str(d.proc.pid), f"the spawner's parent is the daemon: {st.get('PPid')}")
        check(td.open_cmdline(pid) == b"surgebox-spawner\0", f"its command line: {td.open_cmdline(pid)}")
        anon = int(st.get("RssAnon", "0 kB").split()[0])
        print(f"spawner pid {pid}: VmRSS {st.get('VmRSS')}, RssAnon {anon} kB", flush=True)
        # ASan's runtime (shadow memory, its allocator) takes ~4 MB in every
        # process of the sanitized build: the bound is for what we put there
        try:
            sanitized = "libasan" in open(f"/proc/{pid}/maps").read()
        except OSError:
            sanitized = False
        bound = 8192 if sanitized else 1024
        check(0 < anon <= bound, f"the spawner's anonymous memory: {anon} kB (at most {bound}"
                                 f"{', ASan build' if sanitized else ''})")
        fds = {}
        for fd in os.listdir(f"/proc/{pid}/fd"):
            fds[int(fd)] = os.readlink(f"/proc/{pid}/fd/{fd}")
        check(sorted(fds) == [0, 1, 2, 3] and all(fds[i] == "/dev/null" for i in (0, 1, 2)) and
              fds[3].startswith("socket:"), f"the spawner holds its socket and /dev/null only: {fds}")
        # a running job's init is the daemon's child
        c.send(td.exec_req("sleeper", ["sh", "-c", "sleep 3 # init-parent-marker"]))
        init = None  # pid 1 of its namespace (the program shows the init's cmdline too until its exec)
        deadline = time.time() + 20
        while time.time() < deadline and init is None:
            for p in td.sandbox_procs("surgebox-init"):
                if proc_status(p).get("NSpid", "").split()[-1:] == ["1"]:
                    init = p
            time.sleep(0.02)
        check(init is not None and proc_status(init).get("PPid") == str(d.proc.pid),
              f"the sandbox init {init}'s parent: {proc_status(init).get('PPid') if init else None}")
        r = c.recv(60)
        check(r.get("status") == "ok", f"the job beside: {r.get('status')} {r.get('error')}")
        # killed while idle: the next job runs on a fresh one
        os.kill(pid, 9)
        time.sleep(0.2)
        r = c.call(td.exec_req("after-kill", ["/bin/echo", "hi"]), timeout=60)
        check(r.get("status") == "ok" and r["steps"][0]["stdout"] == "hi\n", f"job after the kill: {r}")
        sp2 = spawner_of(c)
        check(sp2.get("restarts") == 1 and sp2.get("pid") not in (None, pid) and sp2.get("last_restart"),
              f"restart counted: {sp2}")
        check("spawner restarted" in d.logtext(), "the restart is logged")
        # wedged: no answer in 10 s, killed, the job fails saying so, the next one runs
        os.kill(sp2["pid"], 19)
        r = c.call(td.exec_req("wedged", ["/bin/true"]), timeout=60)
        check(r.get("status") == "internal_error" and "spawner" in json.dumps(r), f"job on a wedged spawner: {r}")
        r = c.call(td.exec_req("after-wedge", ["/bin/true"]), timeout=60)
        check(r.get("status") == "ok", f"job after the wedge: {r.get('status')} {r.get('error')}")
        sp3 = spawner_of(c)
        check(sp3.get("restarts") == 2, f"second restart counted: {sp3}")
        m = c.call({"id": "m", "type": "metrics"}).get("text", "")
        check("surgebox_spawner_restarts_total 2" in m, "metrics count the restarts")
        last = sp3.get("pid")
    finally:
        d.stop()
    time.sleep(0.5)
    check(not isinstance(last, int) or not os.path.exists(f"/proc/{last}") or
          proc_status(last).get("State", "").startswith("Z"), f"the spawner {last} outlives the daemon")


def summary(ph):
    rss = [x["rss"] or 0 for x in ph["true"]]
    cpu = [x["cpu"] or 0 for x in ph["true"]]
    pid1 = [int(x["stdout"].split()[1]) if x["stdout"].startswith("VmRSS") else -1 for x in ph["pid1"]]
    bad = [x for part in ("true", "limited", "pid1") for x in ph[part] if x["status"] != "ok" or x["step"] != "ok"]
    return {"rss_max": max(rss), "rss_min": min(rss), "cpu_median": statistics.median(cpu), "cpu_max": max(cpu),
            "pid1_vmrss_kb": max(pid1), "not_ok": len(bad), "first_not_ok": bad[:1],
            "memory_limit": sum(1 for x in ph["limited"] if x["step"] == "memory_limit")}


def main():
    td.BIN = sys.argv[1]
    kind = sys.argv[2]
    measure_only = "--measure" in sys.argv[3:]
    if os.geteuid() != 0:
        print("SKIPPED: the daemon tests run as root (the user case drops to uid 4242 itself)")
        sys.exit(td.SKIP)
    if os.getpid() != 1:
        print("refusing to run outside the unshare wrapper (pid is not 1)")
        sys.exit(2)
    if kind == "spawner":
        case_spawner()
        if td.failures:
            sys.exit(1)
        print("PASS")
        return
    got = run_user() if kind == "user" else run_root(kind)[0]
    if got is None:
        sys.exit(1)
    a, b = summary(got["alone"]), summary(got["beside"])
    print(json.dumps({"case": kind, "alone": a, "beside": b, "big_output": got["big_output"]}), flush=True)
    if measure_only:
        return
    if b["cpu_median"] > a["cpu_median"] * 1.5 + 0.001:
        # Another test on the other core can slow one whole phase (CI: 6.5 against 3.3 ms under
        # ASan, beside records_v2.pool0; 2 of 2 passed alone). The daemon's own cost beside a big
        # request shows in every measurement (the clones of the daemon gave 2-4x); a phase the
        # machine slowed does not come back: both phases once more, and the bound on the second.
        print("NOTE: cpu beside over the bound; measuring both phases again", flush=True)
        again = run_user() if kind == "user" else run_root(kind)[0]
        if again is None:
            sys.exit(1)
        a2, b2 = summary(again["alone"]), summary(again["beside"])
        print(json.dumps({"case": kind, "again": True, "alone": a2, "beside": b2}), flush=True)
        a["cpu_median"], b["cpu_median"] = a2["cpu_median"], b2["cpu_median"]
    check = td.check
    check(got["big_output"] == "ok", f"the 16 MiB non-UTF-8 output job: {got['big_output']}")
    for name, s in (("alone", a), ("beside a big request", b)):
        check(s["not_ok"] == 0, f"{name}: {s['not_ok']} do-nothing jobs not ok, first {s['first_not_ok']}")
        check(s["memory_limit"] == 0, f"{name}: {s['memory_limit']} of {N_LIMITED} do-nothing jobs under a 16 MiB "
                                      "limit ended memory_limit")
        check(0 < s["pid1_vmrss_kb"] <= 8 * 1024, f"{name}: /proc/1/status inside shows VmRSS "
                                                  f"{s['pid1_vmrss_kb']} kB (the daemon's size?)")
    check(b["rss_max"] <= a["rss_max"] * 1.25 + 1024,
          f"max_rss_kb beside a big request {b['rss_max']} kB against {a['rss_max']} kB alone")
    check(b["cpu_median"] <= a["cpu_median"] * 1.5 + 0.001,
          f"cpu_time_s beside a big request (median) {b['cpu_median']} s against {a['cpu_median']} s alone")
    if td.failures:
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
