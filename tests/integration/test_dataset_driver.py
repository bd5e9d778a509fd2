#!/usr/bin/env python3
"""The benchmark driver as a user meets it, for every dataset command
(regen, dr-matrix, verify --benchmark cruxeval|surge|tests, eval --execute, batch, trace-dataset):

  failures  a daemon whose every job fails inside surgebox (its jobs
            directory made read-only, a real failure: each job ends
            internal_error): the command exits 2, says how many and the first
            error, and writes no reference, verdict, output or score from it;
  lost      the daemon killed while jobs run: the command exits 2 naming
            the lost connection, and records nothing of the jobs in flight;
  socket    --socket S before and after the command's name talks to S: S's
            jobs_done moves, the daemon $SURGEBOX_SOCKET names does not;
  profile   --profile nope before and after the name is an error before any
            job runs; --no-autostart before and after the name with a
            socket nobody listens on is an error naming it.

Usage: test_dataset_driver.py BIN_DIR CASE. Run inside the unshare wrapper
(ctest does): it starts its own daemons."""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
from private_daemon import PrivateDaemon  # noqa: E402

SKIP = 77
FAILED = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILED.append(what)


DR = [{"custom_category": 7, "custom_features": {"key": "g++-C++17--O0", "dependencies": [False, False, False]},
       "question": "#include <iostream>\nint main() { std::cout << 6 * 7 << std::endl; }", "gt": "42\n"},
      {"custom_category": 7, "custom_features": {"key": "g++-C++17--O0", "dependencies": [False, False, False]},
       "question": "#include <cstdio>\nint main() { std::printf(\"%d\\n\", 1 << 5); }", "gt": "32\n"}]
CRUX = [{"code": "def f(x):\n    return x + 1", "input": "1", "output": "2", "id": "sample_0"},
        {"code": "def f(s):\n    return s[::-1]", "input": "'ab'", "output": "'ba'", "id": "sample_1"}]
GENS = {"sample_0": ["2", "3"], "sample_1": ["'ba'"]}
TESTS_P = [{"id": "p", "language": "python", "tests": [{"stdin": "1\n", "expected": "1"}]}]
TESTS_S = [{"id": "p", "code": "print(input())\n"}, {"id": "p", "code": "print(2)\n"}]


