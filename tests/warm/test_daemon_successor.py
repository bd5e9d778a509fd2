"""A slot's zygote serves 100 steps; its successor (runners/warm.c
zygote_for) is started 10 steps before the swap, serves nothing until then,
and is the zygote of step 101: a fresh process with a hash seed of its own,
that no earlier step's code ever ran in. Checked by processes and seeds,
never by time.

  test_daemon_successor.py BIN_DIR CACHE_DIR"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonrun  # noqa: E402
from daemonrun import seed_of  # noqa: E402
from test_daemon_isolation import zygote_pids  # noqa: E402

PER_ZYGOTE = 100  # runners/internal.h SB_WARM_JOBS_PER_ZYGOTE
AHEAD = 10  # SB_WARM_SPARE_AHEAD
PROG = [{"path": "main.py", "content": "import os\nprint(os.getpid())\n"}]


def main():
    started = daemonrun.one_slot_daemon(sys.argv)
    if started is None:
        return daemonrun.SKIP
    d, check = started

    try:
        c = daemonrun.Client(d.sock)
        run = lambda: c.python(PROG, warm=True, seed=None)  # noqa: E731
        seeds, pids_after = [], {}
        for i in range(1, PER_ZYGOTE + 3):
            r = run()
            if r.get("status") != "ok" or seed_of(r) is None:
                check(False, "step %d ran warm: %s %s" % (i, r.get("status"), daemonrun.start(r)))
                return check.exit_code()
            seeds.append(seed_of(r))
            pids_after[i] = zygote_pids()
            if i in (1, PER_ZYGOTE - AHEAD - 2, PER_ZYGOTE - AHEAD + 2):
                print("after step %d: zygotes %r, status %r" % (i, pids_after[i], c.status().get("warm")))
        first = pids_after[1]
        check(len(first) == 1, "one zygote after the first step: %r" % first)
        check(pids_after[PER_ZYGOTE - AHEAD - 2] == first, "no successor long before the swap: %r" %
              pids_after[PER_ZYGOTE - AHEAD - 2])
        near = pids_after[PER_ZYGOTE - AHEAD + 2]
        successor = [p for p in near if p not in first]
        check(len(near) == 2 and len(successor) == 1, "its successor is running %d steps before the swap: %r" %
              (AHEAD - 2, near))
        check(len(set(seeds[:PER_ZYGOTE])) == 1, "the first %d steps share one zygote's seed" % PER_ZYGOTE)
        check(seeds[PER_ZYGOTE] != seeds[0] and seeds[PER_ZYGOTE] == seeds[PER_ZYGOTE + 1],
              "step %d has the successor's own seed: %s after %s" % (PER_ZYGOTE + 1, seeds[PER_ZYGOTE], seeds[0]))
        check(pids_after[PER_ZYGOTE + 1] == successor,
              "after the swap the successor alone serves (the old zygote is gone): %r, successor %r" %
              (pids_after[PER_ZYGOTE + 1], successor))
        st = c.status().get("warm", {})
        check(st.get("zygotes") == 1 and st.get("successors") == 0 and st.get("restarts") == 0,
              "status after the swap: %r" % st)
        # another environment: the successor of the old one is of no use
        # (closed), the new environment gets a zygote of its own
        other = c.python(PROG, warm=True, seed=None, extra_env={"LANG": "C.UTF-8"})
        check(other.get("status") == "ok" and seed_of(other) not in (None, seeds[-1]),
              "a step with another environment runs warm from a new zygote: %s" % daemonrun.start(other))
    finally:
        d.stop()
    return check.exit_code()


if __name__ == "__main__":
    sys.exit(main())
