/* Small helpers shared by parent and child code. Nothing here allocates
 * (sb_rm_rf, parent only, is in wsfs.c with the other link-safe walks). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
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
