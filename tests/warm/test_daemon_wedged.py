"""A slot's zygote that never starts the program (SIGSTOPped here; stuck in
the kernel elsewhere) does not hold the job past its wall limit, nor give it
a timeout the program never had: at the limit the daemon finds no program
in the job, reads the zygote's state (wall_waiting), kills it, and the
init's report (no process of the job ever born) makes the daemon run the
step again, cold (runners/proc.c wedged_zygote). The next warm step gets a
new zygote. Before this, the job stayed until the daemon stopped. Checked
by outcome and processes; the only time bound is a generous one (30 s
against a 1 s limit), which the old behaviour never met.

  test_daemon_wedged.py BIN_DIR CACHE_DIR"""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonrun  # noqa: E402
from daemonrun import seed_of  # noqa: E402
from test_daemon_isolation import zygote_pids  # noqa: E402

PROG = [{"path": "main.py", "content": "import os\nprint('ran', os.getpid() > 1)\n"}]


def main():
    started = daemonrun.one_slot_daemon(sys.argv)
    if started is None:
        return daemonrun.SKIP
    d, check = started
    try:
        c = daemonrun.Client(d.sock)
        first = c.python(PROG, warm=True, seed=None)
        zygotes = zygote_pids()
        check(first.get("status") == "ok" and seed_of(first) is not None and len(zygotes) == 1,
              "a warm step, one zygote: %s %s %r" % (first.get("status"), daemonrun.start(first), zygotes))
        if check.fails:
            return check.exit_code()
        for z in zygotes:
            os.kill(int(z), signal.SIGSTOP)
        c.s.settimeout(30)
        t0 = time.monotonic()
        r = c.python(PROG, warm=True, seed=None, limits={"time_s": 1})
        took = time.monotonic() - t0
        status, _, _, out, _ = daemonrun.outcome(r)
        check(status == "ok" and out == b"ran True\n" and daemonrun.start(r).startswith("cold (warm refused: the slot's zygote"),
              "with the zygote stopped, the step ran again cold and ended ok in %.1f s: %s %r %s" %
              (took, status, out, daemonrun.start(r)))
        check("wall_waiting" not in r, "the re-run's result is the program's own: %r" % r.get("wall_waiting"))
        check("had not started the program at its wall limit (state T" in d.logtext(),
              "the daemon's log says why it ran again cold")
        gone = [z for z in zygotes if z not in zygote_pids()]
        check(gone == zygotes, "the wedged zygote was killed: %r still there" % [z for z in zygotes if z not in gone])
        again = c.python(PROG, warm=True, seed=None)
        check(again.get("status") == "ok" and seed_of(again) not in (None, seed_of(first)),
              "the next warm step has a new zygote: %s" % daemonrun.start(again))
        check((c.status().get("warm") or {}).get("restarts") == 1, "status counts the restart: %r" % c.status().get("warm"))
    finally:
        for z in zygote_pids():
            try:
                os.kill(int(z), signal.SIGCONT)
            except OSError:
                pass
        d.stop()
    return check.exit_code()


if __name__ == "__main__":
    sys.exit(main())
