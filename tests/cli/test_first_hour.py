#!/usr/bin/env python3
"""The first hour, again (issue 36's numbered list): each case reproduces one
or a few points as a user meets them and asserts the key words, the exit
status and, for a mistyped name, the suggestion. Written by hand; every case
failed on commit ab9ce63.

usage: test_first_hour.py BIN_DIR CASE [SEED]   (inside the unshare wrapper,
like test_cli.py, whose helpers it uses)."""
import json
import os
import re
import shutil
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli as T  # noqa: E402  (BIN, run, check, tmpdir, write, Daemon)

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SURGE = os.environ.get("SURGE_DATA") or os.path.join(os.path.dirname(SRC), "shared", "surge")  # ../shared/surge, as CMake's
check, run, write, tmpdir = T.check, T.run, T.write, T.tmpdir


def err(p):
    return p.stderr.decode(errors="replace")


def one_line(p, rc, *words):
    """Exit rc, and stderr one line holding every word."""
    lines = err(p).strip().splitlines()
    return p.returncode == rc and len(lines) == 1 and all(w in lines[0] for w in words)


def need_surge():
    if not os.path.exists(os.path.join(SURGE, "cl.json")):
        T.skip("no SURGE data at " + SURGE)


# ---------------------------------------------------------------- no daemon

def case_eval_execute_name():
    """3, 30: eval --execute answers as itself; verify --benchmark surge's
    --help lists neither --execute nor --references."""
    t = tmpdir()
    p = run(["eval", "--execute", "--bogus"])
    check(one_line(p, 1, "surgebox eval", "'--bogus'") and "verify" not in err(p),
          f"eval --execute --bogus: {p.returncode} {err(p)!r}")
    p = run(["eval", "--execute", "--data", t, "--predictions", os.path.join(t, "p.jsonl"), "--shard", "1/2"])
    check(p.returncode == 1 and err(p).startswith("eval: ") and "--out" in err(p),
          f"eval --execute --shard without --out: {p.returncode} {err(p)!r}")
    p = run(["verify", "--benchmark", "surge", "--help"])
    out = p.stdout.decode()
    listed = re.findall(r"^\s+(?:-\w, )?--([a-z-]+)", out, re.M)
    check(p.returncode == 0 and "execute" not in listed and "references" not in listed and "predictions" in listed,
          f"verify --benchmark surge --help: {out!r}")
    p = run(["eval", "--execute", "--help"])
    check(p.returncode == 0 and p.stdout.decode().startswith("usage: surgebox eval"), f"eval --execute --help: {p.stdout[:80]!r}")


def case_exit_statuses():
    """2: one kind of mistake, one status: an input that cannot be read is 2
    in every command (exec, trace and eval --execute said 1)."""
    t = tmpdir()
    gone = os.path.join(t, "gone.py")
    write(t, "p.jsonl", '{"subset": "ml", "index": 0, "prediction": "1"}\n')
    for args in (["exec", gone, "--", "python3", "gone.py"], ["exec", "--stdin", gone, "--", "true"], ["trace", gone],
                 ["eval", "--execute", "--data", t, "--predictions", gone],
                 ["eval", "--data", t, "--predictions", gone], ["bins", "--data", gone],
                 ["regen", "--data", os.path.join(t, "nodir"), "--subset", "cl"],
                 ["trace-dataset", "--programs", gone], ["batch", gone]):
        p = run(args, env=dict(os.environ, SURGEBOX_SOCKET=os.path.join(t, "none.sock")))
        check(p.returncode == 2 and p.stderr, f"surgebox {' '.join(args)}: exit {p.returncode} {err(p)!r}")
    p = run(["trace", "--format", "xml", gone])  # the command line itself: 1
    check(p.returncode == 1, f"trace --format xml: {p.returncode}")


