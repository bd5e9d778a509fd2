"""What a client may make root run outside any sandbox through a warm
zygote's start-up (issue 35, findings 1 to 4), through a private surgeboxd
that also allows uid 4242 (a second client). Every plant is harmless: a
line that writes a marker file when it runs as root; the test fails if the
marker appears (it ran in the zygote, as root, outside the sandbox).

  1. a user's venv (bin/python3 a link to the system's interpreter beside
     the user's pyvenv.cfg and a .pth): cold, saying why, the .pth never
     runs as root; the same venv made root's (the links and directories
     root's, so only the pyvenv.cfg can refuse it): cold too;
  2. /proc/PID/root/usr/bin/python3.X where PID is a process of uid nobody
     in a user and mount namespace of its own that bound its own file over
     that path: cold, the bound file never runs as root;
  3. PYTHONWARNINGS (its categories are modules the interpreter imports)
     runs cold; every start-up variable with a value outside the harmless
     set runs cold naming it; the harmless values still run warm;
  4. client A (root) kills three zygotes with a start-up that dies before
     READY (PYTHONIOENCODING naming no codec): its next such job is refused
     at once; A with another start-up, and client B (uid 4242) with the same
     or another start-up, are still tried warm.

With --cold (the twin) the same requests cold: each runs cold, saying
"cold", and no plant runs as root (the early deaths group has no cold
twin: a cold start has no zygote).

  test_daemon_startup.py BIN_DIR CACHE_DIR [--case venv|proc|env|deaths] [--cold]"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonrun  # noqa: E402

OTHER_UID = 4242
WARM = "--cold" not in sys.argv
FILES = [{"path": "main.py", "content": "print('hi')\n"}]


def run(c, argv0, **extra_env):
    env = dict(daemonrun.ENV, PYTHONHASHSEED="0")
    env.update(extra_env)
    r = c.request({"files": FILES, "warm": WARM,
                   "steps": [{"argv": [argv0, "/app/main.py"], "env": env}]})
    return r["steps"][0] if r.get("steps") else r


def plant(marker):
    """A .pth line (a line starting with import runs at start-up) that
    writes marker when it runs as root."""
    return "import os; os.getuid() == 0 and open(%r, 'w').write('zygote')\n" % marker


def make_venv(top, owner, marker):
    """top/venv: bin/python3 -> the system's python3.X, pyvenv.cfg, a .pth
    in its site-packages; owned by owner."""
    real = os.path.realpath(daemonrun.PY)
    ver = "%d.%d" % sys.version_info[:2]
    venv = os.path.join(top, "venv-%d" % owner)
    site = os.path.join(venv, "lib", "python" + ver, "site-packages")
    os.makedirs(site)
    os.mkdir(os.path.join(venv, "bin"))
    os.symlink(real, os.path.join(venv, "bin", "python3"))
    with open(os.path.join(venv, "pyvenv.cfg"), "w") as f:
        f.write("home = %s\ninclude-system-site-packages = false\nversion = %s\n" % (os.path.dirname(real), ver))
    with open(os.path.join(site, "evil.pth"), "w") as f:
        f.write(plant(marker))
    for dirpath, dirs, names in os.walk(venv):
        for n in [dirpath] + [os.path.join(dirpath, x) for x in dirs + names]:
            os.lchown(n, owner, owner)
            if not os.path.islink(n):
                os.chmod(n, 0o755 if os.path.isdir(n) else 0o644)
    return os.path.join(venv, "bin", "python3")


def venvs(c, top, check):
    for owner, why in ((OTHER_UID, "the interpreter lies in a directory others may write"),
                       (0, "a pyvenv.cfg beside the interpreter")):
        marker = os.path.join(top, "venv-ran-%d" % owner)
        py = make_venv(top, owner, marker)
        r = run(c, py)
        got = daemonrun.start(r)
        print("venv of uid %d: %s" % (owner, got))
        if WARM:
            check(got.startswith("cold (warm refused: " + why), "venv of uid %d: %r (want cold: %s)" % (owner, got, why))
        else:
            check(got == "cold", "venv of uid %d, cold: %r" % (owner, got))
        check(not os.path.exists(marker), "venv of uid %d: its .pth ran as root outside the sandbox" % owner)


def magic_link(c, top, check):
    """True when it ran; False when no user namespace can be made here."""
    real = os.path.realpath(daemonrun.PY)
    marker = os.path.join(top, "proc-ran")
    fake = os.path.join(top, "fake-python")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\n[ \"$(id -u)\" = 0 ] && echo zygote > %s\nexit 3\n" % marker)
    os.chmod(fake, 0o755)
    os.chown(fake, 65534, 65534)
    holder = subprocess.Popen(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
         "unshare", "--user", "--map-root-user", "--mount", "--propagation", "private",
         "sh", "-c", "mount --bind %s %s && echo bound && exec sleep 300" % (fake, real)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        line = holder.stdout.readline()
        if line != b"bound\n":
            holder.kill()
            print("SKIPPED case 2: no user and mount namespace for nobody here: %s"
                  % holder.stderr.read().decode(errors="replace")[-300:])
            return False
        path = "/proc/%d/root%s" % (holder.pid, real)
        with open(path, "rb") as f:  # the magic link does lead to nobody's file
            check(f.read(2) == b"#!", "%s is not the bound file" % path)
        r = run(c, path)
        got = daemonrun.start(r)
        print("%s: %s" % (path, got))
        check(got.startswith("cold (warm refused: the interpreter's path passes through /proc") if WARM
              else got == "cold", "%s: %r (want cold, through /proc)" % (path, got))
        check(not os.path.exists(marker), "%s: nobody's file ran as root outside the sandbox" % path)
        return True
    finally:
        holder.kill()
        holder.wait()


def environment(c, check):
    bad = [("PYTHONWARNINGS", "ignore::calendar.IllegalMonthError", "PYTHONWARNINGS in the environment"),
           ("PYTHONHASHSEED", "abc", None), ("PYTHONHASHSEED", "4294967296", None), ("PYTHONHASHSEED", "-1", None),
           ("PYTHONINTMAXSTRDIGITS", "100", None), ("PYTHONINTMAXSTRDIGITS", "1e9", None),
           ("PYTHONUTF8", "2", None), ("PYTHONCOERCECLOCALE", "yes", None),
           ("PYTHONIOENCODING", "encodings.utf_8", None), ("PYTHONIOENCODING", "../x", None),
           ("LANG", "../../tmp/x", None), ("LANGUAGE", "..:en", None), ("LC_ALL", "/tmp/locale", None), ("LANGUAGE", "en us", None),
           ("LC_all", "C", None), ("PYTHONUNBUFFERED", "x/y", None)]
    for name, value, why in bad:
        got = daemonrun.start(run(c, daemonrun.PY, **{name: value}))
        want = "cold (warm refused: " + (why or name + "'s value in the environment is not one the warm start-up takes")
        want = want if WARM else "cold"
        print("%s=%s: %s" % (name, value, got))
        check(got.startswith(want), "%s=%r: %r (want %r)" % (name, value, got, want))
    good = [{"PYTHONHASHSEED": "4294967295"}, {"PYTHONHASHSEED": "random"}, {"PYTHONINTMAXSTRDIGITS": "640"},
            {"PYTHONINTMAXSTRDIGITS": "0"}, {"PYTHONUTF8": "1"}, {"PYTHONCOERCECLOCALE": "warn"},
            {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "LANGUAGE": "en_US:en"},
            {"PYTHONIOENCODING": "utf-8:surrogateescape"}, {"PYTHONUNBUFFERED": "1", "PYTHONOPTIMIZE": "2"}]
    for env in good:
        got = daemonrun.start(run(c, daemonrun.PY, **env))
        print("%s: %s" % (env, got))
        check(got.startswith("warm (") if WARM else got == "cold", "%r: %r (want %s)" % (env, got, WARM and "warm" or "cold"))


DIES = {"PYTHONIOENCODING": "nosuchcodec"}  # start-up's streams fail: the zygote dies before READY
LOST = "cold (warm refused: the slot's zygote ended before it started the program)"
OFF = "zygotes in a row died before they were ready"


def early_deaths(d, c, check):
    seen = [daemonrun.start(run(c, daemonrun.PY, **DIES)) for _ in range(4)]
    print("client A, a start-up that dies:", seen)
    check(seen[:3] == [LOST] * 3, "A's first three: %r (want each %r)" % (seen[:3], LOST))
    check(OFF in seen[3], "A's fourth: %r (want refused at once: %s)" % (seen[3], OFF))
    got = daemonrun.start(run(c, daemonrun.PY))
    print("client A, another start-up:", got)
    check(got.startswith("warm ("), "A's healthy start-up: %r (want warm)" % got)
    off = c.status().get("warm", {}).get("off") or ""
    print("status warm.off:", off)
    check(OFF in off and "uid 0" in off, "status does not say A's start-up is off: %r" % off)

    def as_b():
        b = daemonrun.Client(d.sock)
        same = daemonrun.start(run(b, daemonrun.PY, **DIES))
        healthy = daemonrun.start(run(b, daemonrun.PY))
        print("client B (uid %d), the same start-up: %s; another: %s" % (OTHER_UID, same, healthy))
        b.close()
        return same == LOST and healthy.startswith("warm (")

    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(OTHER_UID)
            os.setuid(OTHER_UID)
            code = 0 if as_b() else 1
        finally:
            sys.stdout.flush()
            os._exit(code)
    _, st = os.waitpid(pid, 0)
    check(st == 0, "client B: warm turned off by client A's deaths (above)")


def main():
    bin_dir, cache = sys.argv[1], sys.argv[2]
    if not os.path.exists(daemonrun.PY):
        print("SKIPPED: no /usr/bin/python3")
        return daemonrun.SKIP
    if os.geteuid() != 0:
        print("SKIPPED: not root (the vetting guards a privileged daemon's zygote)")
        return daemonrun.SKIP
    fails = []

    def check(cond, what):
        if not cond:
            print("FAIL:", what)
            fails.append(what)

    # root's and writable by root only all the way (not /dev/shm, not /tmp:
    # a venv there is refused for its sticky parent before its pyvenv.cfg
    # is looked at), a tmpfs of this test's own mount namespace
    top = tempfile.mkdtemp(prefix="sbwarm-startup-", dir="/run")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "sbwarm-startup", top], check=True)
    only = sys.argv[sys.argv.index("--case") + 1] if "--case" in sys.argv else None
    magic = True
    try:
        # each group with a daemon of its own: no group's zygotes, dead or
        # alive, count for another's
        for name, group in (("venv", lambda d, c: venvs(c, top, check)),
                            ("proc", lambda d, c: magic_link(c, top, check)),
                            ("env", lambda d, c: environment(c, check)),
                            ("deaths", lambda d, c: early_deaths(d, c, check))):
            if (only and name != only) or (name == "deaths" and not WARM):
                continue
            print("--", name)
            d = daemonrun.PrivateDaemon(bin_dir, cache, "--jobs", "1", "--allow-uid", str(OTHER_UID))
            try:
                c = daemonrun.Client(d.sock)
                if group(d, c) is False:
                    magic = False
            finally:
                d.stop()
    finally:
        subprocess.run(["umount", "-l", top])
        os.rmdir(top)
    if fails:
        print("%d failures" % len(fails))
        return 1
    if not magic:
        print("SKIPPED: the /proc case could not run (every other case passed)")
        return daemonrun.SKIP
    print("ok")
    return 0


if __name__ == "__main__":
    time.tzset()
    sys.exit(main())
