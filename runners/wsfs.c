/* Link-safe file access beneath a directory fd (parent side).
 *
 * Once a program ran in a workspace, every name in it is hostile: a
 * directory may have become a symlink to a host directory, a file a hard
 * link or a FIFO. The daemon runs as root, so a path-based mkdir/open/chown
 * there would write or chown wherever the program pointed it (Judge0's
 * CVE-2024-28185/28189). Everything here resolves from the workspace's
 * directory fd with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV), creates with O_EXCL after an
 * unlinkat (an existing name is replaced, never written through) and
 * changes owners and modes on fds only. */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define WALK_MAX_DEPTH 128 /* deeper trees are refused: the cache does not key or store them */

/* Kernels before 5.6 (or a container's seccomp profile) have no openat2:
 * resolve one component at a time, each with O_NOFOLLOW, refusing "..",
 * symlinks and other file systems. Equivalent here because the daemon only
 * touches a workspace between steps, when no program of it is alive to
 * rename directories under the walk. */
static int open_compat(int dirfd, const char *rel, int flags, mode_t mode) {
  struct stat root, st;
  if (fstat(dirfd, &root) < 0) return -errno;
  SBU_AUTOCLOSE int cur = dup(dirfd);
  if (cur < 0) return -errno;
  const char *s = rel;
  for (;;) {
    while (*s == '/') s++;
    const char *e = strchrnul(s, '/');
    const char *next = e;
    while (*next == '/') next++;
    bool last = *next == '\0';
    char comp[NAME_MAX + 1];
    size_t n = (size_t)(e - s);
    if (n > NAME_MAX) return -ENAMETOOLONG;
    memcpy(comp, n ? s : ".", n ? n : 1);
    comp[n ? n : 1] = '\0';
    if (strcmp(comp, "..") == 0) return -EXDEV;
    SBU_AUTOCLOSE int fd = last ? openat(cur, comp, flags | O_NOFOLLOW | O_CLOEXEC, mode)
                                : openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int e2 = errno;
    if (fd < 0 && e2 == ENOTDIR && fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
      e2 = ELOOP; /* as openat2 says it */
    if (fd < 0) return -e2;
    if (fstat(fd, &st) < 0 || st.st_dev != root.st_dev) return -EXDEV;
    if (last) return sbu_take_fd(&fd);
    sbu_closep(&cur); /* one level down */
    cur = sbu_take_fd(&fd);
    s = next;
  }
}

int sb_wsfs_open(int dirfd, const char *rel, int flags, mode_t mode) {
  static bool no_openat2;
  if (no_openat2) return open_compat(dirfd, rel, flags, mode);
  struct open_how how = {
      .flags = (uint64_t)(flags | O_CLOEXEC),
      .mode = (flags & O_CREAT) ? (uint64_t)(mode & 07777) : 0,
      .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
  };
  for (int tries = 0; tries < 16; tries++) {
    long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof how); /* glibc < 2.39 has no wrapper */
    if (fd >= 0) return (int)fd;
    if (errno == ENOSYS) {
      no_openat2 = true;
      return open_compat(dirfd, rel, flags, mode);
    }
    if (errno != EINTR && errno != EAGAIN) return -errno; /* EAGAIN: a rename raced the lookup */
  }
  return -EAGAIN;
}

/* Owner and mode of a file we created, on its fd. */
static void own_fd(const sb_workspace *ws, int fd, mode_t mode) {
  if (fchmod(fd, mode & 0777) < 0) { /* best effort: the program can still read it */
  }
  if (!ws->rt->userns && fchown(fd, ws->uid, ws->gid) < 0) {
  }
}

/* The directory holding rel's last component, created (0755, the sandbox
 * uid's) where missing; *leaf points into rel. An fd, or -errno. */