def case_json_words():
    """4: unreadable JSON in words with its line and column; a missing
    directory named as such."""
    t = tmpdir()
    write(t, "data/ml.json", '[\n  {"question": "x",\n   "answer": 1,,\n]\n')
    write(t, "p.jsonl", '{"subset": "ml", "index": 0, "prediction": "1"}\n')
    p = run(["eval", "--data", os.path.join(t, "data"), "--predictions", os.path.join(t, "p.jsonl")])
    e = err(p)
    check(p.returncode == 2 and "not valid JSON at line 3, column" in e and "json_tokener" not in e
          and "\n\n" not in e, f"eval on a broken ml.json: {p.returncode} {e!r}")
    p = run(["bins", "--data", os.path.join(t, "data", "ml.json")])
    check(p.returncode == 2 and "not valid JSON at line 3" in err(p) and "json_" not in err(p),
          f"bins on a broken file: {p.returncode} {err(p)!r}")
    p = run(["merge", "--out", os.path.join(t, "m"), os.path.join(t, "nosuch1"), os.path.join(t, "nosuch2")])
    check(one_line(p, 2, "no such directory", "nosuch1"), f"merge of missing directories: {p.returncode} {err(p)!r}")


def case_bad_values():
    """5, 6, 8: a bad value names the value and suggests the nearest one."""
    t = tmpdir()
    write(t, "m.py", "print(1)\n")
    p = run(["trace", "--format", "line", os.path.join(t, "m.py")])
    check(one_line(p, 1, "'line'", "did you mean lines?"), f"trace --format line: {p.returncode} {err(p)!r}")
    p = run(["verify", "--benchmark", "crux"])
    check(one_line(p, 1, "'crux'", "did you mean cruxeval?"), f"verify --benchmark crux: {p.returncode} {err(p)!r}")
    p = run(["profile", "creat", "x"])
    check(one_line(p, 1, "'creat'", "did you mean create?"), f"profile creat: {p.returncode} {err(p)!r}")
    write(t, "g.json", "{}\n")
    p = run(["verify", "--benchmark", "cruxeval", "--mode", "outptu", "--generations", os.path.join(t, "g.json")])
    check(one_line(p, 1, "'outptu'", "--mode", "did you mean output?") and "required" not in err(p),
          f"--mode outptu: {p.returncode} {err(p)!r}")


def case_trace_kinds():
    """8: trace refuses a file it has no tracer for (was: python3 x.rs, exit 0);
    --help says what it traces."""
    t = tmpdir()
    write(t, "x.rs", "fn main() {}\n")
    p = run(["trace", os.path.join(t, "x.rs")])
    check(one_line(p, 1, "x.rs", "--toolchain") and not p.stdout, f"trace x.rs: {p.returncode} {err(p)!r}")
    p = run(["trace", "--toolchain", "python3.6", os.path.join(t, "x.rs")])  # 9: was a crash, "no end record"
    check(one_line(p, 1, "Python 3.7 or later"), f"trace --toolchain python3.6: {p.returncode} {err(p)!r}")
    p = subprocess.run([T.SURGEBOX, "--help"], capture_output=True)
    line = [x for x in p.stdout.decode().splitlines() if x.strip().startswith("trace ")]
    check(line and "a Python FILE" not in line[0] and "C" in line[0], f"surgebox --help's trace line: {line}")


def case_partial_generations():
    """7: a generations file without every sample names --samples/--limit."""
    data = os.path.join(os.path.dirname(SURGE), "cruxeval", "cruxeval.jsonl")
    if not os.path.exists(data):
        T.skip("no CRUXEval data at " + data)
    t = tmpdir()
    g = write(t, "g.json", '{"sample_0": ["f(1)"]}\n')
    p = run(["verify", "--benchmark", "cruxeval", "--mode", "output", "--generations", g, "--data", data],
            env=dict(os.environ, SURGEBOX_SOCKET=os.path.join(t, "none.sock")))
    check(p.returncode in (1, 2) and "has no generations" in err(p) and "--samples" in err(p) and "--limit" in err(p),
          f"partial generations: {p.returncode} {err(p)!r}")


def case_profile_unknown():
    """16: an unknown profile without a definition is not told to create it."""
    t = tmpdir()
    p = run(["profile", "show", "nope", "--dir", t])
    e = err(p)
    check(p.returncode == 2 and "nope" in e and "profile create nope" not in e and "no definition" in e,
          f"profile show nope: {p.returncode} {e!r}")
    p = run(["profile", "show", "surge-2025", "--dir", t])  # a definition ships: create is the way
    check(p.returncode == 2 and "profile create surge-2025" in err(p), f"profile show surge-2025 (absent): {err(p)!r}")


