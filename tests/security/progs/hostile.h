/* Shared helpers for the hostile test programs.
 *
 * Every program reports what happened as machine-checkable lines
 *     RESULT key=value
 * written with write(2) straight to stdout, so a line survives the program
 * being killed right after. The drivers (run_case.py, run_integration.py)
 * parse them from the result document's stdout.
 *
 * These programs are hostile by design but bounded: each one stops by itself
 * at a cap far above any limit the tests set (and reports that it did), so
 * even a completely broken sandbox cannot take the machine down. They are
 * only ever executed through surgebox-run inside the unshare wrapper. */
#ifndef SURGEBOX_HOSTILE_H
#define SURGEBOX_HOSTILE_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline const char *errname(int e) {
  if (e == 0) return "OK";
  const char *n = strerrorname_np(e);
  return n ? n : "EUNKNOWN";
}

/* "OK" when a syscall-style return value says success, else errno's name. */
static inline const char *outcome(long rc) { return rc < 0 ? errname(errno) : "OK"; }

static inline void write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += w;
    n -= (size_t)w;
  }
}

__attribute__((format(printf, 1, 2))) static inline void result(const char *fmt, ...) {
  char buf[8192];
  int n = snprintf(buf, sizeof buf, "RESULT ");
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
  va_end(ap);
  if (m < 0) m = 0;
  n += m;
  if (n > (int)sizeof buf - 2) n = (int)sizeof buf - 2;
  buf[n++] = '\n';
  write_all(1, buf, (size_t)n);
}

#endif
