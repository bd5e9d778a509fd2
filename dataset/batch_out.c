/* batch's answer lines on their way to OUT: whole lines gathered in memory
 * and written with one write(2) per many lines (see batch.h for when). */
#include "batch.h"
#include "clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OUT_FLUSH_BYTES = 64 * 1024 };
#define OUT_MAX_AGE_S 1.0

static int out_room(sbr_batch_out *o, size_t n) {
  if (o->cap - o->len >= n) return 0;
  size_t c = o->cap ? o->cap : OUT_FLUSH_BYTES * 2;
  while (c - o->len < n) c *= 2;
  char *nb = realloc(o->buf, c);
  if (!nb) return -1;
  o->buf = nb;
  o->cap = c;
  return 0;
}

int sbr_batch_out_line(sbr_batch_out *o, const char *const *parts, const size_t *lens, size_t n_parts) {
  size_t total = 1;
  for (size_t i = 0; i < n_parts; i++) total += lens[i];
  if (out_room(o, total) < 0) {
    errno = ENOMEM;
    return -1;
  }
  if (!o->len) o->oldest = sbu_now_s();
  for (size_t i = 0; i < n_parts; i++) {
    memcpy(o->buf + o->len, parts[i], lens[i]);
    o->len += lens[i];
  }
  o->buf[o->len++] = '\n';
  if (o->len >= OUT_FLUSH_BYTES || sbu_now_s() - o->oldest > OUT_MAX_AGE_S) return sbr_batch_out_flush(o);
  return 0;
}

int sbr_batch_out_flush(sbr_batch_out *o) {
  if (!o->len) return 0;
  if (fflush(o->f) != 0) return -1; /* nothing else is written through f; keep its order anyway */
  int fd = fileno(o->f);
  size_t off = 0;
  while (off < o->len) {
    ssize_t n = write(fd, o->buf + off, o->len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      /* what was not written stays out: a resumed run runs those items again */
      o->len = 0;
      return -1;
    }
    off += (size_t)n;
  }
  o->len = 0;
  return 0;
}

void sbr_batch_out_free(sbr_batch_out *o) {
  free(o->buf);
  o->buf = NULL;
  o->len = o->cap = 0;
}