def case_status_started():
    """1: a status call that had to start a daemon says so (it reported
    "up 0.075 s" as if one had been running)."""
    t = tmpdir()
    env = dict(os.environ, SURGEBOX_SOCKET_DIR=t, SURGEBOX_IDLE_TIMEOUT="0")
    env.pop("SURGEBOX_SOCKET", None)
    p = run(["status"], env=env)
    check(p.returncode == 0 and "no daemon was running" in err(p) and "started" in err(p),
          f"status with no daemon: {p.returncode} {err(p)!r}")
    p = run(["status", "--json"], env=env)
    doc = json.loads(p.stdout or b"{}")
    check(p.returncode == 0 and doc.get("started_by_this_call") is True, f"status --json: {p.stdout[:200]!r}")


def case_regen_only():
    """10, 27: regen --only with an index no subset has, or not a number, is
    refused and runs nothing; a refused run leaves no --out behind.
    dr-matrix's --only is the same option (it took "0,abc" and ran)."""
    need_surge()
    t = tmpdir()
    env = dict(os.environ, SURGEBOX_SOCKET=os.path.join(t, "none.sock"))
    out = os.path.join(t, "out")
    p = run(["regen", "--data", SURGE, "--subset", "dr", "--only", "500", "--out", out], env=env)
    check(one_line(p, 1, "--only 500", "DR has 200 items") or one_line(p, 1, "--only 500", "dr has 200 items"),
          f"--only 500 on DR: {p.returncode} {err(p)!r}")
    p = run(["regen", "--data", SURGE, "--subset", "dr", "--only", "0,abc", "--out", out], env=env)
    check(one_line(p, 1, "'0,abc'", "--only"), f"--only 0,abc: {p.returncode} {err(p)!r}")
    p = run(["dr-matrix", "--data", SURGE, "--only", "0,abc"], env=env)
    check(one_line(p, 1, "'0,abc'", "--only"), f"dr-matrix --only 0,abc: {p.returncode} {err(p)!r}")
    p = run(["regen", "--data", SURGE, "--subset", "dr", "--only", "0", "--out", out], env=env)
    check(p.returncode == 2 and "none.sock" in err(p) and not os.path.exists(out),
          f"a run refused (no daemon) leaves no --out: {p.returncode} {os.path.exists(out)} {err(p)!r}")


def case_cosmetics():
    """33: doctor --help without a 404-character line."""
    p = run(["doctor", "--help"])
    longest = max(len(x) for x in p.stdout.decode().splitlines())
    check(p.returncode == 0 and longest <= 160, f"doctor --help's longest line: {longest}")


def case_user_profiles():
    """20: unprivileged, the private daemon looks for profiles where
    `surgebox profile list` does (it looked in root's /var/lib)."""
    t = tmpdir()
    os.chmod(t, 0o777)
    home = os.path.join(t, "home")
    os.makedirs(home)
    os.chown(home, 4242, 4242)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgroups([])
            os.setgid(4242)
            os.setuid(4242)
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "SURGEBOX_SOCKET_DIR": home,
                   "SURGEBOX_IDLE_TIMEOUT": "0"}
            p = subprocess.run([T.SURGEBOX, "exec", "--profile", "nope", "--", "true"], env=env, capture_output=True,
                               stdin=subprocess.DEVNULL, timeout=300, cwd=home)
            q = subprocess.run([T.SURGEBOX, "profile", "list", "--json"], env=env, capture_output=True,
                               stdin=subprocess.DEVNULL, timeout=60, cwd=home)
            os.write(w, json.dumps([p.returncode, p.stderr.decode(errors="replace"), q.stdout.decode()]).encode())
        finally:
            os._exit(0)
    os.close(w)
    got = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        got += chunk
    os.waitpid(pid, 0)
    rc, e, listed = json.loads(got or b'[null, "", ""]')
    want = os.path.join(home, ".local", "share", "surgebox", "profiles")
    check(rc == 2 and ("no profile nope in " + want) in e and "/var/lib/surgebox" not in e,
          f"the private daemon's profiles directory as uid 4242: {rc} {e!r}")


