/* Captured output (parent side): bounded buffers, and the conversion to the
 * UTF-8 text a JSON result carries (hash and base64 of the raw bytes:
 * common/sha256.h, common/base64.h). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "utf8.h"

bool sb_buf_append(sb_buf *b, const void *data, size_t len, uint64_t cap) {
  size_t room = b->len < cap ? (size_t)(cap - b->len) : 0;
  size_t take = len < room ? len : room;
  if (take) {
    if (b->len + take + 1 > b->cap) {
      size_t want = b->cap ? b->cap * 2 : 4096;
      while (want < b->len + take + 1) want *= 2;
      unsigned char *p = realloc(b->data, want);
      if (!p) { /* treat as truncation: the result says so, nothing crashes */
        b->truncated = true;
        return true;
      }
      b->data = p;
      b->cap = want;
    }
    memcpy(b->data + b->len, data, take);
    b->len += take;
    b->data[b->len] = '\0';
  }
  if (take < len) b->truncated = true;
  return take < len;
}

char *sb_utf8_sanitize(const unsigned char *data, size_t len, bool *lossy) {
  *lossy = false;
  /* Worst case: every byte becomes the 3-byte U+FFFD. */
  char *out = malloc(len * 3 + 1);
  if (!out) return NULL;
  size_t o = 0;
  for (size_t i = 0; i < len;) {
    size_t n = sbu_utf8_seq(data + i, len - i);
    if (n) {
      memcpy(out + o, data + i, n);
      o += n;
      i += n;
    } else {
      memcpy(out + o, "\xEF\xBF\xBD", 3);
      o += 3;
      i += 1;
      *lossy = true;
    }
  }
  out[o] = '\0';
  return out;
}
