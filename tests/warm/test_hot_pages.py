"""The pages a warm program's process is given before it runs
(runners/warm_hot.c): a zygote's rehearsal, before READY, learns which of
its pages a child writes, and each job's process copies them in one call
once it is in the job's cgroup. Checked by the pages themselves
(/proc/self/pagemap: present and mapped by this process alone), never by
time: at the program's first line every page of the set that is still
mapped is already the process's own, pages which nothing before that line
writes (the short exit's) among them. A zygote told not to rehearse has no
set, and the same program prints the same bytes.

Through the plain protocol (tests/warm/zygoterun.py) and through the daemon,
root and user-namespace mode (the program's process joins the job's cgroup
in warm_serve.c's child, or in sbwarm_program after two forks).

  test_hot_pages.py BIN_DIR CACHE_DIR"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonrun  # noqa: E402
import zygoterun  # noqa: E402

MIN_PAGES = 64  # a CRUXEval-like check writes about 480 of the zygote's pages (3.11)

# At its first line, before anything of its own: the set (libsbwarm's
# sbwarm_hot_ranges, the library the zygote loaded, found in its maps) and
# which of its pages are present and exclusively mapped.
PROBE = r'''
import ctypes, json, os, struct
maps = [l.split() for l in open("/proc/self/maps")]
lib = [m[5] for m in maps if len(m) > 5 and m[5].endswith("/libsbwarm.so")]
own, pm = set(), open("/proc/self/pagemap", "rb")
rw = [(int(m[0].split("-")[0], 16), int(m[0].split("-")[1], 16)) for m in maps if m[1] == "rw-p"]
for a, b in rw:
    pm.seek(a // 4096 * 8)
    data = pm.read((b - a) // 4096 * 8)
    for i, (e,) in enumerate(struct.iter_unpack("Q", data)):
        if e >> 63 & 1 and e >> 56 & 1:
            own.add(a + i * 4096)
out = {"lib": bool(lib)}
if lib:
    f = ctypes.CDLL(lib[0]).sbwarm_hot_ranges
    buf = (ctypes.c_uint64 * 2048)()
    n = f(buf, 1024)
    pages = [buf[2 * i] + k for i in range(n) for k in range(0, buf[2 * i + 1], 4096)]
    mapped = [p for p in pages if any(a <= p < b for a, b in rw)]
    out.update(ranges=n, pages=len(pages), mapped=len(mapped), own=sum(1 for p in mapped if p in own),
               missing=["%x" % p for p in mapped if p not in own][:8])
print(json.dumps(out))
'''


def judge(label, out, check):
    """The probe's line: a set of at least MIN_PAGES, all of it (still
    mapped) the process's own at its first line."""
    try:
        r = json.loads(out)
    except ValueError:
        return check(False, "%s: the probe printed %r" % (label, out[:300]))
    if not check(r.get("lib"), "%s: libsbwarm.so is mapped in the program's process" % label):
        return None
    check(r["pages"] >= MIN_PAGES, "%s: the rehearsal's set has %d pages in %d ranges (>= %d)" %
          (label, r["pages"], r["ranges"], MIN_PAGES))
    check(r["mapped"] >= 0.9 * r["pages"], "%s: %d of its %d pages are still mapped" % (label, r["mapped"], r["pages"]))
    check(r["own"] == r["mapped"], "%s: all %d are the process's own before its first line (%d; not: %s)" %
          (label, r["mapped"], r["own"], r["missing"]))
    return r


def plain(check):
    if not zygoterun.warm_lib():
        print("SKIPPED (plain protocol): no libsbwarm.so (SURGEBOX_WARM_LIB)")
        return
    d = tempfile.mkdtemp(prefix="hot-pages-")
    script = os.path.join(d, "main.py")
    with open(script, "w") as f:
        f.write(PROBE)
    outs = {}
    for label, extra in (("plain", None), ("plain, no rehearsal", {"SURGEBOX_ZYGOTE_NO_HOT": "1"})):
        z = zygoterun.Zygote(env=extra)
        try:
            code, out, err = z.run(script, cwd=d)
        finally:
            z.close()
        check(code == 0, "%s: exit 0 (%d, %r)" % (label, code, err[-300:]))
        outs[label] = out
    judge("plain", outs["plain"], check)
    try:
        bare = json.loads(outs["plain, no rehearsal"])
    except ValueError:
        bare = {}
    check(bare.get("ranges") == 0, "plain, no rehearsal: no set (%r)" % bare.get("ranges"))


def through_daemon(check, bin_dir, cache):
    files = [{"path": "main.py", "content": PROBE}]
    d = daemonrun.PrivateDaemon(bin_dir, cache, "--jobs", "1")
    try:
        c = daemonrun.Client(d.sock)
        for i in range(2):  # the zygote's first job and one after it
            step = c.python(files, warm=True)
            status, code, _sig, out, err = daemonrun.outcome(step)
            if check(status == "ok" and daemonrun.start(step).startswith("warm"), "daemon, job %d ran warm: %s %s %r" %
                     (i + 1, status, daemonrun.start(step), err[-300:])):
                judge("daemon, job %d" % (i + 1), out.decode(errors="replace"), check)
        c.close()
    finally:
        d.stop()


def user_mode(check, bin_dir):
    """The unprivileged daemon (user-namespace mode: two forks, the
    program's process joins in sbwarm_program), its client uid 4242."""
    d = daemonrun.UserDaemon(bin_dir)

    def fn():
        c = daemonrun.Client(d.sock)
        step = c.python([{"path": "main.py", "content": PROBE}], warm=True)
        status, _code, _sig, out, err = daemonrun.outcome(step)
        bad = []
        if status != "ok" or not daemonrun.start(step).startswith("warm"):
            print("FAIL user-namespace mode ran warm: %s %s %r" % (status, daemonrun.start(step), err[-300:]))
            return True
        judge("user-namespace mode", out.decode(errors="replace"),
              lambda ok, what: (print("%s %s" % ("ok  " if ok else "FAIL", what)), bad.append(what) if not ok else None,
                                ok)[-1])
        return bool(bad)

    try:
        return daemonrun.as_user(fn)
    finally:
        d.stop()


def main():
    bin_dir, cache = sys.argv[1], sys.argv[2]
    skip, _top = daemonrun.root_top("hot-pages-")
    if skip:
        return skip
    fails = []

    def check(ok, what):
        print("%s %s" % ("ok  " if ok else "FAIL", what))
        if not ok:
            fails.append(what)
        return ok

    plain(check)
    through_daemon(check, bin_dir, cache)
    fails += user_mode(check, bin_dir)
    print("%d failed" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