def case_profile_hint():
    """15: a toolchain missing on the host but packaged by a profile here
    names the profile to add (it said "install: apt-get install g++", and for
    julia "surgebox profile create surge-2025" of a profile that exists). A
    private profiles directory holds a fake profile: only its manifest."""
    t = tmpdir()
    profiles = os.path.join(t, "profiles")
    write(profiles, "surge-2025/manifest.json", json.dumps({"name": "surge-2025", "format": 1,
                                                              "package_versions": {"g++-9": "9.3.0-22", "julia": "1.5.3"}}))
    os.environ["SURGEBOX_PROFILES"] = profiles
    d = T.Daemon()
    try:
        p = run(["toolchains", "--json"], env=d.env)
        have = [x["name"] for x in json.loads(p.stdout)["toolchains"] if x.get("available")] if p.returncode == 0 else []
        src = write(t, "m.cpp", "int main() {}\n")
        if "g++-9" in have or "julia" in have:
            T.skip("g++-9 or julia is installed on this host")
        for tc, f in (("g++-9", src), ("julia", write(t, "m.jl", "println(1)\n"))):
            p = run(["exec", "--toolchain", tc, f], env=d.env)
            check(p.returncode != 0 and "add --profile surge-2025" in err(p) and "apt-get" not in err(p)
                  and "profile create" not in err(p), f"--toolchain {tc}: {p.returncode} {err(p)!r}")
        p = run(["exec", "--toolchain", "g++-8", src], env=d.env)  # no profile has it: the install hint as before
        check(p.returncode != 0 and "install" in err(p) and "--profile" not in err(p), f"g++-8: {err(p)!r}")
    finally:
        d.stop()


def case_report_rows():
    """11, 14: the report page prints '-' where nothing ran (it printed 0.0%
    and 0.000) and lists a subset's groups sorted, numbers as numbers (it
    listed them in order of first appearance). OUT is written by hand: three
    DR items in three groups, none of which ran (their toolchain missing)."""
    t = tmpdir()
    out = os.path.join(t, "out")
    groups = ["g++-C++17--O0", "g++-C++11--O1", "g++-C++11--O0"]
    items = [{"exec": {"group": g, "regenerated": False, "class": "missing_toolchain", "missing": "g++-9"}} for g in groups]
    write(out, "dr.json", json.dumps(items))
    p = run(["report", out])
    check(p.returncode == 0, f"report: {p.returncode} {err(p)!r}")
    page = open(os.path.join(out, "report.html")).read() if p.returncode == 0 else ""
    table = page.split('id="fidelity-table"', 1)[-1].split("</table>", 1)[0]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in re.findall(r"<tr class=\"(?:subset|group)\">(.*?)</tr>", table)]
    check(len(rows) == 4 and all(r[2] == "0" and r[4] == r[6] == r[7] == "-" for r in rows),
          f"'-' in the rates and Jaccard of rows where nothing ran: {rows}")
    check([r[0] for r in rows[1:]] == ["g++-C++11--O0", "g++-C++11--O1", "g++-C++17--O0"],
          f"groups sorted: {[r[0] for r in rows[1:]]}")
    env = page.split('id="environment-table"', 1)[-1].split("</table>", 1)[0]
    names = re.findall(r'<tr class="group"><td class="l">(.*?)</td>', env)
    check(names == ["g++-C++11--O0", "g++-C++11--O1", "g++-C++17--O0"], f"environment's groups sorted: {names}")