class Setup:
    def __init__(self, bin_dir):
        self.bin = bin_dir
        self.d = tempfile.mkdtemp(prefix="sbdrv-")
        self.cache = os.path.join(self.d, "cache")
        self.data = os.path.join(self.d, "surge")
        os.makedirs(self.data)
        json.dump(DR, open(os.path.join(self.data, "dr.json"), "w"))
        self.preds = self.write("preds.jsonl", "".join(json.dumps(p) + "\n" for p in [
            {"subset": "dr", "index": 0, "model": "m", "prediction": "Output:\n```\n42\n```"},
            {"subset": "dr", "index": 1, "model": "m", "prediction": "Output:\n```\n32\n```"}]))
        self.crux = self.write("crux.jsonl", "".join(json.dumps(c) + "\n" for c in CRUX))
        self.gens = self.write("gens.json", json.dumps(GENS))
        self.tprobs = self.write("tp.jsonl", "".join(json.dumps(r) + "\n" for r in TESTS_P))
        self.tsols = self.write("ts.jsonl", "".join(json.dumps(r) + "\n" for r in TESTS_S))
        self.batch_in = self.write("in.jsonl", "".join(json.dumps(r) + "\n" for r in [
            {"id": "a", "steps": [{"argv": ["/bin/echo", "a"]}]}, {"id": "b", "steps": [{"argv": ["/bin/echo", "b"]}]}]))
        self.n = 0

    def write(self, name, text):
        path = os.path.join(self.d, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def fresh(self, name):
        self.n += 1
        return os.path.join(self.d, f"{name}-{self.n}")

    def daemon(self, name):
        return PrivateDaemon(self.bin, self.cache, "--jobs", "2", "--quiet", "--state-dir",
                             os.path.join(self.d, "state-" + name))

    def commands(self):
        """Each dataset command with fresh outputs: (name, argv after the command word's options, outputs)."""
        o = {k: self.fresh(k) for k in ("regen", "drm", "crux", "batch", "vs", "tds", "vt")}
        return [
            ("regen", ["regen", "--data", self.data, "--subset", "dr", "--out", o["regen"], "--summary",
                       o["regen"] + ".summary.json"], o["regen"]),
            ("dr-matrix", ["dr-matrix", "--data", self.data, "--compilers", "g++", "--stds", "17", "--opts", "O0",
                           "--out", o["drm"]], o["drm"]),
            ("verify cruxeval", ["verify", "--benchmark", "cruxeval", "--mode", "output", "--generations", self.gens,
                                 "--data", self.crux, "--out", o["crux"]], o["crux"]),
            ("verify surge", ["verify", "--benchmark", "surge", "--data", self.data, "--subset", "dr",
                              "--predictions", self.preds, "--out", o["vs"], "--json"], o["vs"]),
            ("verify tests", ["verify", "--benchmark", "tests", "--problems", self.tprobs, "--solutions", self.tsols,
                              "--out", o["vt"]], o["vt"]),
            ("eval --execute", ["eval", "--execute", "--data", self.data, "--subset", "dr", "--predictions", self.preds,
                                "--json"], None),
            ("batch", ["batch", self.batch_in, "--out", o["batch"]], o["batch"]),
            ("trace-dataset", ["trace-dataset", "--benchmark", "cruxeval", "--data", self.crux, "--out", o["tds"]],
             o["tds"]),
        ]

    def run(self, argv, env_socket=None, timeout=600, socket_dir=None):
        env = dict(os.environ)
        env.pop("SURGEBOX_SOCKET", None)
        if env_socket:
            env["SURGEBOX_SOCKET"] = env_socket
        if socket_dir:  # the default socket lives there (nothing listens): only --no-autostart stops a private daemon
            env["SURGEBOX_SOCKET_DIR"] = socket_dir
        p = subprocess.run([os.path.join(self.bin, "surgebox")] + argv, capture_output=True, text=True,
                           timeout=timeout, env=env)
        print("$ surgebox", " ".join(argv), "->", p.returncode)
        print(p.stdout[-1500:], p.stderr[-2500:])
        return p

    def jobs_done(self, sock):
        p = subprocess.run([os.path.join(self.bin, "surgebox"), "--socket", sock, "status", "--json"],
                           capture_output=True, text=True, timeout=60)
        return json.loads(p.stdout)["jobs_done"]


def with_socket(argv, sock, before):
    """--socket SOCK before the command's name, or after it."""
    return (["--socket", sock] + argv) if before else ([argv[0], "--socket", sock] + argv[1:])


def case_failures(s):
    d = s.daemon("broken")
    try:
        jobs = glob.glob(os.path.join(s.d, "state-broken", "*", "jobs"))
        check(len(jobs) == 1, f"the daemon's jobs directory: {jobs}")
        # every job's workspace is made there: read-only, each job ends internal_error
        r = subprocess.run(["nsenter", "-t", str(d.proc.pid), "-m", "--", "mount", "-o", "remount,ro", jobs[0]],
                           capture_output=True, text=True)
        check(r.returncode == 0, f"jobs directory remounted read-only: {r.stderr}")
        for name, argv, out in s.commands():
            if name == "eval --execute":
                continue  # verify --benchmark surge is the same run
            p = s.run(with_socket(argv, d.sock, False), env_socket=d.sock)
            check(p.returncode == 2, f"{name}: exit 2 when every job failed inside surgebox (got {p.returncode})")
            check("failure(s) of surgebox" in p.stderr and "Read-only file system" in p.stderr,
                  f"{name}: a line names how many and the first error")
            if name == "regen":
                items = json.load(open(os.path.join(out, "dr.json")))
                execs = [i["exec"] for i in items]
                check(all(e["regenerated"] is False and e["class"] == "internal_error" and e["status"] == "internal_error"
                          for e in execs), f"regen: no item regenerated, each classed internal_error: {execs}")
                check([i["gt"] for i in items] == [i["gt"] for i in DR], "regen: the published references are kept")
                summ = json.load(open(out + ".summary.json"))["dr"]
                check(summ.get("internal_error") == 2 and summ["mismatches"].get("internal_error") == [0, 1]
                      and summ["ran"] == 0, f"regen: the summary counts them in a class of their own: {summ}")
                check("2 failure(s) of surgebox" in p.stderr, "regen: 2 failures counted")
            elif name == "dr-matrix":
                lines = open(out).read().splitlines() if os.path.exists(out) else []
                check(lines == [], f"dr-matrix: no output line written from a failure: {lines}")
                check("cells not run: a failure of surgebox" in p.stdout, "dr-matrix: the report counts them")
            elif name == "verify cruxeval":
                check(not os.path.exists(out), "verify cruxeval: no scored file")
                prog = json.load(open(out + ".progress")) if os.path.exists(out + ".progress") else {"verdicts": {}}
                check(prog["verdicts"] == {}, f"verify cruxeval: no verdict kept: {prog}")
            elif name == "verify surge":
                rep = json.loads(p.stdout) if p.stdout.strip() else {}
                check(rep.get("excluded") == {"internal_error": 2} and rep.get("scored_items") == 0,
                      f"verify surge: both items excluded as internal_error, none scored: {rep.get('excluded')}")
            elif name == "verify tests":
                r = json.load(open(out))
                check([x["passed"] for x in r["results"]] == [None, None] and r["not_scored_problems"] == ["p"]
                      and r["scored_problems"] == 0, f"verify tests: no result kept, the problem not scored: {r}")
                check(json.load(open(out + ".progress"))["records"] == {}, "verify tests: no record kept")
                check("2 failure(s) of surgebox" in p.stderr, "verify tests: 2 failures counted")
            elif name == "batch":
                answers = [json.loads(l) for l in open(out)]
                check([a.get("status") for a in answers] == ["internal_error"] * 2,
                      f"batch: each line says internal_error: {answers}")
                check("failures of surgebox (internal_error): 2" in p.stderr, "batch: the summary counts them")
            elif name == "trace-dataset":
                check(os.listdir(os.path.join(out, "items")) == [] and os.listdir(os.path.join(out, "traces")) == [],
                      "trace-dataset: no record or trace written from a failure")
                summ = json.load(open(os.path.join(out, "summary.json")))
                check(summ["not_run"] == 2 and summ["trace_status"] == {}, f"trace-dataset: 2 not run: {summ}")
                check("2 not run" in p.stderr, "trace-dataset: the summary says so")
    finally:
        d.stop()


def case_lost(s):
    sleeper = os.path.join(s.d, "sleeper")
    os.makedirs(sleeper)
    json.dump([{"custom_category": 7, "custom_features": {"key": "g++-C++17--O0", "dependencies": [False] * 3},
                "question": "#include <unistd.h>\nint main() { sleep(60); }", "gt": ""}],
              open(os.path.join(sleeper, "dr.json"), "w"))
    runs = [("regen", ["regen", "--data", sleeper, "--subset", "dr", "--out", s.fresh("lost-regen")]),
            ("dr-matrix", ["dr-matrix", "--data", sleeper, "--compilers", "g++", "--stds", "17", "--opts", "O0",
                           "--out", s.fresh("lost-drm")]),
            ("batch", ["batch", s.write("sleep.jsonl", json.dumps({"id": "z", "steps": [{"argv": ["sleep", "60"]}]}) + "\n"),
                       "--out", s.fresh("lost-batch")])]
    for name, argv in runs:
        d = s.daemon("lost-" + name.replace(" ", "-"))
        try:
            env = dict(os.environ, SURGEBOX_SOCKET=d.sock)
            p = subprocess.Popen([os.path.join(s.bin, "surgebox")] + argv, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=env)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and p.poll() is None:
                st = subprocess.run([os.path.join(s.bin, "surgebox"), "--socket", d.sock, "status", "--json"],
                                    capture_output=True, text=True, timeout=60)
                if st.returncode == 0 and json.loads(st.stdout)["running"] >= 1:
                    break
                time.sleep(0.2)
            d.proc.kill()
            out, err = p.communicate(timeout=120)
            print("$ surgebox", " ".join(argv), "->", p.returncode, "\n", out[-1500:], err[-2000:])
            check(p.returncode == 2 and "failure(s) of surgebox" in err and "lost" in err,
                  f"{name}: the daemon gone mid-run: exit 2 naming the lost connection (got {p.returncode})")
            if name == "regen":
                item = json.load(open(os.path.join(argv[-1], "dr.json")))[0]
                check(item.get("exec", {}).get("regenerated") is not True,
                      f"regen: nothing recorded as regenerated: {item.get('exec')}")
            elif name == "dr-matrix":
                check(not open(argv[-1]).read().strip(), "dr-matrix: no output line")
        finally:
            d.stop()


def case_socket(s):
    a, b = s.daemon("a"), s.daemon("b")
    try:
        for before in (True, False):
            for name, argv, _ in s.commands():
                ja, jb = s.jobs_done(a.sock), s.jobs_done(b.sock)
                p = s.run(with_socket(argv, a.sock, before), env_socket=b.sock)
                where = "before" if before else "after"
                check(p.returncode == 0, f"{name} --socket {where} the name: exit 0 (got {p.returncode})")
                na, nb = s.jobs_done(a.sock), s.jobs_done(b.sock)
                check(na > ja and nb == jb,
                      f"{name} --socket {where} the name ran on that daemon: its jobs {ja}->{na}, "
                      f"$SURGEBOX_SOCKET's {jb}->{nb}")
    finally:
        a.stop()
        b.stop()


def case_profile(s):
    a = s.daemon("p")
    try:
        for before in (True, False):
            for name, argv, _ in s.commands():
                j = s.jobs_done(a.sock)
                full = (["--profile", "nope"] + argv) if before else ([argv[0], "--profile", "nope"] + argv[1:])
                p = s.run(full, env_socket=a.sock)
                where = "before" if before else "after"
                check(p.returncode == 2 and "nope" in p.stderr,
                      f"{name} --profile nope {where} the name: an error naming it (exit {p.returncode})")
                check(s.jobs_done(a.sock) == j, f"{name} --profile nope {where} the name: no job ran")
                empty = os.path.join(s.d, "no-daemon")
                os.makedirs(empty, mode=0o700, exist_ok=True)
                dead = os.path.join(empty, "surgebox.sock")
                full = (["--no-autostart"] + argv) if before else ([argv[0], "--no-autostart"] + argv[1:])
                p = s.run(full, socket_dir=empty)
                check(p.returncode == 2 and dead in p.stderr and not os.path.exists(dead),
                      f"{name} --no-autostart {where} the name: no private daemon, an error naming the socket "
                      f"(exit {p.returncode})")
    finally:
        a.stop()


def main():
    bin_dir, case = sys.argv[1], sys.argv[2]
    if os.geteuid() != 0:
        print("SKIPPED: runs as root (its daemons' jobs directory is remounted from inside their mount namespace)")
        sys.exit(SKIP)
    s = Setup(bin_dir)
    {"failures": case_failures, "lost": case_lost, "socket": case_socket, "profile": case_profile}[case](s)
    if FAILED:
        print(f"{len(FAILED)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
