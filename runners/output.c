/* Captured output (parent side): bounded buffers, and the conversion to the
 * UTF-8 text a JSON result carries. */
#include "internal.h"

#include <nettle/base64.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>

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

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. Rejects
 * overlong forms, surrogates and code points above U+10FFFF. NUL is
 * treated as invalid too: it would cut C strings short downstream. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  if (c >= 0x01 && c < 0x80) return 1;
  size_t len;
  unsigned cp;
  if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07;
  else return 0;
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

char *sb_utf8_sanitize(const unsigned char *data, size_t len, bool *lossy) {
  *lossy = false;
  /* Worst case: every byte becomes the 3-byte U+FFFD. */
  char *out = malloc(len * 3 + 1);
  if (!out) return NULL;
  size_t o = 0;
  for (size_t i = 0; i < len;) {
    size_t n = utf8_seq(data + i, len - i);
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

void sb_sha256_hex(const unsigned char *data, size_t len, char out[65]) {
  struct sha256_ctx ctx;
  uint8_t d[SHA256_DIGEST_SIZE];
  sha256_init(&ctx);
  sha256_update(&ctx, len, data);
  sha256_digest(&ctx, sizeof d, d);
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < sizeof d; i++) {
    out[2 * i] = hex[d[i] >> 4];
    out[2 * i + 1] = hex[d[i] & 15];
  }
  out[64] = '\0';
}

char *sb_base64(const unsigned char *data, size_t len) {
  char *out = malloc(BASE64_ENCODE_RAW_LENGTH(len) + 1);
  if (!out) return NULL;
  base64_encode_raw(out, len, data);
  out[BASE64_ENCODE_RAW_LENGTH(len)] = '\0';
  return out;
}
