/* Python str semantics on code-point arrays; see eval_unicode.h. */
#include "eval_unicode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval_unicode_tables.h"

void *sbe_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "surgebox eval: out of memory\n");
    abort();
  }
  return p;
}

void *sbe_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) {
    fprintf(stderr, "surgebox eval: out of memory\n");
    abort();
  }
  return q;
}

char *sbe_xstrndup(const char *s, size_t n) {
  char *d = sbe_xmalloc(n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

static void reserve(sbe_ustr *s, size_t extra) {
  if (s->len + extra <= s->cap) return;
  size_t cap = s->cap ? s->cap : 16;
  while (cap < s->len + extra) cap *= 2;
  s->cp = sbe_xrealloc(s->cp, cap * sizeof *s->cp);
  s->cap = cap;
}

void sbe_ustr_push(sbe_ustr *s, uint32_t c) {
  reserve(s, 1);
  s->cp[s->len++] = c;
}

void sbe_ustr_append(sbe_ustr *s, const uint32_t *cp, size_t n) {
  if (!n) return;
  reserve(s, n);
  memcpy(s->cp + s->len, cp, n * sizeof *cp);
  s->len += n;
}

void sbe_ustr_free(sbe_ustr *s) {
  free(s->cp);
  s->cp = NULL;
  s->len = s->cap = 0;
}

void sbe_ustr_from_utf8(sbe_ustr *out, const char *str, size_t n) {
  const unsigned char *s = (const unsigned char *)str;
  out->len = 0;
  reserve(out, n);
  size_t i = 0;
  while (i < n) {
    unsigned b = s[i];
    uint32_t c;
    size_t k;
    if (b < 0x80) {
      out->cp[out->len++] = b;
      i++;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      c = b & 0x1F, k = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      c = b & 0x0F, k = 2;
    } else if (b >= 0xF0 && b <= 0xF4) {
      c = b & 0x07, k = 3;
    } else {
      out->cp[out->len++] = 0xDC00 + b;
      i++;
      continue;
    }
    size_t j = 1;
    for (; j <= k && i + j < n && (s[i + j] & 0xC0) == 0x80; j++) c = (c << 6) | (s[i + j] & 0x3F);
    /* Reject truncated, overlong and out-of-range sequences byte by byte. */
    if (j <= k || (k == 2 && c < 0x800) || (k == 3 && (c < 0x10000 || c > 0x10FFFF))) {
      out->cp[out->len++] = 0xDC00 + b;
      i++;
      continue;
    }
    out->cp[out->len++] = c;
    i += k + 1;
  }
}

char *sbe_utf8_from_cp(const uint32_t *cp, size_t n, size_t *out_len) {
  char *o = sbe_xmalloc(n * 4 + 1);
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t c = cp[i];
    if (c < 0x80) {
      o[w++] = (char)c;
    } else if (c >= 0xDC80 && c <= 0xDCFF) {
      o[w++] = (char)(c - 0xDC00); /* surrogateescape: the original byte */
    } else if (c < 0x800) {
      o[w++] = (char)(0xC0 | (c >> 6));
      o[w++] = (char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      o[w++] = (char)(0xE0 | (c >> 12));
      o[w++] = (char)(0x80 | ((c >> 6) & 0x3F));
      o[w++] = (char)(0x80 | (c & 0x3F));
    } else {
      o[w++] = (char)(0xF0 | (c >> 18));
      o[w++] = (char)(0x80 | ((c >> 12) & 0x3F));
      o[w++] = (char)(0x80 | ((c >> 6) & 0x3F));
      o[w++] = (char)(0x80 | (c & 0x3F));
    }
  }
  o[w] = '\0';
  if (out_len) *out_len = w;
  return o;
}

static int in_ranges(const uint32_t (*r)[2], size_t n, uint32_t c) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (c < r[mid][0])
      hi = mid;
    else if (c > r[mid][1])
      lo = mid + 1;
    else
      return 1;
  }
  return 0;
}