def case_bins_one_set():
    """34: every column of bins counts one item set (it counted 47, 140 and
    150 items in one table), and killed runs are in none, counted instead.
    tc.json by hand: items 0-3 and 8 timed by SURGE and here (8 without
    inproc_cpu_s), 4 timed out, 5 host-killed, 6 never ran, 7 timed here
    only."""
    t = tmpdir()

    def rec(status, regenerated, cls, complete=True, **extra):
        return dict({"status": status, "regenerated": regenerated, "group": "Python", "class": cls,
                     "complete": complete}, **extra)
    items = [{"custom_features": {"time": "0.5 seconds"}} for _ in range(9)]
    for i in range(4):
        items[i]["exec"] = rec("ok", True, None, inproc_cpu_s=0.5, cpu_time_s=0.6, matched="exact")
    items[4]["exec"] = rec("timeout", False, "timeout", cpu_time_s=9.9)
    items[5]["exec"] = rec("host_killed", False, "host_killed", complete=False, cpu_time_s=3.0)
    del items[7]["custom_features"]
    items[7]["exec"] = rec("ok", True, None, cpu_time_s=0.1, matched="exact")
    items[8]["exec"] = rec("ok", True, None, cpu_time_s=0.4, matched="exact")
    data = write(t, "tc.json", json.dumps(items))
    p = run(["bins", "--data", data, "--json"])
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    cols = {k: (doc.get(k) or {}).get("items") for k in ("published", "inproc_cpu_s", "cpu_time_s")}
    sums = {k: sum((doc.get(k) or {}).get("histogram", [])) for k in ("published", "cpu_time_s")}
    check(cols == {"published": 5, "inproc_cpu_s": None, "cpu_time_s": 5} and sums == {"published": 5, "cpu_time_s": 5},
          f"one item set (0-3, 8) in every column, inproc_cpu_s (missing on 8) left out: {cols} {sums}")
    check(doc.get("not_regenerated") == 3 and (doc.get("item_set") or {}).get("timed_here_only") == 1,
          f"killed and unrun items counted, not binned: {doc.get('not_regenerated')} {doc.get('item_set')}")
    p = run(["bins", "--data", data])
    out = p.stdout.decode()
    check(p.returncode == 0 and "same 5 item(s)" in out and "timeout 1" in out and "host_killed 1" in out
          and "inproc_cpu_s left out" in out and "1 item(s) timed here but not by SURGE" in out, f"bins says which: {out!r}")


def as_user(argv_list, home, extra_env=None, uid=4242):
    """Run each argv (surgebox's arguments) as uid in its own HOME; [rc, stdout, stderr] each."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "SURGEBOX_SOCKET_DIR": home,
                   "SURGEBOX_IDLE_TIMEOUT": "0"}
            env.update(extra_env or {})
            outs = []
            for args in argv_list:
                p = subprocess.run([T.SURGEBOX] + args, env=env, capture_output=True, stdin=subprocess.DEVNULL,
                                   timeout=300, cwd="/")
                outs.append([p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")])
            os.write(w, json.dumps(outs).encode())
        finally:
            os._exit(0)
    os.close(w)
    got = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        got += chunk
    os.waitpid(pid, 0)
    return json.loads(got or b"[]")


def user_home(t, mode=0o755):
    os.chmod(t, 0o777)
    home = os.path.join(t, "home")
    os.makedirs(home)
    os.chown(home, 4242, 4242)
    os.chmod(home, mode)
    return home


def case_doctor_unprivileged():
    """19: doctor as an unprivileged user rates the pool off and the one uid
    of user-namespace mode as expected (they were warnings), and a cgroup
    backend of "none" as a problem (it was "ok")."""
    t = tmpdir()
    home = user_home(t)
    outs = as_user([["doctor", "--json"]], home)
    rc, out, e = outs[0] if outs else [None, "", ""]
    try:
        checks = {c["check"]: c for c in json.loads(out)["checks"]}
    except (ValueError, KeyError, TypeError):
        checks = {}
    pool, cg, uids = checks.get("pool", {}), checks.get("cgroup backend", {}), checks.get("uid range", {})
    if "user-namespace mode" not in pool.get("detail", ""):
        T.skip("the daemon as uid 4242 is not in user-namespace mode here: " + repr(pool))
    check(pool.get("result") == "ok" and uids.get("result") == "ok" and "expected" in pool.get("detail", ""),
          f"pool and uid range as expected unprivileged: {pool} {uids}")
    check(cg.get("result") == ("warn" if cg.get("detail") == "on: none" else "ok") and cg.get("detail"),
          f"cgroup backend rated by what it is: {cg}")


def case_unwritable_home():
    """18: unprivileged with a HOME it cannot write, the daemon's detection
    cache goes to a per-uid 0700 directory in $TMPDIR (it went nowhere, and
    detection ran again at every start), and a lingering daemon's start-up
    messages go to its log file, not the user's terminal."""
    t = tmpdir()
    os.chmod(t, 0o777)
    home = os.path.join(t, "home")  # root's: 4242 cannot write it
    os.makedirs(home)
    sockets, tmp = os.path.join(t, "sockets"), os.path.join(t, "tmp")
    for d in (sockets, tmp):
        os.makedirs(d)
        os.chown(d, 4242, 4242)
        os.chmod(d, 0o700)
    outs = as_user([["toolchains", "--json"]], home, {"SURGEBOX_SOCKET_DIR": sockets, "TMPDIR": tmp,
                                                      "SURGEBOX_IDLE_TIMEOUT": "30"})
    rc, out, e = outs[0] if outs else [None, "", ""]
    cache = os.path.join(tmp, "surgebox-cache-4242")
    st = os.lstat(cache) if os.path.isdir(cache) else None
    check(rc == 0 and st is not None and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == 4242
          and os.path.exists(os.path.join(cache, "toolchains.json")),
          f"the detection cache in $TMPDIR/surgebox-cache-4242 (0700, 4242's): {rc} {st} {e[-300:]!r}")
    check("surgeboxd" not in e and "warn" not in e, f"no daemon message on the user's terminal: {e!r}")
    logs = [f for f in os.listdir(sockets) if f.endswith(".log")]
    check(logs, f"the lingering daemon's log beside its socket: {os.listdir(sockets)}")


