"""A root file system made of bind mounts of the host's directories, as
schroot, sbuild and pbuilder give their programs: shared by the chroot and
pivoted-root tests. Call inside a private mount namespace (unshare)."""
import os
import subprocess

# The host's directories, bound at the same paths (a merged-/usr symlink
# such as /bin -> usr/bin stays a symlink).
HOST_DIRS = ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/var", "/opt"]


UIDS = "/run/surgebox/uids"


def sh(*cmd):
    subprocess.run(list(cmd), check=True)


def bind_at_same_path(root, path, recursive=False):
    """Bind host directory path at root+path (parents created)."""
    target = root + path
    os.makedirs(target, exist_ok=True)
    sh("mount", "--rbind" if recursive else "--bind", path, target)


def make_root(base, keep, mount_point=True):
    """base: an empty directory, made a tmpfs; the root is base itself (a
    mount point, as pivot_root needs) or, mount_point False, a plain
    directory in it (as pbuilder's unpacked chroot is). Returns the root,
    holding the binds; keep: further host directories bound at the same path
    (the build tree, the data). /proc is fresh (the caller's pid namespace),
    /tmp and /run are fresh tmpfs."""
    sh("mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", base)
    root = base if mount_point else os.path.join(base, "rootfs")
    os.makedirs(root, exist_ok=True)
    for d in HOST_DIRS:
        if os.path.islink(d):
            os.symlink(os.readlink(d), root + d)
        elif os.path.isdir(d):
            bind_at_same_path(root, d)
    bind_at_same_path(root, "/dev", recursive=True)
    bind_at_same_path(root, "/sys", recursive=True)  # cgroup file systems included
    os.makedirs(root + "/proc")
    sh("mount", "-t", "proc", "proc", root + "/proc")
    for d in ("/tmp", "/run"):
        os.makedirs(root + d)
        sh("mount", "-t", "tmpfs", "-o", "mode=1777" if d == "/tmp" else "mode=0755", "tmpfs", root + d)
    # the uid leases stay the machine's: a daemon in the root must not hand
    # out a uid that a daemon outside holds (runners/uids.c)
    os.makedirs(UIDS, mode=0o700, exist_ok=True)
    bind_at_same_path(root, UIDS)
    os.makedirs(root + "/root", mode=0o700)
    for d in keep:
        if os.path.isdir(d):
            bind_at_same_path(root, d)
    return root


def run_chrooted(root, argv):
    """argv in a plain chroot (the mount namespace's root stays the host's)."""
    return subprocess.run(["chroot", root] + argv).returncode


def run_pivoted(root, argv):
    """argv under root made the mount namespace's root: pivot_root into it,
    the old root unmounted (as container runtimes do)."""
    script = ('cd "$1" && mkdir -p .oldroot && pivot_root . .oldroot && cd / && umount -l /.oldroot '
              '&& rmdir /.oldroot && shift && exec "$@"')
    return subprocess.run(["sh", "-c", script, "sh", root] + argv).returncode


def rerun_inside(script, bin_dir, src_dir, mode, stage_var, extra_keep=()):
    """Build a fresh root keeping the source, the build and extra_keep, and
    rerun script (BIN_DIR SRC_DIR MODE) in it with stage_var=inside:
    chrooted (chroot, chroot-dir: the root not a mount point) or pivoted."""
    import tempfile
    root = tempfile.mkdtemp(prefix="sb-fsroot-")
    build = os.path.realpath(os.path.join(bin_dir, ".."))
    keep = [os.path.realpath(src_dir), build, *extra_keep]
    root = make_root(root, keep, mount_point=mode != "chroot-dir")
    os.environ[stage_var] = "inside"
    argv = ["python3", os.path.abspath(script), bin_dir, src_dir, mode]
    run = run_pivoted if mode == "pivot" else run_chrooted
    return run(root, argv)
