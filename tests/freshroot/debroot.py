"""A fresh Debian 12 root made by debootstrap, set up as a real machine has
it, and programs run in it as a plain chroot or pivoted into. Shared by
test_freshroot.py; call inside a private mount namespace (unshare), as root.

The archive is the one this machine's apt already uses (never a host name
written here): the first non-security http(s) "deb" URI of
/etc/apt/sources.list.d/*.sources, then of sources.list and
sources.list.d/*.list (toolchains/apt_mirror.c's rule), and the first one
whose path holds "security" for the security suite."""
import glob
import os
import shutil
import socket
import subprocess
import time
import urllib.parse

SUITE = "bookworm"
# minbase: the least a Debian 12 machine holds (essential packages and apt);
# whatever a fuller install adds can only help .ci/main, so passing here
# means passing there. .ci/deps installs the rest with apt-get as a user would.
VARIANT = "minbase"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
UIDS = "/run/surgebox/uids"


def sh(*cmd, **kw):
    subprocess.run(list(cmd), check=True, **kw)


def apt_uris(etc_apt="/etc/apt"):
    """Every "deb" URI of the apt configuration, deb822 files first."""
    uris = []
    for path in sorted(glob.glob(os.path.join(etc_apt, "sources.list.d", "*.sources"))):
        with open(path) as f:
            stanza_deb = True
            for line in f:
                low = line.lower()
                if not line.strip():
                    stanza_deb = True
                elif low.startswith("types:"):
                    stanza_deb = "deb" in line.split()[1:]
                elif low.startswith("uris:") and stanza_deb:
                    uris += line.split()[1:]
    lists = [os.path.join(etc_apt, "sources.list")] + sorted(glob.glob(os.path.join(etc_apt, "sources.list.d", "*.list")))
    for path in lists:
        try:
            with open(path) as f:
                for line in f:
                    w = line.split("#", 1)[0].split()
                    if not w or w[0] != "deb":
                        continue
                    i = 1
                    if i < len(w) and w[i].startswith("["):  # [options]: the URI follows "]"
                        while i < len(w) and not w[i].endswith("]"):
                            i += 1
                        i += 1
                    if i < len(w):
                        uris.append(w[i])
        except OSError:
            pass
    return [u for u in uris if u.startswith(("http://", "https://"))]


def mirrors(etc_apt="/etc/apt"):
    """(archive, security archive or None) from apt's configuration."""
    uris = apt_uris(etc_apt)
    main = next((u for u in uris if "security" not in u), None)
    sec = next((u for u in uris if "security" in u), None)
    return main, sec


def reachable(uri, timeout=10):
    u = urllib.parse.urlparse(uri)
    port = u.port or (443 if u.scheme == "https" else 80)
    try:
        with socket.create_connection((u.hostname, port), timeout=timeout):
            return True
    except OSError:
        return False


def unmount_under(d):
    """Unmount everything at or below d, deepest first (lazily)."""
    d = os.path.realpath(d)
    for _ in range(3):
        mounts = [line.split()[1] for line in open("/proc/self/mounts")]
        mine = sorted((m for m in mounts if m == d or m.startswith(d + "/")), key=len, reverse=True)
        if not mine:
            return True
        for m in mine:
            subprocess.run(["umount", "-l", m], capture_output=True)
    return not any(line.split()[1] == d or line.split()[1].startswith(d + "/") for line in open("/proc/self/mounts"))


def remove_tree(d):
    """rm -rf d once nothing is mounted below it (a bound /dev or apt cache
    must never be emptied); refuses and says so otherwise."""
    if not os.path.exists(d):
        return
    if not unmount_under(d):
        print(f"freshroot: {d} still has mounts below it: left in place", flush=True)
        return
    subprocess.run(["rm", "-rf", "--one-file-system", d])


def sources_list(main, sec):
    """What Debian's installer writes for bookworm (main; updates; security)."""
    lines = [f"deb {main} {SUITE} main", f"deb {main} {SUITE}-updates main"]
    if sec:
        lines.append(f"deb {sec} {SUITE}-security main")
    return "\n".join(lines) + "\n"