def case_eval_absent_subset():
    """31: predictions for a subset the data directory has no items of are
    said in one line with counts (it printed a line per prediction and
    counted them as "unknown subset")."""
    need_surge()
    t = tmpdir()
    data = os.path.join(t, "out")
    os.makedirs(data)
    shutil.copy(os.path.join(SURGE, "ml.json"), data)
    lines = ['{"subset": "ml", "index": 0, "prediction": "1"}']
    lines += ['{"subset": "cl", "index": %d, "prediction": "x"}' % i for i in range(30)]
    lines += ['{"subset": "fl", "index": %d, "prediction": "x"}' % i for i in range(2)]
    preds = write(t, "p.jsonl", "\n".join(lines) + "\n")
    p = run(["eval", "--data", data, "--predictions", preds])
    e = err(p)
    said = [x for x in e.splitlines() if "cl 30" in x]
    check(len(said) == 1 and "fl 2" in said[0] and "regen --subset cl,fl" in said[0] and "unknown subset" not in e
          and "line 5" not in e and len(e.splitlines()) < 6, f"one line for 32 predictions of absent subsets: {e!r}")
    p = run(["eval", "--data", data, "--predictions", preds, "--json"])
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = {}
    blob = json.dumps(doc)
    check('"subset_not_in_data": {"cl": 30, "fl": 2}' in blob, f"--json counts them: {blob[-600:]}")


def case_exec_hint():
    """29: exec FILE without a PROGRAM names the toolchain to use."""
    t = tmpdir()
    write(t, "hello.py", "print('hi')\n")
    p = run(["exec", "hello.py"], cwd=t)
    check(one_line(p, 1, "--toolchain python3 hello.py"), f"exec hello.py: {p.returncode} {err(p)!r}")


# ---------------------------------------------------------------- with a daemon

