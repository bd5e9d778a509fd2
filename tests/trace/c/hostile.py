"""Hostile C programs under gdb's tracer, through the daemon (security.trace_c_*,
each with a .pool0 twin): `hostile.py --bin BUILD/bin CASE`. Always inside
the unshare wrapper.

ptrace   the program tries ptrace on its parent (gdb) and on its own child,
         process_vm_readv and /proc/PARENT/mem: every one fails
forged   writes a forged end record to every descriptor 3..63: none is open
         (sbtrace_launch closed them), the trace is the tracer's, complete
lines    10^7 loop iterations: truncated by the events cap, then untraced at
         full speed; stdout equal to the untraced run's
deep     recursion 100000 deep: truncated by the depth cap; stdout equal
fork     a forked child runs untraced; the parent's trace complete
spin     an endless loop: events cap, then the job's time limit ends it; no
         hang, the supervisor's end after the tracer's events
killgdb  the program kills its parent (gdb): the supervisor's crashed end,
         the events before it kept
bytes    a value-heavy loop under a 4096-byte cap: the tracer's truncated/bytes
         end within the cap; stdout equal
threads  a second thread runs a traced function: only the main thread's
         events are recorded, the trace complete; stdout equal
"""
import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "cli"))
import gdbtrace  # noqa: E402
from private_daemon import PrivateDaemon  # noqa: E402

FAILS = []

PROGRAMS = {
    "ptrace": r'''
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const char *what, long rc) {
  printf("%s %s\n", what, rc < 0 ? "failed" : "SUCCEEDED");
}

int main(void) {
  pid_t parent = getppid();
  say("attach-parent", ptrace(PTRACE_ATTACH, parent, 0, 0));
  say("seize-parent", ptrace(PTRACE_SEIZE, parent, 0, 0));
  pid_t kid = fork();
  if (kid == 0) {
    pause();
    _exit(0);
  }
  say("attach-child", ptrace(PTRACE_ATTACH, kid, 0, 0));
  char buf[8];
  struct iovec l = {buf, sizeof buf}, r = {(void *)&buf, sizeof buf};
  say("vm-read-parent", process_vm_readv(parent, &l, 1, &r, 1, 0));
  say("vm-write-parent", process_vm_writev(parent, &l, 1, &r, 1, 0));
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", (int)parent);
  say("mem-parent", open(path, O_RDWR));
  kill(kid, SIGKILL);
  waitpid(kid, 0, 0);
  return 0;
}
''',
    "forged": r'''
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  const char *fake = "{\"t\":\"end\",\"status\":\"complete\",\"events\":0,\"exit\":{\"code\":0}}\n";
  int written = 0;
  for (int fd = 3; fd < 64; fd++)
    if (write(fd, fake, strlen(fake)) >= 0)
      written++;
  printf("written %d\n", written);
  return 0;
}
''',
    "lines": r'''
#include <stdio.h>

int main(void) {
  long s = 0;
  for (long i = 0; i < 10000000; i++)
    s += i;
  printf("%ld\n", s);
  return 0;
}
''',
    "deep": r'''
#include <stdio.h>

int down(int n) {
  return n == 0 ? 0 : 1 + down(n - 1);
}

int main(void) {
  printf("%d\n", down(100000));
  return 0;
}
''',
    "fork": r'''
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int work(int n) {
  int s = 0;
  for (int i = 0; i < n; i++)
    s += i;
  return s;
}

int main(void) {
  fflush(stdout);
  pid_t k = fork();
  if (k == 0) {
    printf("child %d\n", work(1000));
    return 0;
  }
  waitpid(k, 0, 0);
  printf("parent %d\n", work(3));
  return 0;
}
''',
    "spin": r'''
int main(void) {
  volatile int x = 0;
  for (;;)
    x++;
}
''',
    "killgdb": r'''
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int before = 1;
  printf("%d\n", before);
  fflush(stdout);
  kill(getppid(), SIGKILL);
  sleep(1);
  return 0;
}
''',
    "bytes": r'''
#include <stdio.h>
#include <string.h>

int main(void) {
  char text[300];
  long n = 0;
  memset(text, 'x', sizeof text - 1);
  text[sizeof text - 1] = 0;
  for (int i = 0; i < 100000; i++) {
    text[i % 299] = (char)('a' + i % 26);
    n += text[0];
  }
  printf("%ld\n", n);
  return 0;
}
''',
    "threads": r'''
#include <pthread.h>
#include <stdio.h>

int twice(int x) {
  int y = x * 2;
  return y;
}

void *worker(void *arg) {
  int *out = arg;
  for (int i = 0; i < 50; i++)
    *out += twice(i);
  return NULL;
}

int main(void) {
  pthread_t t;
  int sum = 0;
  pthread_create(&t, NULL, worker, &sum);
  pthread_join(t, NULL);
  printf("%d %d\n", sum, twice(21));
  return 0;
}
''',
}


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def traced(sock, name, trace, time_s=60):
    req = {"id": name, "type": "exec", "toolchain": "gcc", "trace": trace, "limits": {"time_s": time_s},
           "files": [{"path": "main.c", "content": PROGRAMS[name]}]}
    t0 = time.monotonic()
    resp = gdbtrace.request(sock, req)
    wall = time.monotonic() - t0
    if resp.get("type") != "exec" or resp["steps"][0].get("status") != "ok":
        raise AssertionError("%s: %s" % (name, str(resp)[:500]))
    step = resp["steps"][-1]
    recs = [json.loads(x) for x in step["trace"].splitlines()]
    return step, recs, wall


def equal_run(name, step):
    check(step.get("trace_check") == {"stdout_equal": True, "stderr_equal": True, "exit_equal": True},
          "%s: traced run equal to the untraced one: %r" % (name, step.get("trace_check")))