int sbe_u_isspace(uint32_t c) {
  if (c < 0x80) return (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x20);
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

int sbe_u_isword(uint32_t c) { return in_ranges(sbe_tab_word, sbe_tab_word_count, c); }
int sbe_u_iscased(uint32_t c) { return in_ranges(sbe_tab_cased, sbe_tab_cased_count, c); }
int sbe_u_iscaseignorable(uint32_t c) {
  return in_ranges(sbe_tab_case_ignorable, sbe_tab_case_ignorable_count, c);
}

int sbe_u_decimal(uint32_t c) {
  if (c >= '0' && c <= '9') return (int)(c - '0');
  size_t lo = 0, hi = sbe_tab_digit_zero_count;
  while (lo < hi) { /* last zero <= c */
    size_t mid = lo + (hi - lo) / 2;
    if (sbe_tab_digit_zero[mid] <= c)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return -1;
  uint32_t z = sbe_tab_digit_zero[lo - 1];
  return c - z < 10 ? (int)(c - z) : -1;
}

static uint32_t lower1(uint32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  size_t lo = 0, hi = sbe_tab_lower_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const sbe_lower_run *r = &sbe_tab_lower[mid];
    if (c < r->first)
      hi = mid;
    else if (c > r->last)
      lo = mid + 1;
    else
      return (c - r->first) % r->stride == 0 ? (uint32_t)((int32_t)c + r->delta) : c;
  }
  return c;
}

/* CPython's handle_capital_sigma: U+03A3 lowers to final sigma when preceded
 * by a cased letter and not followed by one (case-ignorables skipped). */
static uint32_t lower_sigma(const uint32_t *cp, size_t n, size_t i) {
  size_t j = i;
  uint32_t c = 0;
  while (j > 0) {
    c = cp[--j];
    if (!sbe_u_iscaseignorable(c)) break;
    c = 0;
  }
  int final = c != 0 && sbe_u_iscased(c);
  if (final && i + 1 < n) {
    for (j = i + 1; j < n; j++)
      if (!sbe_u_iscaseignorable(cp[j])) break;
    final = j == n || !sbe_u_iscased(cp[j]);
  }
  return final ? 0x3C2 : 0x3C3;
}

void sbe_u_lower(const uint32_t *cp, size_t n, sbe_ustr *out) {
  reserve(out, n + 1);
  for (size_t i = 0; i < n; i++) {
    uint32_t c = cp[i];
    if (c == 0x130) { /* the one multi-character lowercase mapping: i + combining dot */
      sbe_ustr_push(out, 0x69);
      sbe_ustr_push(out, 0x307);
    } else if (c == 0x3A3) {
      sbe_ustr_push(out, lower_sigma(cp, n, i));
    } else {
      sbe_ustr_push(out, lower1(c));
    }
  }
}

void sbe_u_strip(const uint32_t *cp, size_t n, size_t *b, size_t *e) {
  size_t i = 0, j = n;
  while (i < j && sbe_u_isspace(cp[i])) i++;
  while (j > i && sbe_u_isspace(cp[j - 1])) j--;
  *b = i;
  *e = j;
}

size_t sbe_u_split_ws(const uint32_t *cp, size_t n, sbe_span **out) {
  size_t count = 0, cap = 0;
  sbe_span *v = NULL;
  size_t i = 0;
  for (;;) {
    while (i < n && sbe_u_isspace(cp[i])) i++;
    if (i >= n) break;
    size_t start = i;
    while (i < n && !sbe_u_isspace(cp[i])) i++;
    if (count == cap) {
      cap = cap ? cap * 2 : 16;
      v = sbe_xrealloc(v, cap * sizeof *v);
    }
    v[count].off = start;
    v[count].len = i - start;
    count++;
  }
  *out = v;
  return count;
}

size_t sbe_u_find(const uint32_t *cp, size_t n, size_t from, const char *lit) {
  size_t m = strlen(lit);
  if (m > n) return (size_t)-1;
  for (size_t i = from; i + m <= n; i++) {
    size_t k = 0;
    while (k < m && cp[i + k] == (unsigned char)lit[k]) k++;
    if (k == m) return i;
  }
  return (size_t)-1;
}