def case_exec_notes(d):
    """17, 22, 36: plain mode says a pids limit hit and a warm request that ran
    cold; a file without execute permission is 126 as in a shell; a warm
    request naming python3 (no path) starts warm."""
    t = tmpdir()
    write(t, "x.sh", "#!/bin/sh\necho never\n")
    os.chmod(os.path.join(t, "x.sh"), 0o644)
    p = run(["exec", "--exit-code", "program", "x.sh", "--", "./x.sh"], env=d.env, cwd=t)
    check(p.returncode == 126 and b"never" not in p.stdout, f"not executable: 126, got {p.returncode} {err(p)!r}")
    fork = ["--pids-limit", "3", "--", "sh", "-c", "for i in 1 2 3 4 5 6; do sleep 2 & done; wait; echo done"]
    p = run(["exec", "--json"] + fork, env=d.env)
    doc = json.loads(p.stdout or b"{}")
    hit = any(s.get("pids_limit_hit") for s in doc.get("steps", [doc]))
    check(hit or doc.get("pids_limit_hit"), f"the pids limit is hit: {p.stdout[:300]!r}")
    p = run(["exec"] + fork, env=d.env)
    check(p.returncode == 0 and "pids limit" in err(p) and "--pids-limit" in err(p), f"said in plain mode: {err(p)!r}")
    write(t, "hello.py", "print('hi')\n")
    p = run(["exec", "--json", "--warm", "hello.py", "--", "/usr/bin/python3", "hello.py"], env=d.env, cwd=t)
    start = (json.loads(p.stdout or b"{}").get("steps") or [{}])[-1].get("enforced", {}).get("start", "")
    if not start.startswith("warm"):
        T.skip("no warm start on this machine: " + start)
    p = run(["exec", "--json", "--warm", "hello.py", "--", "python3", "hello.py"], env=d.env, cwd=t)
    start = (json.loads(p.stdout or b"{}").get("steps") or [{}])[-1].get("enforced", {}).get("start", "")
    check(start.startswith("warm"), f"--warm -- python3 (by name) starts warm: {start!r}")
    p = run(["exec", "--warm", "hello.py", "--", "python3", "-I", "hello.py"], env=d.env, cwd=t)
    check(p.returncode == 0 and p.stdout == b"hi\n" and "ran cold" in err(p) and "warm refused" in err(p),
          f"--warm that ran cold says so: {err(p)!r}")


def case_suggestions(d):
    """5: the nearest name for a toolchain typed without '+', a standard given
    by its number, GCC's old name of c++23, and the protocol's fields."""
    T.need_gxx(d)
    t = tmpdir()
    src = write(t, "m.cpp", "int main() {}\n")
    p = run(["exec", "--toolchain", "gpp", src], env=d.env)
    check(one_line(p, 2, 'did you mean "g++"?'), f"--toolchain gpp: {p.returncode} {err(p)!r}")
    p = run(["exec", "--toolchain", "g++", "--std", "17", src], env=d.env)
    check(one_line(p, 2, "std=17", "did you mean std=c++17?"), f"--std 17: {p.returncode} {err(p)!r}")
    p = run(["exec", "--toolchain", "g++", "--std", "c++2b", src], env=d.env)
    check(one_line(p, 2, "c++2b", "c++23") and "did you mean std=c++20" not in err(p), f"--std c++2b: {err(p)!r}")
    inp = write(t, "in.jsonl", '{"steps": [{"argv": ["true"]}], "limts": {"time_s": 1}}\n'
                               '{"steps": [{"argv": ["true"], "limits": {"time": 1}}]}\n')
    p = run(["batch", inp, "--order", "input"], env=d.env)
    got = [json.loads(x).get("error", {}).get("message", "") for x in p.stdout.decode().splitlines()]
    check(len(got) == 2 and 'did you mean "limits"?' in got[0] and 'did you mean "time_s"?' in got[1],
          f"protocol fields limts, limits.time: {got}")


def case_report_paths(d):
    """12, 33: report refuses SURGE's published data (it wrote a page of
    "n 0" into the dataset); OUT/ gives OUT/report.html, not OUT//."""
    need_surge()
    t = tmpdir()
    p = run(["report", SURGE], env=d.env)
    check(one_line(p, 2, "no regenerated item") and not os.path.exists(os.path.join(SURGE, "report.html")),
          f"report on the published data: {p.returncode} {err(p)!r}")
    out = os.path.join(t, "out")
    p = run(["regen", "--data", SURGE, "--subset", "cl", "--only", "0", "--out", out], env=d.env)
    check(p.returncode == 0, f"regen --only 0: {p.returncode} {err(p)[-300:]!r}")
    p = run(["report", out + "/"], env=d.env)
    said = err(p) + p.stdout.decode()
    check(p.returncode == 0 and "//report.html" not in said and os.path.exists(os.path.join(out, "report.html")),
          f"report OUT/: {p.returncode} {said!r}")