static int open_parent(sb_workspace *ws, const char *rel, const char **leaf) {
  SBU_AUTOCLOSE int cur = dup(ws->dirfd);
  if (cur < 0) return -errno;
  const char *s = rel;
  for (const char *e; (e = strchr(s, '/')); s = e + 1) {
    char comp[NAME_MAX + 1];
    size_t n = (size_t)(e - s);
    if (n == 0 || n > NAME_MAX) return -EINVAL;
    memcpy(comp, s, n);
    comp[n] = '\0';
    int next = sb_wsfs_open(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
    if (next == -ENOENT && mkdirat(cur, comp, 0700) == 0) {
      next = sb_wsfs_open(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
      if (next >= 0) own_fd(ws, next, 0755);
    }
    if (next < 0) return next;
    sbu_closep(&cur); /* one level down */
    cur = next;
  }
  *leaf = s;
  return sbu_take_fd(&cur);
}

static int write_all(int fd, const unsigned char *p, size_t len) {
  while (len) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

int sb_wsfs_create(sb_workspace *ws, const char *rel, char err[SB_ERR_MAX]) {
  const char *leaf = NULL;
  SBU_AUTOCLOSE int dir = open_parent(ws, rel, &leaf);
  if (dir < 0) {
    sb_err(err, "directory for %s: %s", rel, strerror(-dir));
    return dir;
  }
  /* Replace whatever has the name (a file, a hard link, a symlink, a FIFO):
   * O_CREAT|O_EXCL|O_NOFOLLOW then makes a fresh inode or fails. */
  if (unlinkat(dir, leaf, 0) < 0 && errno != ENOENT) {
    int e = errno;
    sb_err(err, "replace %s: %s", rel, strerror(e));
    return -e;
  }
  int fd = sb_wsfs_open(dir, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
  if (fd < 0) sb_err(err, "create %s: %s", rel, strerror(-fd));
  return fd;
}

void sb_wsfs_own(const sb_workspace *ws, int fd, mode_t mode) { own_fd(ws, fd, mode); }

int sb_wsfs_write(sb_workspace *ws, const char *rel, const void *data, size_t len, mode_t mode,
                  char err[SB_ERR_MAX]) {
  SBU_AUTOCLOSE int fd = sb_wsfs_create(ws, rel, err);
  if (fd < 0) return fd;
  int rc = write_all(fd, data, len);
  if (rc < 0) sb_err(err, "write %s: %s", rel, strerror(-rc));
  else own_fd(ws, fd, mode);
  return rc;
}

int sb_wsfs_symlink(sb_workspace *ws, const char *rel, const char *target, char err[SB_ERR_MAX]) {
  const char *leaf = NULL;
  SBU_AUTOCLOSE int dir = open_parent(ws, rel, &leaf);
  if (dir < 0 || symlinkat(target, dir, leaf) < 0) {
    int e = dir < 0 ? -dir : errno;
    sb_err(err, "symlink %s: %s", rel, strerror(e));
    return -e;
  }
  SBU_AUTOCLOSE int fd = openat(dir, leaf, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && !ws->rt->userns && fchownat(fd, "", ws->uid, ws->gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
  }
  return 0;
}

int sb_wsfs_mkdir(sb_workspace *ws, const char *rel, mode_t mode, char err[SB_ERR_MAX]) {
  char tmp[PATH_MAX];
  if (snprintf(tmp, sizeof tmp, "%s/", rel) >= (int)sizeof tmp) return -ENAMETOOLONG;
  const char *leaf = NULL;
  SBU_AUTOCLOSE int dir = open_parent(ws, tmp, &leaf); /* the trailing slash: rel itself is a parent */
  if (dir < 0) {
    sb_err(err, "mkdir %s: %s", rel, strerror(-dir));
    return dir;
  }
  own_fd(ws, dir, mode);
  return 0;
}

/* A regular file's bytes from an fd opened O_NONBLOCK (a FIFO never blocks). */
static int read_regular(int fd, const char *rel, size_t max_bytes, unsigned char **data, size_t *len, mode_t *mode,
                        char err[SB_ERR_MAX]) {
  struct stat st;
  if (fstat(fd, &st) < 0) {
    sb_err(err, "%s: %s", rel, strerror(errno));
    return -errno;
  }
  if (!S_ISREG(st.st_mode)) {
    sb_err(err, "%s: not a regular file", rel);
    return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
  }
  if ((uint64_t)st.st_size > max_bytes) {
    sb_err(err, "%s: larger than %zu bytes", rel, max_bytes);
    return -EFBIG;
  }
  size_t cap = (size_t)st.st_size, got = 0;
  SBU_AUTOFREE unsigned char *buf = malloc(cap + 1);
  if (!buf) {
    sb_err(err, "out of memory");
    return -ENOMEM;
  }
  for (;;) { /* up to one byte past the size: a file that grew is refused */
    ssize_t n = read(fd, buf + got, cap + 1 - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      sb_err(err, "read %s: %s", rel, strerror(e));
      return -e;
    }
    if (n == 0) break;
    got += (size_t)n;
    if (got > cap) {
      sb_err(err, "%s: changed while read", rel);
      return -EAGAIN;
    }
  }
  *data = sbu_take_ptr(&buf);
  *len = got;
  if (mode) *mode = st.st_mode & 0777;
  return 0;
}

int sb_wsfs_read_at(int dirfd, const char *rel, size_t max_bytes, unsigned char **data, size_t *len, mode_t *mode,
                    char err[SB_ERR_MAX]) {
  *data = NULL;
  *len = 0;
  SBU_AUTOCLOSE int fd = sb_wsfs_open(dirfd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0);
  if (fd < 0) {
    if (fd == -ELOOP) sb_err(err, "%s: a symbolic link on the way (not followed)", rel);
    else if (fd == -EXDEV) sb_err(err, "%s: outside the workspace", rel);
    else sb_err(err, "%s: %s", rel, strerror(-fd));
    return fd;
  }
  return read_regular(fd, rel, max_bytes, data, len, mode, err);
}

int sb_workspace_read_at(int dirfd, const char *name, size_t max_bytes, unsigned char **data, size_t *len,
                         mode_t *mode, char err[SB_ERR_MAX]) {
  if (!name[0] || strchr(name, '/')) {
    sb_err(err, "%s: not one name", name);
    return -EINVAL;
  }
  return sb_wsfs_read_at(dirfd, name, max_bytes, data, len, mode, err);
}

int sb_workspace_read(sb_workspace *ws, const char *rel, size_t max_bytes, unsigned char **data, size_t *len,
                      mode_t *mode, char err[SB_ERR_MAX]) {
  return sb_wsfs_read_at(ws->dirfd, rel, max_bytes, data, len, mode, err);
}

/* ---- the walk ---- */
typedef struct {
  sb_workspace_visit fn;
  void *ud;
  dev_t dev;
  char rel[PATH_MAX];
  char *err;
} walker;

static int walk_dir(walker *w, int dfd, size_t rel_len, int depth) {
  if (depth > WALK_MAX_DEPTH) {
    sb_err(w->err, "%s: deeper than %d directories", w->rel, WALK_MAX_DEPTH);
    return -ELOOP;
  }
  DIR *d = fdopendir(dfd);
  if (!d) {
    int e = errno;
    close(dfd);
    sb_err(w->err, "%s: %s", w->rel, strerror(e));
    return -e;
  }
  int rc = 0;
  struct dirent *de;
  while (rc == 0 && (errno = 0, de = readdir(d))) {
    const char *name = de->d_name;
    if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]))) continue;
    int n = snprintf(w->rel + rel_len, sizeof w->rel - rel_len, "%s%s", rel_len ? "/" : "", name);
    if (n < 0 || (size_t)n >= sizeof w->rel - rel_len) {
      sb_err(w->err, "path too long under %.*s", (int)rel_len, w->rel);
      rc = -ENAMETOOLONG;
      break;
    }
    struct stat st;
    if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
      rc = -errno;
      sb_err(w->err, "%s: %s", w->rel, strerror(-rc));
      break;
    }
    if (S_ISDIR(st.st_mode) && st.st_dev != w->dev) {
      sb_err(w->err, "%s: another file system", w->rel);
      rc = -EXDEV;
      break;
    }
    rc = w->fn(w->rel, &st, dirfd(d), name, w->ud);
    if (rc == 0 && S_ISDIR(st.st_mode)) {
      int sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) {
        rc = -errno;
        sb_err(w->err, "%s: %s", w->rel, strerror(-rc));
      } else {
        rc = walk_dir(w, sub, rel_len + (size_t)n, depth + 1);
      }
    }
    w->rel[rel_len] = '\0';
  }
  if (rc == 0 && errno) {
    rc = -errno;
    sb_err(w->err, "readdir %s: %s", w->rel, strerror(-rc));
  }
  closedir(d);
  return rc;
}

int sb_workspace_walk(sb_workspace *ws, sb_workspace_visit fn, void *ud, char err[SB_ERR_MAX]) {
  walker w = {.fn = fn, .ud = ud, .err = err};
  struct stat st;
  SBU_AUTOCLOSE int fd = sb_wsfs_open(ws->dirfd, ".", O_RDONLY | O_DIRECTORY, 0);
  if (fd < 0 || fstat(fd, &st) < 0) {
    int e = fd < 0 ? -fd : errno;
    sb_err(err, "workspace: %s", strerror(e));
    return -e;
  }
  w.dev = st.st_dev;
  return walk_dir(&w, sbu_take_fd(&fd), 0, 0); /* walk_dir consumes it */
}
