/* Small helpers shared by parent and child code. Nothing here allocates,
 * except sb_rm_rf (parent only). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void sb_err(char err[SB_ERR_MAX], const char *fmt, ...) {
  if (!err) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, SB_ERR_MAX, fmt, ap);
  va_end(ap);
}

uint64_t sb_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int sb_write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  int e = n < 0 ? -errno : ((size_t)n == len ? 0 : -EIO);
  close(fd);
  return e;
}

int sb_read_file(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  size_t got = 0;
  while (got + 1 < cap) {
    ssize_t n = read(fd, buf + got, cap - 1 - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = -errno;
      close(fd);
      return e;
    }
    if (n == 0) break;
    got += (size_t)n;
  }
  buf[got] = '\0';
  close(fd);
  return (int)got;
}

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

/* A sandboxed program may leave directories it made unreadable (mode 000):
 * when not root we need rwx on them to empty them. Pre-order, so nftw can
 * descend into each directory right after we opened it up. */
static int open_up_dir(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)ftw;
  if (flag == FTW_D && (st->st_mode & 0700) != 0700) chmod(path, 0700);
  return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  if (flag == FTW_DP || flag == FTW_DNR)
    rmdir(path);
  else
    unlink(path);
  return 0;
}

int sb_rm_rf(const char *path) {
  struct stat st;
  if (lstat(path, &st) < 0) return errno == ENOENT ? 0 : -errno;
  if (S_ISDIR(st.st_mode) && geteuid() != 0) {
    chmod(path, 0700);
    nftw(path, open_up_dir, 32, FTW_PHYS | FTW_MOUNT);
  }
  /* FTW_PHYS: never follow symlinks a program planted; FTW_MOUNT: never leave
   * the file system (a stray mount must not be emptied). */
  if (nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0) return -errno;
  return access(path, F_OK) == 0 ? -ENOTEMPTY : 0;
}
