#!/usr/bin/env python3
"""`surgebox batch` against a real daemon.

Run as: test_batch.py BIN_DIR CASE, inside
  unshare --mount --propagation private --pid --fork --mount-proc
(ctest does it). Each case starts its own daemon on a private socket with a
private cache directory, and runs the CLI with --no-autostart so that no
other daemon is involved.
"""
import json
import re
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))
import surgebox  # noqa: E402  the Python client, from the source tree

SKIP = 77
DEFS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "toolchains", "defs")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


class Env:
    def __init__(self, bindir, toolchains=(), daemon_args=()):
        self.bin = bindir
        self.dir = tempfile.mkdtemp(prefix="sb-batch-")
        os.chmod(self.dir, 0o755)
        self.sock = os.path.join(self.dir, "s.sock")
        self.log = open(os.path.join(self.dir, "daemon.log"), "w+")
        # only the toolchains a case uses: detecting every one into a fresh cache is slow
        tcdir = os.path.join(self.dir, "toolchains")
        os.mkdir(tcdir)
        for name in toolchains:
            shutil.copy(os.path.join(DEFS, name + ".json"), tcdir)
        self.daemon = subprocess.Popen([os.path.join(bindir, "surgeboxd"), "--socket", self.sock, "--cache-dir",
                                        os.path.join(self.dir, "cache"), "--toolchains", tcdir, "--jobs", "4", *daemon_args],
                                       stderr=self.log)
        deadline = time.time() + 120
        while time.time() < deadline:  # ready when it answers a ping (the socket exists before listen)
            try:
                with surgebox.Client(self.sock, autostart=False) as c:
                    c.ping()
                    return
            except (OSError, surgebox.SurgeboxError):
                pass
            if self.daemon.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("daemon did not start")

    def path(self, name):
        return os.path.join(self.dir, name)

    def write_in(self, lines, name="in.jsonl"):
        with open(self.path(name), "w") as f:
            for line in lines:
                f.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
        return self.path(name)

    def argv(self, *args):
        return [os.path.join(self.bin, "surgebox"), "--socket", self.sock, "--no-autostart", "batch"] + list(args)

    def run(self, *args, timeout=240):
        p = subprocess.run(self.argv(*args), capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def stop(self):
        self.daemon.send_signal(signal.SIGTERM)
        try:
            self.daemon.wait(30)
        except subprocess.TimeoutExpired:
            self.daemon.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def answers(text):
    return [json.loads(line) for line in text.splitlines()]


def sleeper(id_, seconds, out="done"):
    r = {"type": "exec", "steps": [{"name": "run", "argv": ["sh", "-c", f"sleep {seconds}; echo {out}"]}]}
    if id_ is not None:
        r["id"] = id_
    return r


def case_mixed(env):
    """Raw and toolchain-form requests, a malformed line, one without id, a repeated id, a non-exec."""
    lines = [
        {"id": "raw", "type": "exec", "steps": [{"name": "run", "argv": ["/bin/echo", "hi"]}]},
        {"id": "tc", "toolchain": "python3", "files": [{"path": "main.py", "content": "print('h\u00e9' * 2)\n"}]},
        '{"id":"broken", "steps": [',
        "",  # blank: not an item
        {"steps": [{"argv": ["sh", "-c", "echo noid; exit 3"]}]},
        {"id": "raw", "steps": [{"argv": ["true"]}]},
        {"id": "sd", "type": "shutdown"},
    ]
    inp = env.write_in(lines)
    with open(inp, "ab") as f:
        f.write(b'{"id":"latin1","steps":[{"argv":["echo","\xe9"]}]}\n')  # line 8: not UTF-8
        f.write(b'{"id":9007199254740993,"steps":[{"argv":["true"]}]}\n')  # line 9: id out of range
    rc, out, err = env.run(inp)
    print(err)
    check(rc == 0, f"exit code {rc}")
    got = answers(out)
    check(len(got) == 8, f"8 answers, got {len(got)}")
    by_line = {a.get("line"): a for a in got}
    check(sorted(by_line) == [1, 2, 3, 5, 6, 7, 8, 9], f"every non-blank line answered once: {sorted(by_line)}")
    for n in (8, 9):
        a = by_line.get(n, {})
        check(a.get("id") is None and a.get("error", {}).get("code") in ("bad_json", "bad_request")
              and f"line {n}" in a["error"]["message"], f"line {n} refused by batch itself: {a}")
    a = by_line.get(1, {})
    check(a.get("id") == "raw" and a.get("status") == "ok" and a["steps"][0]["stdout"] == "hi\n", f"raw: {a}")
    a = by_line.get(2, {})
    if a.get("status") == "toolchain_missing" or a.get("error", {}).get("code") == "unknown_toolchain":
        print("note: python3 toolchain absent, the toolchain form answered", a.get("status") or a.get("error"))
    else:
        check(a.get("id") == "tc" and a.get("status") == "ok" and a["steps"][-1]["stdout"] == "h\u00e9h\u00e9\n",
              f"toolchain form: {a}")
    a = by_line.get(3, {})
    check(a.get("id") is None and a.get("error", {}).get("code") == "bad_json" and "line 3" in a["error"]["message"],
          f"malformed line: {a}")
    a = by_line.get(5, {})
    check(a.get("id") == 5 and isinstance(a.get("id"), int) and a.get("status") == "runtime_error"
          and a["steps"][0]["stdout"] == "noid\n", f"line without id gets its line number: {a}")
    a = by_line.get(6, {})
    check(a.get("id") is None and a.get("error", {}).get("code") == "bad_request" and "line 1" in a["error"]["message"],
          f"repeated id: {a}")
    a = by_line.get(7, {})
    check(a.get("id") is None and a.get("error", {}).get("code") == "bad_request", f"non-exec type refused: {a}")
    check("error:bad_json 2" in err and "error:bad_request 3" in err and "runtime_error 1" in err,
          "the summary counts per status")
    check("jobs' CPU" in err, "the summary has CPU and wall totals")
    before = open(inp, "rb").read()
    rc, _, err = env.run(inp, "--out", inp)
    check(rc == 1 and open(inp, "rb").read() == before, f"--out the input file refused, input intact: {rc} {err}")


def case_order(env):
    """--order input writes answers in input order although they finish in reverse."""
    lines = [sleeper(f"s{i}", 3 - i, f"o{i}") for i in range(3)]
    inp = env.write_in(lines)
    rc, out, err = env.run(inp, "--concurrency", "3", "--order", "input")
    check(rc == 0, f"exit code {rc}: {err}")
    ids = [a.get("id") for a in answers(out)]
    check(ids == ["s0", "s1", "s2"], f"input order: {ids}")
    # the control: completion order really differs here (else the check above proves nothing)
    rc, out, err = env.run(inp, "--concurrency", "3", "--order", "completion")
    ids = [a.get("id") for a in answers(out)]
    check(ids == ["s2", "s1", "s0"], f"completion order: {ids}")


def case_resume(env):
    """SIGINT mid-run, then the same command: only the rest runs, each id once, a partial line repaired."""
    n = 6
    lines = [sleeper(f"r{i}", 1 if i < 2 else 4) for i in range(n)]
    inp, outp = env.write_in(lines), env.path("out.jsonl")
    p = subprocess.Popen(env.argv(inp, "--out", outp, "--concurrency", "2", "--order", "completion"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        if os.path.exists(outp) and open(outp).read().count("\n") >= 2:
            break
        time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    print(err)
    check(p.returncode == 130, f"interrupted run exits 130, got {p.returncode}")
    first = answers(open(outp).read())
    ids1 = [a["id"] for a in first]
    check(2 <= len(ids1) < n and len(set(ids1)) == len(ids1), f"a part finished, saved once each: {ids1}")
    check("resume" in err, "the interrupted run says how to resume")
    with open(outp, "a") as f:  # an answer cut short by the interruption
        f.write('{"id":"r5","type":"exec","status":"ok","ste')
    rc, _, err = env.run(inp, "--out", outp, "--concurrency", "3")
    print(err)
    check(rc == 0, f"resumed run exits 0, got {rc}")
    check(f"{len(ids1)} answered before, {n - len(ids1)} answered now" in err, "only the rest ran")
    final = answers(open(outp).read())  # every line parses: the partial one is gone
    ids = sorted(a["id"] for a in final)
    check(ids == sorted(f"r{i}" for i in range(n)), f"each id exactly once: {ids}")
    check(all(a.get("status") == "ok" for a in final), "every answer ok")
    by_id = {a["id"]: a for a in final}  # (their order may change: OUT is rewritten in input order)
    check(all(by_id.get(a["id"]) == a for a in first), "the answers of the first run are kept as they were")


def case_retry(env):
    """--retry-failed runs again the items whose answer is not ok, replacing their line."""
    lines = [{"id": "good", "steps": [{"argv": ["true"]}]},
             {"id": "bad", "steps": [{"argv": ["sh", "-c", "exit 3"]}]},
             {"id": "good2", "steps": [{"argv": ["true"]}]}]
    inp, outp = env.write_in(lines), env.path("out.jsonl")
    rc, _, err = env.run(inp, "--out", outp)
    check(rc == 0 and "0 answered before, 3 answered now" in err, f"first run: {err}")
    rc, _, err = env.run(inp, "--out", outp)
    check(rc == 0 and "3 answered before, 0 answered now" in err, f"a plain rerun runs nothing: {err}")
    rc, _, err = env.run(inp, "--out", outp, "--retry-failed", "--order", "input")
    print(err)
    check(rc == 0 and "2 answered before, 1 answered now" in err and "runtime_error 1" in err,
          f"--retry-failed reruns the failed one only: {err}")
    ids = [a["id"] for a in answers(open(outp).read())]
    check(ids == ["good", "bad", "good2"], f"its line replaced, in input order: {ids}")


def case_progress(env):
    """Without a TTY, a progress line appears while the only item is still running."""
    inp = env.write_in([sleeper("long", 5)])
    rc, out, err = env.run(inp, "--progress-interval", "1")
    print(err)
    check(rc == 0, f"exit code {rc}")
    running = [l for l in err.splitlines() if l.startswith("batch: 0/1 done, 1 running")]
    check(len(running) >= 2, f"periodic lines while nothing finished: {len(running)}")
    check(all("ETA unknown" in l for l in running), "no ETA claimed before anything finished")


def case_embedded(env):
    """No daemon on the default socket (here in SURGEBOX_SOCKET_DIR; a socket named explicitly never
    starts one): the CLI starts its private one (here with a private cache, through SURGEBOXD)."""
    wrapper = env.path("surgeboxd-private")
    with open(wrapper, "w") as f:
        f.write(f'#!/bin/sh\nexec {os.path.join(env.bin, "surgeboxd")} "$@" --cache-dir {env.path("cache2")} '
                f'--toolchains {env.path("toolchains")}\n')
    os.chmod(wrapper, 0o755)
    inp = env.write_in([sleeper(None, 0, "e1"), sleeper(None, 0, "e2")])
    sockdir = env.path("sockets")
    os.mkdir(sockdir, 0o700)
    penv = dict(os.environ, SURGEBOXD=wrapper, SURGEBOX_SOCKET_DIR=sockdir)
    penv.pop("SURGEBOX_SOCKET", None)
    p = subprocess.run([os.path.join(env.bin, "surgebox"), "batch", inp, "--order", "input"], capture_output=True,
                       text=True, timeout=120, env=penv)
    print(p.stderr)
    got = answers(p.stdout)
    check(p.returncode == 0 and [(a.get("id"), a.get("status")) for a in got] == [(1, "ok"), (2, "ok")],
          f"embedded daemon answered both: {p.returncode} {got}")
    check([a["steps"][0]["stdout"] for a in got] == ["e1\n", "e2\n"], "their output")


CASES = {"embedded": case_embedded, "mixed": case_mixed, "order": case_order, "resume": case_resume, "retry": case_retry,
         "progress": case_progress}


def case_brief(env):
    """--brief drops each step's `enforced` and `limits`; --fields keeps only the named
    fields (id, line, type, status always); an error answer stays whole; a resumed
    --fields run keeps its rows."""
    lines = [{"id": "a", "type": "exec", "steps": [{"name": "run", "argv": ["/bin/echo", "hi"]}]},
             {"id": "b", "type": "exec", "steps": [{"name": "c", "argv": ["true"]}, {"name": "run", "argv": ["false"]}]},
             "not json"]
    inp = env.write_in(lines)
    rc, out, err = env.run(inp, "--order", "input")
    full = answers(out)
    check(rc == 0 and all("enforced" in s and "limits" in s for s in full[0]["steps"]), f"full answers: {rc} {err}")
    rc, out, err = env.run(inp, "--order", "input", "--brief")
    brief = answers(out)
    check(rc == 0 and len(brief) == 3, f"--brief: exit {rc}, {len(brief)} lines: {err}")
    for a, b in zip(full[:2], brief[:2]):
        check(b["status"] == a["status"] and len(b["steps"]) == len(a["steps"]), f"--brief {b['id']}: the same run")
        for sa, sb in zip(a["steps"], b["steps"]):
            check("enforced" not in sb and "limits" not in sb, f"--brief {b['id']}: enforced/limits left: {sorted(sb)}")
            check(sb["stdout"] == sa["stdout"] and sb["exit_code"] == sa["exit_code"], f"--brief {b['id']}: fields kept")
            check(set(sa) - set(sb) == {"enforced", "limits"}, f"--brief dropped more: {set(sa) - set(sb)}")
    check(brief[2]["type"] == "error" and brief[2] == full[2], "--brief: an error line stays whole")
    check(len(out) < 0.5 * sum(len(json.dumps(a)) for a in full), "--brief lines are less than half as long")
    outp = env.path("fields.jsonl")
    rc, _, err = env.run(inp, "--order", "input", "--out", outp, "--fields", "steps.exit_code,steps.stdout")
    rows = answers(open(outp).read())
    check(rc == 0 and [sorted(r) for r in rows[:2]] == [["id", "line", "status", "steps", "type"]] * 2,
          f"--fields: top-level keys {[sorted(r) for r in rows]}: {err}")
    check(rows[0]["steps"] == [{"exit_code": 0, "stdout": "hi\n"}], f"--fields: steps {rows[0]['steps']}")
    check([s["exit_code"] for s in rows[1]["steps"]] == [0, 1], f"--fields: steps of b {rows[1]['steps']}")
    rc, _, err = env.run(inp, "--order", "input", "--out", outp, "--fields", "steps.exit_code,steps.stdout")
    check(rc == 0 and "3 answered before, 0 answered now" in err, f"--fields output resumes: {err}")
    for bad, msg in ((["--fields", "status,,x y"], "not a field name"), (["--fields", "a", "--fields", "b"], "--fields once")):
        rc, _, err = env.run(inp, *bad)
        check(rc == 1 and msg in err, f"{bad}: exit {rc}, {err!r}")


CASES["brief"] = case_brief


def case_trace(env):
    """Traced requests in a batch (issue 24): each answer's traced step carries its trace, its
    status and the untraced run's comparison; --fields keeps trace fields; a refused trace is
    that line's error answer, the others run."""
    prog = "def f(x):\n    return x + %d\n\n\nprint(f(1))\n"
    lines = [{"id": i, "type": "exec", "toolchain": "python3", "files": [{"path": "main.py", "content": prog % i}],
              "trace": {"check": True}} for i in range(4)]
    lines.append({"id": "bad", "type": "exec", "steps": [{"argv": ["sh", "-c", "true"], "trace": True}]})
    inp = env.write_in(lines)
    rc, out, err = env.run(inp, "--order", "input", "--concurrency", "3")
    got = answers(out)
    check(rc == 0 and len(got) == 5, f"batch of traced requests: exit {rc}, {len(got)} answers: {err}")
    for i, a in enumerate(got[:4]):
        s = a["steps"][-1]
        recs = [json.loads(x) for x in s.get("trace", "").splitlines()]
        check(a["status"] == "ok" and s["stdout"] == "%d\n" % (i + 1), f"answer {i}: {a['status']} {s.get('stdout')!r}")
        check(s.get("trace_status") == "complete" and recs and recs[-1]["status"] == "complete"
              and any(r.get("k") == "return" and r.get("val") == ["int", str(i + 1)] for r in recs),
              f"answer {i}: its own trace ({s.get('trace_status')})")
        check(s.get("trace_check") == {"stdout_equal": True, "stderr_equal": True, "exit_equal": True,
                                       "trace_sealed": True},
              f"answer {i}: compared with its untraced run: {s.get('trace_check')}")
    check(got[4]["type"] == "error" and "steps[0]" in got[4]["error"]["message"], f"the refused line: {got[4]}")
    outp = env.path("fields.jsonl")
    rc, _, err = env.run(inp, "--order", "input", "--out", outp, "--fields", "steps.trace_status,steps.trace_sha256")
    rows = answers(open(outp).read())
    check(rc == 0 and sorted(rows[0]["steps"][0]) == ["trace_sha256", "trace_status"], f"--fields with trace fields: {rows[:1]} {err}")


CASES["trace"] = case_trace


def case_floats(env):
    """Times in the answers are printed to what was measured (PROTOCOL.md, "Numbers"): wall,
    set-up and queue times to the microsecond; CPU times to their source's resolution: the
    microsecond from rusage, a clock tick when the supervisor's /proc poll ended the job
    (this daemon runs with --cgroup none, so a CPU-limit kill is read from the poll)."""
    spin = {"id": "spin", "type": "exec",
            "steps": [{"name": "run", "argv": ["sh", "-c", "while :; do :; done"], "limits": {"cpu_time_s": 0.3}}]}
    inp = env.write_in([{"id": i, "type": "exec", "steps": [{"name": "a", "argv": ["true"]},
                                                             {"name": "b", "argv": ["sh", "-c", "echo x"]}]}
                        for i in range(4)] + [spin])
    rc, out, err = env.run(inp, "--order", "input")
    check(rc == 0 and len(out.splitlines()) == 5, f"batch: exit {rc}: {err}")
    texts = [json.loads(x, parse_float=str) for x in out.splitlines()]  # each float as printed
    ticks = os.sysconf("SC_CLK_TCK")
    digits = len(str(ticks)) - 1  # 100 Hz: 2 decimals
    for a in texts:
        check(re.fullmatch(r"[0-9]+\.[0-9]{6}", a.get("queue_time_s") or ""), f"{a['id']}: queue_time_s {a.get('queue_time_s')}")
        for s in a["steps"]:
            src = s["cpu_source"]
            want = digits if src.startswith("supervisor poll") else 6
            for k in ("cpu_time_s", "user_time_s", "sys_time_s"):
                check(re.fullmatch(r"[0-9]+\.[0-9]{%d}" % want, s[k]), f"{a['id']} ({src}): {k} {s[k]} not to {want} decimals")
            for k in ("wall_time_s", "setup_time_s"):
                check(re.fullmatch(r"[0-9]+\.[0-9]{6}", s[k]), f"{a['id']}: {k} {s[k]} not to the microsecond")
            # the limits as they were asked for: 0.3, not 0.29999999999999999
            check(all(isinstance(v, int) or v == repr(float(v)) for v in s["limits"].values()),
                  f"{a['id']}: limits printed as given: {s['limits']}")
    check(texts[4]["steps"][0]["limits"]["cpu_time_s"] == "0.3", f"cpu_time_s 0.3 printed as {texts[4]['steps'][0]['limits']}")
    spun = answers(out)[4]["steps"][0]
    check(spun["limit_hit"] == "cpu_time" and spun["cpu_source"].startswith("supervisor poll"),
          f"the spinning job was ended by the /proc poll: {spun['limit_hit']} {spun['cpu_source']}")
    check(spun["cpu_time_s"] >= 0.3, f"its CPU {spun['cpu_time_s']} >= its limit")


CASES["floats"] = case_floats


def main():
    bindir, case = sys.argv[1], sys.argv[2]
    if os.geteuid() != 0 and not os.path.exists("/proc/self/ns/user"):
        print("SKIPPED: no way to run a sandbox here")
        return SKIP
    env = Env(bindir, ["python3"] if case in ("mixed", "trace") else [],
              ["--cgroup", "none"] if case == "floats" else [])
    try:
        CASES[case](env)
    finally:
        env.stop()
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
