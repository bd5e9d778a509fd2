/* mkdir -p and rm -rf for the daemon, the toolchain builder, dataset/ and
 * bench/ (moved here from runners/ so that their users need not include the
 * sandbox's header for them). sb_rm_rf is the link-safe one: it walks from
 * directory fds, never follows a symlink and never enters another file
 * system (a job's files may be hostile). */
#include "fs_tree.h"

#include "cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int sb_mkdir_p(const char *path, mode_t mode) {
  /* Most calls find the parents there already: try the leaf first (the
   * sandbox set-up calls this ~30 times per run). */
  if (mkdir(path, mode) == 0 || errno == EEXIST) return 0;
  if (errno != ENOENT) return -errno;
  char tmp[PATH_MAX];
  if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) return -ENAMETOOLONG;
  for (char *p = tmp + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    /* parents are traversable; only the leaf gets the caller's mode */
    if (mkdir(tmp, 0755) < 0 && errno != EEXIST) return -errno;
    *p = '/';
  }
  if (mkdir(tmp, mode) < 0 && errno != EEXIST) return -errno;
  return 0;
}

/* ---- removal ---- */
/* A directory to empty; a non-root owner may have left it mode 000 or 0500:
 * open it up first (on an O_PATH fd through /proc: fchmod refuses O_PATH,
 * and a path-based chmod would follow a link). */
static int open_for_removal(int parent, const char *name) {
  int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == EACCES) {
    SBU_AUTOCLOSE int p = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (p < 0) return -errno;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", p);
    if (chmod(proc, 0700) < 0) return -EACCES;
    fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd < 0) return -errno;
  struct stat st;
  if (fstat(fd, &st) == 0 && (st.st_mode & 0700) != 0700 && geteuid() != 0) fchmod(fd, st.st_mode | 0700);
  return fd;
}

/* Empty the directory dfd (consumed); never follows a symlink, never
 * enters another file system. A directory deeper than RM_MAX_DEPTH is
 * moved up into the top directory (top) under a fresh name rather than
 * entered, so a hostile 10,000-level chain costs passes, not fds; the top
 * level keeps passing while anything moved or went. 0 or -errno (the first
 * failure). */
#define RM_MAX_DEPTH 32
static int empty_dir(int dfd, int top, dev_t dev, int depth) {
  DIR *d = fdopendir(dfd);
  if (!d) {
    close(dfd);
    return -errno;
  }
  if (depth == 0) top = dirfd(d);
  static unsigned moved;
  int rc = 0;
  for (int pass = 0; pass < (depth ? 3 : 1 << 20); pass++) { /* entries removed while reading may hide others */
    bool progress = false;
    struct dirent *de;
    rewinddir(d);
    while ((de = readdir(d))) {
      const char *name = de->d_name;
      if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]))) continue;
      struct stat st;
      if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
      if (S_ISDIR(st.st_mode) && st.st_dev != dev) { /* a mount: left alone */
        if (!rc) rc = -EXDEV;
      } else if (S_ISDIR(st.st_mode) && depth >= RM_MAX_DEPTH) {
        char fresh[32];
        snprintf(fresh, sizeof fresh, ".sb-deep-%u", ++moved);
        int sub = open_for_removal(dirfd(d), name); /* moving a directory needs write on it (its "..") */
        if (sub >= 0) close(sub);
        if (renameat(dirfd(d), name, top, fresh) == 0) progress = true;
        else if (!rc) rc = -errno;
      } else if (S_ISDIR(st.st_mode)) {
        int sub = open_for_removal(dirfd(d), name);
        int e = sub < 0 ? sub : empty_dir(sub, top, dev, depth + 1);
        if (e < 0 && !rc) rc = e;
        if (unlinkat(dirfd(d), name, AT_REMOVEDIR) == 0) progress = true; /* look again */
      } else if (unlinkat(dirfd(d), name, 0) == 0) {
        progress = true;
      } else if (!rc) {
        rc = -errno;
      }
    }
    if (!progress) break;
    if (depth == 0) rc = 0; /* a failure that a later pass may undo (a moved directory) */
  }
  closedir(d);
  return rc;
}

int sb_rm_rf(const char *path) {
  SBU_AUTOCLOSE int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == EACCES) { /* a mode-000 top directory of our own */
    SBU_AUTOCLOSE int p = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", p);
    if (p >= 0 && chmod(proc, 0700) == 0) fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd < 0) {
    if (errno == ENOENT) return 0;
    if (errno == ENOTDIR || errno == ELOOP) return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
    return -errno;
  }
  struct stat st;
  if (fstat(fd, &st) < 0) return -errno;
  if (geteuid() != 0 && (st.st_mode & 0700) != 0700) fchmod(fd, st.st_mode | 0700);
  empty_dir(sbu_take_fd(&fd), -1, st.st_dev, 0); /* consumes it */
  if (rmdir(path) < 0 && errno != ENOENT) return -errno;
  return 0;
}