def tarball(cache, main, log):
    """cache/bookworm-minbase.tar, made by debootstrap when absent. Returns
    (path, seconds spent making it: 0 when cached)."""
    os.makedirs(cache, exist_ok=True)
    tar = os.path.join(cache, f"{SUITE}-{VARIANT}.tar")
    if os.path.exists(tar) and os.path.getsize(tar) > 0:
        return tar, 0.0
    t0 = time.monotonic()
    work = os.path.join(cache, "debootstrap.tmp")
    remove_tree(work)
    os.makedirs(work)
    try:
        with open(log, "w") as lf:
            p = subprocess.run(["nice", "debootstrap", f"--variant={VARIANT}", SUITE, work, main],
                               stdout=lf, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            raise RuntimeError(f"debootstrap {SUITE} exited {p.returncode}: see {log}")
        unmount_under(work)
        sh("chroot", work, "apt-get", "clean")
        for junk in glob.glob(work + "/var/lib/apt/lists/*") + glob.glob(work + "/var/cache/apt/*.bin"):
            if os.path.isfile(junk):
                os.unlink(junk)
        sh("tar", "--numeric-owner", "--one-file-system", "-C", work, "-cf", tar + ".part", ".")
        os.rename(tar + ".part", tar)
    finally:
        remove_tree(work)
    return tar, time.monotonic() - t0


TMPFS_GIB = 8  # the root after .ci/main: ~2.5 GB of packages, the build, the data


def mem_available_gib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / (1 << 20)
    return 0.0


def on_tmpfs():
    """The root in memory (dpkg's fsyncs cost nothing, removing it is an
    unmount) when $SURGEBOX_FRESHROOT_TMPFS says 1, or, unset, when twice
    its size is available; else on disk beside the cache. Either way it is
    a mount point of its own, as a machine's root is. SURGEBOX_FRESHROOT_KEEP
    (keep the root for a look) means on disk."""
    v = os.environ.get("SURGEBOX_FRESHROOT_TMPFS")
    if os.environ.get("SURGEBOX_FRESHROOT_KEEP"):
        return False  # a tmpfs would go with the test's mount namespace
    if v in ("0", "1"):
        return v == "1"
    return mem_available_gib() >= 2 * TMPFS_GIB


HOSTS = """127.0.0.1	localhost
127.0.1.1	{name}

# The following lines are desirable for IPv6 capable hosts
::1     localhost ip6-localhost ip6-loopback
ff02::1 ip6-allnodes
ff02::2 ip6-allrouters
"""


def unpack(tar, root, main, sec, apt_archives):
    """A fresh root from the tarball, made usable as a real machine is:
    apt's sources (the mirror as configured here), /etc/resolv.conf from the
    host (apt resolves the mirror), /etc/hosts and /etc/hostname as Debian's
    installer writes them (a debootstrapped tree has none: localhost would
    not resolve), and root a mount point (pivot_root needs one). apt's
    package cache is bound from apt_archives so that a later run does not
    download the same .debs again (apt checks each against the index it
    fetched; its lists are fetched anew)."""
    os.makedirs(root)
    if on_tmpfs():
        sh("mount", "-t", "tmpfs", "-o", f"mode=0755,size={TMPFS_GIB}g", "tmpfs", root)
    else:
        sh("mount", "--bind", root, root)
    sh("tar", "--numeric-owner", "-C", root, "-xf", tar)
    with open(root + "/etc/apt/sources.list", "w") as f:
        f.write(sources_list(main, sec))
    shutil.copyfile("/etc/resolv.conf", root + "/etc/resolv.conf")
    name = socket.gethostname()
    with open(root + "/etc/hosts", "w") as f:
        f.write(HOSTS.format(name=name))
    with open(root + "/etc/hostname", "w") as f:
        f.write(name + "\n")
    os.makedirs(os.path.join(apt_archives, "partial"), exist_ok=True)
    sh("mount", "--bind", apt_archives, root + "/var/cache/apt/archives")


def mount_machine(root):
    """/proc (this pid namespace's), /sys and /dev (the host's, with the
    cgroup file systems and /dev/pts, /dev/shm), /run a fresh tmpfs as at
    boot. The uid leases stay the machine's, as in tests/chroot/fsroot.py:
    a daemon in the root must not hand out a uid that a daemon outside
    holds (runners/uids.c)."""
    sh("mount", "-t", "proc", "proc", root + "/proc")
    sh("mount", "--rbind", "/sys", root + "/sys")
    sh("mount", "--rbind", "/dev", root + "/dev")
    sh("mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", root + "/run")
    os.makedirs(UIDS, mode=0o700, exist_ok=True)
    os.makedirs(root + UIDS, mode=0o700, exist_ok=True)
    sh("mount", "--bind", UIDS, root + UIDS)


def remount_run(root):
    """A fresh /run for the next run, as after a reboot (no socket or lock
    of the previous run's daemon)."""
    sh("umount", "-l", root + UIDS)
    sh("umount", "-l", root + "/run")
    sh("mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", root + "/run")
    os.makedirs(root + UIDS, mode=0o700, exist_ok=True)
    sh("mount", "--bind", UIDS, root + UIDS)


def login_env(argv):
    """argv under a root login's environment, nothing of ours inherited."""
    return ["env", "-i", "HOME=/root", "USER=root", "LOGNAME=root", "SHELL=/bin/bash", "TERM=dumb",
            "PATH=" + PATH] + argv


def run_logged(cmd, log):
    """cmd's output to log, each line prefixed with the seconds since start
    (where a run's time goes: packages, build, regen). Returns the exit."""
    t0 = time.monotonic()
    with open(log, "a") as lf:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        for raw in p.stdout:
            lf.write("%7.1f %s" % (time.monotonic() - t0, raw.decode(errors="replace")))
        return p.wait()


def run_chrooted(root, argv, log):
    """argv in a plain chroot: the mount namespace's root stays the host's."""
    return run_logged(["chroot", root] + login_env(argv), log)


def run_pivoted(root, argv, log):
    """argv in a new mount namespace whose root is root: pivot_root into it,
    the old root detached (as container runtimes do)."""
    script = ('cd "$1" && mkdir -p .oldroot && pivot_root . .oldroot && cd / && umount -l /.oldroot '
              '&& rmdir /.oldroot && shift && exec "$@"')
    cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", root] + login_env(argv)
    return run_logged(cmd, log)
