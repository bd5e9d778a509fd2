/* The sandbox's file system (child side, inside the new mount namespace,
 * before the identity change). The new root is an empty tmpfs holding:
 *   read-only binds of what toolchains need (/usr, /bin, /sbin, /lib*, /etc),
 *   /etc's secrets masked, /app (the workspace, writable), /tmp (private,
 *   size-capped tmpfs), a minimal /dev, a fresh /proc, extra binds asked for
 *   by the job; then pivot_root into it, detach the old root, and make the
 *   root tmpfs itself read-only. Nothing else of the host stays reachable.
 * Called after clone(): no malloc, no stdio. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

/* Read-only binds from the host; a merged-/usr symlink (/bin -> usr/bin) is
 * recreated as a symlink. Missing ones are skipped. Each directory is served
 * through a private read-only overlay (ro_dir below). */
const char *const sb_host_binds[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", NULL};

/* The overlays' second lower layer (overlayfs wants two without an upper):
 * an empty directory on the new root's tmpfs, removed once they are mounted
 * (an overlay keeps what it stacks). */
#define EMPTY_LOWER "/.sb-empty"

/* Secrets under /etc: files are covered with an empty mode-000 file,
 * directories with an empty read-only tmpfs. */
static const char *const secret_files[] = {
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
    "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key",
    "/etc/ssh/ssh_host_dsa_key", "/etc/machine-id", NULL};
static const char *const secret_dirs[] = {"/etc/ssl/private", "/etc/sudoers.d", "/etc/surgebox", NULL};

static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", NULL};

typedef struct {
  char *what;
  size_t what_len;
} ctx;

static int fail(ctx *c, const char *op, const char *path) {
  int e = errno;
  snprintf(c->what, c->what_len, "%s %s: %s", op, path, strerror(e));
  return -e;
}

static int join(char *out, size_t cap, const char *a, const char *b) {
  if ((size_t)snprintf(out, cap, "%s%s", a, b) >= cap) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

/* mount_setattr() (5.12+) changes flags recursively without the remount
 * rules about "locked" flags in user namespaces; glibc 2.36 may not wrap it. */
static int set_attrs(const char *path, uint64_t attrs, bool recursive) {
  struct mount_attr a = {.attr_set = attrs};
  long rc = syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &a, sizeof a);
  if (rc == 0) return 0;
  if (errno != ENOSYS) return -1;
  unsigned long fl = MS_REMOUNT | MS_BIND;
  if (attrs & MOUNT_ATTR_RDONLY) fl |= MS_RDONLY;
  if (attrs & MOUNT_ATTR_NOSUID) fl |= MS_NOSUID;
  if (attrs & MOUNT_ATTR_NODEV) fl |= MS_NODEV;
  if (attrs & MOUNT_ATTR_NOEXEC) fl |= MS_NOEXEC;
  return mount(NULL, path, NULL, fl, NULL);
}

static int make_mountpoint(const char *path, bool dir) {
  if (dir) return sb_mkdir_p(path, 0755) < 0 ? -1 : 0;
  char parent[PATH_MAX];
  if (join(parent, sizeof parent, path, "") < 0) return -1;
  char *slash = strrchr(parent, '/');
  if (slash && slash != parent) {
    *slash = '\0';
    if (sb_mkdir_p(parent, 0755) < 0) return -1;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 && errno != EEXIST) return -1;
  if (fd >= 0) close(fd);
  return 0;
}

/* A recursive bind of host path src at target, then its flags. */
static int bind_tree(ctx *c, const char *src, const char *target, bool writable) {
  if (mount(src, target, NULL, MS_BIND | MS_REC, NULL) < 0) return fail(c, "bind", src);
  uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (writable ? 0 : MOUNT_ATTR_RDONLY);
  if (set_attrs(target, attrs, true) < 0) return fail(c, "remount", target);
  return 0;
}

/* Appends path to out as an overlayfs option value (',' ':' '\\' escaped),
 * then sep as it is. */
static bool ovl_append(char *out, size_t cap, const char *path, char sep) {
  size_t n = strlen(out);
  for (const char *q = path; *q; q++) {
    if (n + 4 >= cap) return false;
    if (*q == ',' || *q == ':' || *q == '\\') out[n++] = '\\';
    out[n++] = *q;
  }
  out[n++] = sep;
  out[n] = '\0';
  return true;
}

/* A read-only directory from the host, served by an overlay of its own (no
 * upper layer): the job's files then have the overlay's inodes, so its file
 * locks and inotify watches sit on those, never on the host's inodes, which
 * the host and other jobs lock and read (issue 22). Reads, mappings and
 * fadvise still reach the host's page cache (seccomp.c covers eviction).
 * Mounts under src (a container's /etc/hosts, a separate /usr/local) are
 * not in an overlay's lower layer: they are bound on top as before, from
 * the parent's list (p->submounts). Where the kernel refuses the overlay
 * (no overlayfs, a root already stacked twice), the bind as before. */
static int ro_dir(ctx *c, const sb_mount_plan *p, const char *src, const char *target) {
  char empty[PATH_MAX], opts[PATH_MAX * 2 + 32] = "lowerdir=";
  if (join(empty, sizeof empty, p->newroot, EMPTY_LOWER) < 0 || !ovl_append(opts, sizeof opts, src, ':') ||
      !ovl_append(opts, sizeof opts, empty, '\0') ||
      mount("overlay", target, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, opts) < 0)
    return bind_tree(c, src, target, false);
  if (set_attrs(target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false) < 0)
    return fail(c, "remount", target);
  size_t sl = strlen(src);
  for (const char *const *m = p->submounts; m && *m; m++) {
    if (strncmp(*m, src, sl) != 0 || (*m)[sl] != '/') continue;
    char sub[PATH_MAX];
    if (join(sub, sizeof sub, target, *m + sl) < 0) return fail(c, "path", *m);
    int rc = bind_tree(c, *m, sub, false);
    if (rc) return rc;
  }
  return 0;
}

/* Bind host path src at newroot+dst; a read-only directory through ro_dir. */
static int bind(ctx *c, const sb_mount_plan *p, const char *src, const char *dst, bool writable) {
  char target[PATH_MAX];
  if (join(target, sizeof target, p->newroot, dst) < 0) return fail(c, "path", dst);
  struct stat st;
  if (lstat(src, &st) < 0) return fail(c, "stat", src);
  if (S_ISLNK(st.st_mode)) {
    char link[PATH_MAX];
    ssize_t n = readlink(src, link, sizeof link - 1);
    if (n < 0) return fail(c, "readlink", src);
    link[n] = '\0';
    if (symlink(link, target) < 0 && errno != EEXIST) return fail(c, "symlink", target);
    return 0;
  }
  if (make_mountpoint(target, S_ISDIR(st.st_mode)) < 0) return fail(c, "mkdir", target);
  if (S_ISDIR(st.st_mode) && !writable) return ro_dir(c, p, src, target);
  return bind_tree(c, src, target, writable);
}

static int tmpfs(ctx *c, const char *target, const char *opts, unsigned long flags) {
  if (sb_mkdir_p(target, 0755) < 0) return fail(c, "mkdir", target);
  if (mount("tmpfs", target, "tmpfs", flags, opts) < 0) return fail(c, "mount tmpfs", target);
  return 0;
}

static int mask_secrets(ctx *c, const sb_mount_plan *p) {
  char target[PATH_MAX], src[PATH_MAX];
  struct stat st;
  for (const char *const *f = secret_files; *f; f++) {
    if (join(src, sizeof src, p->root, *f) < 0 || lstat(src, &st) < 0 || !S_ISREG(st.st_mode)) continue;
    if (join(target, sizeof target, p->newroot, *f) < 0) return fail(c, "path", *f);
    if (mount(p->empty_file, target, NULL, MS_BIND, NULL) < 0) return fail(c, "mask", *f);
    if (set_attrs(target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false) < 0)
      return fail(c, "remount", target);
  }
  for (const char *const *d = secret_dirs; *d; d++) {
    if (join(src, sizeof src, p->root, *d) < 0 || lstat(src, &st) < 0 || !S_ISDIR(st.st_mode)) continue;
    if (join(target, sizeof target, p->newroot, *d) < 0) return fail(c, "path", *d);
    if (mount("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0755") < 0)
      return fail(c, "mask", *d);
  }
  return 0;
}

/* An identity file: text written to a new file at stage (create: O_TRUNC
 * or O_EXCL), bound read-only over target, then stage unlinked (the bind
 * keeps the inode). name is target as the job will see it, for errors. */
static int bind_text(ctx *c, const char *text, const char *stage, int create, const char *target,
                     const char *name) {
  int fd = open(stage, O_WRONLY | O_CREAT | create | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return fail(c, "create", stage);
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  close(fd);
  if (n != (ssize_t)len) return fail(c, "write", stage);
  if (mount(stage, target, NULL, MS_BIND, NULL) < 0) return fail(c, "bind", name);
  if (set_attrs(target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, false) < 0)
    return fail(c, "remount", target);
  if (unlink(stage) < 0) return fail(c, "unlink", stage);
  return 0;
}

/* The job's own /etc/passwd and /etc/group: files on the root tmpfs bound
 * read-only over the host's, so getpwuid() names the job's uid and an flock
 * on them locks the sandbox's inode, never the host's (a read-only bind
 * still shares the inode, and flock needs no write access). The source name
 * is unlinked after the bind: the mount keeps the inode. */
static int private_identity(ctx *c, const sb_mount_plan *p, const char *name, const char *text) {
  char target[PATH_MAX], src[PATH_MAX];
  struct stat st;
  if (!text || join(target, sizeof target, p->newroot, name) < 0 || lstat(target, &st) < 0 || !S_ISREG(st.st_mode))
    return 0; /* no such file in this root: nothing to replace */
  if (join(src, sizeof src, p->newroot, "/.identity") < 0) return fail(c, "path", name);
  return bind_text(c, text, src, O_TRUNC, target, name);
}

static int build_dev(ctx *c, const sb_mount_plan *p) {
  char dev[PATH_MAX], path[PATH_MAX], src[64];
  if (join(dev, sizeof dev, p->newroot, "/dev") < 0) return fail(c, "path", "/dev");
  int rc = tmpfs(c, dev, "size=64k,mode=0755", MS_NOSUID | MS_NOEXEC);
  if (rc) return rc;
  for (const char *const *n = dev_nodes; *n; n++) {
    snprintf(src, sizeof src, "/dev/%s", *n);
    snprintf(path, sizeof path, "%s/%s", dev, *n);
    /* A node of our own where we may make one (root): a lock or inotify
     * watch on it is the sandbox's, not on the host's /dev/null. In a user
     * namespace mknod is refused: the host's node, bound. */
    struct stat st;
    if (stat(src, &st) == 0 && S_ISCHR(st.st_mode) && mknod(path, S_IFCHR | 0600, st.st_rdev) == 0) {
      if (chmod(path, st.st_mode & 0777) < 0) return fail(c, "chmod", path); /* past the umask */
      continue;
    }
    if (make_mountpoint(path, false) < 0) return fail(c, "create", path);
    if (mount(src, path, NULL, MS_BIND, NULL) < 0) return fail(c, "bind", src);
    if (set_attrs(path, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false) < 0) return fail(c, "remount", path);
  }
  static const char *const links[][2] = {{"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"},
                                         {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"}};
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dev, links[i][1]);
    if (symlink(links[i][0], path) < 0) return fail(c, "symlink", path);
  }
  /* POSIX shared memory (Python multiprocessing, some JVM paths). Its pages
   * are charged to the job's memory cgroup like any tmpfs. */
  snprintf(path, sizeof path, "%s/shm", dev);
  if (p->template) { /* the job mounts its own (sb_mounts_enter_template) */
    if (sb_mkdir_p(path, 0755) < 0) return fail(c, "mkdir", path);
    return set_attrs(dev, MOUNT_ATTR_RDONLY, false) < 0 ? fail(c, "remount", dev) : 0;
  }
  char opts[96];
  snprintf(opts, sizeof opts, "size=%llum,nr_inodes=%llu,mode=1777", (unsigned long long)p->tmp_mib,
           sb_tmpfs_inodes(p->tmp_mib));
  rc = tmpfs(c, path, opts, MS_NOSUID | MS_NODEV);
  if (rc) return rc;
  if (set_attrs(dev, MOUNT_ATTR_RDONLY, false) < 0) return fail(c, "remount", dev);
  return 0;
}

/* Our own mount namespace, as an fd setns() takes: a pidfd of ourselves
 * (5.8+; needs no /proc, which a chroot may lack), else its /proc entry. */
static int own_mnt_ns(void) {
  int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  if (fd >= 0) return fd;
  return open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
}

/* Root and cwd to the top of the mount namespace's root: setns() into the
 * namespace we are already in does that (mntns_install), which is a no-op
 * unless we run in a chroot (schroot, sbuild, pbuilder; HACKING.md,
 * "Prepared sandboxes"). Needs CAP_SYS_ADMIN and CAP_SYS_CHROOT, which the
 * init and the template's builder hold at this point. */
static int to_ns_root(ctx *c, int ns_fd) {
  return setns(ns_fd, CLONE_NEWNS) < 0 ? fail(c, "setns", "own mount namespace") : 0;
}

static int pivot(ctx *c, const sb_mount_plan *p, int ns_fd) {
  /* From the namespace's root, not a chroot's: pivot_root moves the caller's
   * root mount, so from a chroot the new root would be attached where the
   * chroot's directory is, under the host's tree, and a later setns() into
   * this namespace (the pool's jobs) would land at the host's root, where
   * /app does not exist ("move_mount /app: No such file or directory"). */
  int newroot = open(p->newroot, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (newroot < 0) return fail(c, "open", p->newroot);
  int rc = to_ns_root(c, ns_fd);
  if (!rc && fchdir(newroot) < 0) rc = fail(c, "chdir", p->newroot);
  close(newroot);
  if (rc) return rc;
  /* pivot_root(".", ".") stacks the old root under the new one; detaching
   * it leaves only the new tree (the trick from pivot_root(2)'s notes). */
  if (syscall(SYS_pivot_root, ".", ".") < 0) return fail(c, "pivot_root", p->newroot);
  if (umount2(".", MNT_DETACH) < 0) return fail(c, "detach old root", "/");
  if (chdir("/") < 0) return fail(c, "chdir", "/");
  if (set_attrs("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false) < 0)
    return fail(c, "remount read-only", "/");
  return 0;
}

/* sb_mount_ns_propagation on a namespace fd the caller holds. */
static int ns_propagation(int ns, unsigned long flags) {
  int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  int rc = root < 0 || cwd < 0 ? -errno : 0;
  if (!rc && setns(ns, CLONE_NEWNS) < 0) rc = -errno;
  if (!rc && mount(NULL, "/", NULL, MS_REC | flags, NULL) < 0) rc = -errno;
  if (root >= 0 && (fchdir(root) < 0 || chroot(".") < 0) && !rc) rc = -errno; /* back: never stay out */
  if (cwd >= 0 && fchdir(cwd) < 0 && !rc) rc = -errno;
  if (root >= 0) close(root);
  if (cwd >= 0) close(cwd);
  return rc;
}

int sb_mount_ns_propagation(unsigned long flags) {
  int ns = own_mnt_ns();
  if (ns < 0) return -errno;
  int rc = ns_propagation(ns, flags);
  close(ns);
  return rc;
}

/* Nothing we mount may propagate back to the host: every mount of the
 * namespace made private, from its root (a chroot's "/" is only part of it,
 * and may not be a mount point at all), then back into the caller's root,
 * where the host paths of the plan are resolved. */
static int private_namespace(ctx *c, int ns_fd) {
  int rc = ns_propagation(ns_fd, MS_PRIVATE);
  if (rc < 0) {
    errno = -rc;
    return fail(c, "make private", "the mount namespace");
  }
  return 0;
}

/* A template (pool.c) has mount points where a job's own file systems go:
 * /app, /tmp, /dev/shm and /proc stay empty directories, and /etc/passwd and
 * /etc/group are the root's own until the job binds its identity over them. */
static int mountpoint_only(ctx *c, const char *path, mode_t mode) {
  return sb_mkdir_p(path, mode) < 0 ? fail(c, "mkdir", path) : 0;
}

int sb_mounts_build_root(const sb_mount_plan *p, char *what, size_t what_len) {
  ctx c = {what, what_len};
  char path[PATH_MAX], opts[128];
  int ns_fd = own_mnt_ns();
  if (ns_fd < 0) return fail(&c, "open", "own mount namespace");
  int rc = private_namespace(&c, ns_fd); /* one fd of our namespace for this and the pivot */
  if (!rc) rc = tmpfs(&c, p->newroot, "size=1m,mode=0755", MS_NOSUID | MS_NODEV);
  char src[PATH_MAX], empty[PATH_MAX];
  if (!rc && (join(empty, sizeof empty, p->newroot, EMPTY_LOWER) < 0 || mkdir(empty, 0555) < 0))
    rc = fail(&c, "mkdir", EMPTY_LOWER);
  for (const char *const *b = sb_host_binds; !rc && *b; b++) {
    if (join(src, sizeof src, p->root, *b) < 0) rc = fail(&c, "path", *b);
    else if (access(src, F_OK) == 0) rc = bind(&c, p, src, *b, false);
  }
  if (!rc) rc = mask_secrets(&c, p);
  if (!rc && !p->template) rc = private_identity(&c, p, "/etc/passwd", p->etc_passwd);
  if (!rc && !p->template) rc = private_identity(&c, p, "/etc/group", p->etc_group);
  if (!rc) {
    join(path, sizeof path, p->newroot, "/app");
    if (p->template) {
      rc = mountpoint_only(&c, path, 0755);
    } else if (p->workspace) {
      rc = bind(&c, p, p->workspace, "/app", true);
    } else {
      snprintf(opts, sizeof opts, "size=%llum,nr_inodes=%llu,mode=0755,uid=%u,gid=%u",
               (unsigned long long)p->app_mib, sb_tmpfs_inodes(p->app_mib), (unsigned)p->uid, (unsigned)p->gid);
      rc = tmpfs(&c, path, opts, MS_NOSUID | MS_NODEV);
    }
  }
  if (!rc) {
    join(path, sizeof path, p->newroot, "/tmp");
    snprintf(opts, sizeof opts, "size=%llum,nr_inodes=%llu,mode=1777", (unsigned long long)p->tmp_mib,
             sb_tmpfs_inodes(p->tmp_mib));
    rc = p->template ? mountpoint_only(&c, path, 0755) : tmpfs(&c, path, opts, MS_NOSUID | MS_NODEV);
  }
  if (!rc) rc = build_dev(&c, p);
  if (!rc) {
    join(path, sizeof path, p->newroot, "/proc");
    if (sb_mkdir_p(path, 0555) < 0) rc = fail(&c, "mkdir", path);
    else if (!p->template && mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
      rc = fail(&c, "mount", "/proc");
  }
  for (size_t i = 0; !rc && i < p->n_extra; i++) {
    if (access(p->extra[i].source, F_OK) < 0) continue; /* optional toolchain paths */
    rc = bind(&c, p, p->extra[i].source, p->extra[i].target, p->extra[i].writable);
  }
  if (!rc && rmdir(empty) < 0) rc = fail(&c, "rmdir", EMPTY_LOWER);
  if (!rc) rc = pivot(&c, p, ns_fd);
  close(ns_fd);
  return rc;
}

/* The job's identity file: staged in its fresh /tmp (the template's root is
 * read-only and shared), bound read-only over the root's, then unlinked so
 * the job's /tmp looks empty; the bind keeps the inode. */
static int job_identity(ctx *c, const char *name, const char *stage, const char *text) {
  struct stat st;
  if (!text || lstat(name, &st) < 0 || !S_ISREG(st.st_mode)) return 0;
  return bind_text(c, text, stage, O_EXCL, name, name);
}

int sb_mounts_enter_template(const sb_mount_plan *p, int tmpl_fd, int app_tree_fd, char *what, size_t what_len) {
  ctx c = {what, what_len};
  char opts[128];
  /* Into the template (root and cwd become its root), then a private copy
   * of it: what this job mounts never reaches the template or another job. */
  if (setns(tmpl_fd, CLONE_NEWNS) < 0) return fail(&c, "setns", "template");
  if (unshare(CLONE_NEWNS) < 0) return fail(&c, "unshare", "mount namespace");
  int rc = 0;
  if (app_tree_fd >= 0) {
    if (syscall(SYS_move_mount, app_tree_fd, "", AT_FDCWD, "/app", MOVE_MOUNT_F_EMPTY_PATH) < 0)
      rc = fail(&c, "move_mount", "/app");
  } else {
    snprintf(opts, sizeof opts, "size=%llum,nr_inodes=%llu,mode=0755,uid=%u,gid=%u",
             (unsigned long long)p->app_mib, sb_tmpfs_inodes(p->app_mib), (unsigned)p->uid, (unsigned)p->gid);
    if (mount("tmpfs", "/app", "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) rc = fail(&c, "mount tmpfs", "/app");
  }
  snprintf(opts, sizeof opts, "size=%llum,nr_inodes=%llu,mode=1777", (unsigned long long)p->tmp_mib,
           sb_tmpfs_inodes(p->tmp_mib));
  if (!rc && mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) rc = fail(&c, "mount tmpfs", "/tmp");
  if (!rc && mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
    rc = fail(&c, "mount tmpfs", "/dev/shm");
  if (!rc && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    rc = fail(&c, "mount", "/proc");
  if (!rc) rc = job_identity(&c, "/etc/passwd", "/tmp/.sb-passwd", p->etc_passwd);
  if (!rc) rc = job_identity(&c, "/etc/group", "/tmp/.sb-group", p->etc_group);
  return rc;
}
