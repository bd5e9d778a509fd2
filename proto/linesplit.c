/* Incremental "\n" line splitter with a hard cap on line length. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"

/* Above this, the buffer is released after each line instead of kept for
 * the next one, so an idle connection that once sent a big job does not pin
 * megabytes. */
#define KEEP_BUFFER_MAX ((size_t)256 << 10)

void sbp_linesplit_init(sbp_linesplit *ls, size_t max_line) {
  memset(ls, 0, sizeof *ls);
  ls->max_line = max_line ? max_line : SBP_DEFAULT_MAX_LINE;
}

void sbp_linesplit_free(sbp_linesplit *ls) {
  free(ls->buf);
  ls->buf = NULL;
  ls->len = ls->cap = 0;
  ls->discarding = false;
}

size_t sbp_linesplit_buffered(const sbp_linesplit *ls) { return ls->len; }

static bool is_blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return false;
  return true;
}

static void reset_buffer(sbp_linesplit *ls) {
  ls->len = 0;
  if (ls->cap > KEEP_BUFFER_MAX) {
    free(ls->buf);
    ls->buf = NULL;
    ls->cap = 0;
  }
}

/* Caller guarantees ls->len + n <= ls->max_line. */
static int append(sbp_linesplit *ls, const char *p, size_t n) {
  if (n == 0) return 0;
  size_t need = ls->len + n;
  if (need > ls->cap) {
    size_t cap = ls->cap ? ls->cap : 4096;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (cap > ls->max_line) cap = ls->max_line;
    if (cap < need) cap = need;
    char *nb = realloc(ls->buf, cap);
    if (!nb) return -ENOMEM;
    ls->buf = nb;
    ls->cap = cap;
  }
  memcpy(ls->buf + ls->len, p, n);
  ls->len = need;
  return 0;
}

int sbp_linesplit_feed(sbp_linesplit *ls, const void *data, size_t len, sbp_line_fn fn, void *ctx) {
  const char *p = data;
  const char *end = p + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t seg = (size_t)((nl ? nl : end) - p);
    const char *next = nl ? nl + 1 : end;

    if (ls->discarding) { /* the tail of an oversize line already reported */
      if (nl) ls->discarding = false;
      p = next;
      continue;
    }
    if (seg > ls->max_line - ls->len) { /* this line is too long */
      size_t seen = ls->len + seg;
      reset_buffer(ls);
      if (!nl) ls->discarding = true;
      p = next;
      int rc = fn(ctx, SBP_LINE_TOO_LARGE, NULL, seen);
      if (rc) return rc;
      continue;
    }
    if (!nl) { /* unfinished: keep it for the next chunk */
      int rc = append(ls, p, seg);
      if (rc) {
        reset_buffer(ls);
        ls->discarding = true; /* the rest of this line is meaningless now */
      }
      return rc;
    }
    p = next;
    const char *line = p - seg - 1;
    bool buffered = ls->len > 0;
    if (buffered) { /* completes a buffered line */
      int rc = append(ls, line, seg);
      if (rc) {
        reset_buffer(ls);
        return rc;
      }
      line = ls->buf;
      seg = ls->len;
    }
    int rc = 0;
    if (!is_blank(line, seg)) rc = fn(ctx, SBP_LINE_OK, line, seg);
    if (buffered) reset_buffer(ls);
    if (rc) return rc;
  }
  return 0;
}

int sbp_linesplit_finish(sbp_linesplit *ls, sbp_line_fn fn, void *ctx) {
  int rc = 0;
  if (!ls->discarding && ls->len && !is_blank(ls->buf, ls->len))
    rc = fn(ctx, SBP_LINE_OK, ls->buf, ls->len);
  ls->discarding = false;
  ls->len = 0;
  reset_buffer(ls);
  return rc;
}