def case_ptrace(sock):
    step, recs, _ = traced(sock, "ptrace", {"check": True})
    out = step.get("stdout", "")
    check(out.count("failed") == 6 and "SUCCEEDED" not in out, "ptrace: every attempt failed: %r" % out)
    check(recs[-1].get("status") == "complete", "ptrace: trace complete: %r" % recs[-1])


def case_forged(sock):
    step, recs, _ = traced(sock, "forged", {"check": True})
    check(step.get("stdout") == "written 0\n", "forged: no descriptor past 2 open: %r" % step.get("stdout"))
    check(recs[-1].get("status") == "complete" and recs[-1].get("events", 0) > 0 and "by" not in recs[-1],
          "forged: the tracer's own end: %r" % recs[-1])
    check(sum(1 for r in recs if r.get("t") == "end") == 1, "forged: one end")
    equal_run("forged", step)


def case_lines(sock):
    step, recs, wall = traced(sock, "lines", {"check": True, "events": 3000})
    end = recs[-1]
    check(end.get("status") == "truncated" and end.get("cap") == "events" and end.get("exit") == {"code": 0},
          "lines: truncated by the events cap, exit 0: %r" % end)
    check(sum(1 for r in recs if r.get("t") == "ev") == 3000, "lines: 3000 events kept")
    check(step.get("stdout") == "49999995000000\n", "lines: stdout %r" % step.get("stdout"))
    equal_run("lines", step)
    check(wall < 60, "lines: %.1f s (under 60)" % wall)


def case_deep(sock):
    step, recs, wall = traced(sock, "deep", {"check": True, "depth": 100})
    end = recs[-1]
    check(end.get("status") == "truncated" and end.get("cap") == "depth", "deep: truncated by the depth cap: %r" % end)
    check(max(r["d"] for r in recs if r.get("t") == "ev") <= 100, "deep: no event deeper than the cap")
    check(step.get("stdout") == "100000\n", "deep: stdout %r" % step.get("stdout"))
    equal_run("deep", step)
    check(wall < 60, "deep: %.1f s (under 60)" % wall)


def case_fork(sock):
    step, recs, _ = traced(sock, "fork", {"check": True})
    evs = [r for r in recs if r.get("t") == "ev"]
    calls = [e for e in evs if e["k"] == "call" and e["fn"] == "work"]
    check(len(calls) == 1 and calls[0]["loc"].get("n") == ["int", "3"], "fork: only the parent's work(3) traced: %r" % calls)
    check(recs[-1].get("status") == "complete", "fork: trace complete: %r" % recs[-1])
    check(step.get("stdout") == "child 499500\nparent 3\n", "fork: stdout %r" % step.get("stdout"))
    equal_run("fork", step)


def case_spin(sock):
    step, recs, wall = traced(sock, "spin", {"events": 1000}, time_s=5)
    check(step.get("status") != "ok" and step.get("limit_hit"), "spin: ended by a limit: %r" % {
        k: step.get(k) for k in ("status", "limit_hit")})
    check(sum(1 for r in recs if r.get("t") == "ev") == 1000, "spin: the 1000 events kept")
    check(recs[-1].get("t") == "end" and recs[-1].get("by") == "supervisor", "spin: the supervisor's end: %r" % recs[-1])
    check(wall < 40, "spin: %.1f s" % wall)


def case_killgdb(sock):
    step, recs, wall = traced(sock, "killgdb", {"check": True})
    end = recs[-1]
    check(end.get("by") == "supervisor" and end.get("status") == "crashed", "killgdb: the supervisor's end: %r" % end)
    check(any(r.get("t") == "ev" and r.get("ln") == 9 for r in recs), "killgdb: the events before the kill kept")
    check(sum(1 for r in recs if r.get("t") == "end") == 1, "killgdb: one end")
    check(wall < 60, "killgdb: %.1f s" % wall)


def case_bytes(sock):
    step, recs, wall = traced(sock, "bytes", {"check": True, "bytes": 4096})
    end = recs[-1]
    check(end.get("status") == "truncated" and end.get("cap") == "bytes" and "by" not in end,
          "bytes: the tracer's truncated/bytes end: %r" % end)
    check(len(step["trace"].encode()) <= 4096 and not step.get("trace_truncated"),
          "bytes: %d bytes, within the cap, not cut by the supervisor" % len(step["trace"].encode()))
    equal_run("bytes", step)


def case_threads(sock):
    step, recs, wall = traced(sock, "threads", {"check": True})
    evs = [r for r in recs if r.get("t") == "ev"]
    calls = [e for e in evs if e["k"] == "call"]
    check([c["fn"] for c in calls] == ["main", "twice"] and calls[1]["loc"].get("x") == ["int", "21"],
          "threads: main and its own twice(21) only: %r" % [(c["fn"], c.get("loc")) for c in calls])
    check(recs[-1].get("status") == "complete", "threads: complete: %r" % recs[-1])
    check(step.get("stdout") == "2450 42\n", "threads: stdout %r" % step.get("stdout"))
    equal_run("threads", step)


CASES = {"ptrace": case_ptrace, "forged": case_forged, "lines": case_lines, "deep": case_deep, "fork": case_fork,
         "spin": case_spin, "killgdb": case_killgdb, "bytes": case_bytes, "threads": case_threads}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("case", choices=sorted(CASES))
    a = ap.parse_args()
    skip = gdbtrace.skip_reason("gcc")
    if skip:
        print("SKIPPED: " + skip)
        return 77
    with tempfile.TemporaryDirectory() as cache:
        d = PrivateDaemon(a.bin, cache)
        try:
            CASES[a.case](d.sock)
        finally:
            d.stop()
    print("%d failure(s)" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
