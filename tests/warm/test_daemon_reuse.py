"""A slot's zygote is kept for the next warm step whose interpreter and
start-up variables (PYTHON*, LANG, LC_*: runners/warm.c warm_start_var)
are its own, whatever else that step's environment holds: the zygote
starts with those alone, and the rest is each child's. A step that
changes a start-up variable gets a new zygote. Checked by the hash seed
the daemon chose for each zygote (enforced.start) and by what each child
sees of its own environment, never by time.

  test_daemon_reuse.py BIN_DIR CACHE_DIR"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonrun  # noqa: E402
from daemonrun import seed_of  # noqa: E402

PROG = [{"path": "main.py", "content": "import os\nprint(os.environ.get('SB_REUSE'), os.environ.get('LC_ALL'))\n"}]


def main():
    started = daemonrun.one_slot_daemon(sys.argv)
    if started is None:
        return daemonrun.SKIP
    d, check = started

    try:
        c = daemonrun.Client(d.sock)
        runs = []
        for value, lc in (("one", None), ("two", None), ("x" * 3000, None), ("three", "C.UTF-8"), ("four", "C.UTF-8")):
            env = {"SB_REUSE": value}
            if lc:
                env["LC_ALL"] = lc
            step = c.python(PROG, warm=True, seed=None, extra_env=env)
            status, code, _sig, out, err = daemonrun.outcome(step)
            runs.append(seed_of(step))
            check(status == "ok" and out.decode() == "%s %s\n" % (value, lc),
                  "SB_REUSE=%s... LC_ALL=%s: the child sees its own (%s %r %r)" % (value[:5], lc, status, out[:40], err[-200:]))
        check(all(runs), "every step ran warm: %r" % runs)
        check(runs[0] == runs[1] == runs[2], "another SB_REUSE keeps the zygote: seeds %r" % runs[:3])
        check(runs[3] != runs[2], "LC_ALL set: a new zygote (seeds %r, %r)" % (runs[2], runs[3]))
        check(runs[3] == runs[4], "and it is kept for the next step with the same LC_ALL: %r" % runs[3:])
        c.close()
    finally:
        d.stop()
    return check.exit_code()


if __name__ == "__main__":
    sys.exit(main())