def case_regen_tables(d):
    """11, 13, 14: regen's environment names only the groups it runs; its
    table prints "-" where nothing ran (not 0.0%), "1 item", and no empty
    heading."""
    need_surge()
    t = tmpdir()
    out = os.path.join(t, "out")
    p = run(["regen", "--data", SURGE, "--subset", "cl,fl", "--only", "0", "--out", out], env=d.env)
    e = err(p) + p.stdout.decode()
    check(p.returncode == 0 and not re.search(r"^regen: (BG|DR|ML) ", e, re.M) and "surge-2025" not in e,
          f"no BG/DR/ML environment lines, no profile's word: {e!r}")
    rows = {x.split()[0]: x for x in e.splitlines() if re.match(r"^(cl|fl) +\d", x)}
    fl = rows.get("fl", "")
    check(fl and (" 0.0%" in fl) == (fl.split()[2] != "0"), f"fl's row: '-' where nothing ran: {fl!r}")
    check(" 1 items" not in e and "mismatches by class (item indices):\n\n" not in e
          and not e.rstrip().endswith("(item indices):"), f"no '1 items', no empty heading: {e[-400:]!r}")


def case_regen_eta(d):
    """26: regen's progress line gives an ETA from the plan's cost per item
    from the start (it said "ETA unknown" until an item finished, then a
    rate estimate)."""
    need_surge()
    t = tmpdir()
    p = run(["regen", "--data", SURGE, "--subset", "dr", "--only", "0,1", "--out", os.path.join(t, "out")], env=d.env)
    e = err(p)
    first = [x for x in e.splitlines() if re.match(r"^regen: 0/2 done", x)]
    check(p.returncode == 0 and first and re.search(r"ETA ~\d+s \(the plan's cost per item", first[0])
          and "ETA unknown" not in e, f"the plan's ETA from the start: {p.returncode} {e[-800:]!r}")


def case_refused_uid(d):
    """21: ping from a uid the daemon refuses says why (it said "no answer
    from the daemon"), as exec does."""
    os.chmod(d.dir, 0o755)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgroups([])
            os.setgid(0)  # group root: the 0660 socket lets it connect
            os.setuid(4242)
            outs = []
            for args in (["ping"], ["exec", "--", "true"]):
                p = subprocess.run([T.SURGEBOX] + args, env=d.env, capture_output=True, stdin=subprocess.DEVNULL,
                                   timeout=60, cwd="/")
                outs.append([p.returncode, p.stderr.decode(errors="replace")])
            os.write(w, json.dumps(outs).encode())
        finally:
            os._exit(0)
    os.close(w)
    got = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        got += chunk
    os.waitpid(pid, 0)
    outs = json.loads(got or b"[]")
    for (rc, e), what in zip(outs, ("ping", "exec")):
        check(rc == 2 and "not allowed to use this daemon" in e and "no answer" not in e, f"{what} as uid 4242: {rc} {e!r}")
    check(len(outs) == 2, f"both ran: {outs}")


def case_exec_interrupt(d):
    """28: Ctrl-C during exec cancels the job and shows what it printed so far
    (it showed nothing), exit 130."""
    import signal
    import time
    p = subprocess.Popen([T.SURGEBOX, "exec", "--", "sh", "-c", "echo started; echo to-err >&2; sleep 60"], env=d.env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    time.sleep(3)  # not a timing assert: the job must have started before the interrupt
    p.send_signal(signal.SIGINT)
    out, e = p.communicate(timeout=60)
    e = e.decode(errors="replace")
    check(p.returncode == 130 and out == b"started\n" and "to-err" in e and "cancel" in e,
          f"Ctrl-C: {p.returncode} {out!r} {e!r}")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}

if __name__ == "__main__":
    fn = CASES[sys.argv[2]]
    if fn.__code__.co_argcount:
        T.with_daemon(fn)
    else:
        fn()
    if T.failures:
        print(f"{len(T.failures)} check(s) failed")
        sys.exit(1)
