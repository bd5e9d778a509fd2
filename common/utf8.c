/* UTF-8 well-formedness: see utf8.h. */
#include "utf8.h"

size_t sbu_utf8_seq(const unsigned char *s, size_t n) {
  if (n == 0) return 0;
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
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

bool sbu_utf8_valid(const void *s, size_t n) {
  const unsigned char *p = s;
  for (size_t i = 0; i < n;) {
    size_t k = sbu_utf8_seq(p + i, n - i);
    if (!k) return false;
    i += k;
  }
  return true;
}
