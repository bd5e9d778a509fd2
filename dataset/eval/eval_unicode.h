/* Code-point strings and the slice of Python's str semantics SURGE's scoring
 * relies on: UTF-8 <-> code points, str.isspace(), regex \w, str.lower()
 * (full mapping, Final_Sigma included), strip() and split(). */
#ifndef SURGEBOX_EVAL_UNICODE_H
#define SURGEBOX_EVAL_UNICODE_H
#include <stddef.h>
#include <stdint.h>

/* A growable array of code points (a Python str). */
typedef struct {
  uint32_t *cp;
  size_t len, cap;
} sbe_ustr;

/* Allocation helpers: abort with a message when memory runs out. */
void *sbe_xmalloc(size_t n);
void *sbe_xrealloc(void *p, size_t n);
char *sbe_xstrndup(const char *s, size_t n);

/* Decodes UTF-8 leniently: surrogates encoded in three bytes are kept as
 * code points (Python keeps lone surrogates from JSON), and each byte of an
 * invalid sequence becomes U+DC80+byte, like Python's surrogateescape. */
void sbe_ustr_from_utf8(sbe_ustr *out, const char *s, size_t n);
/* Encodes code points back to UTF-8 (the inverse of the decoder above);
 * returns a NUL-terminated malloc'd string, its length in *out_len. */
char *sbe_utf8_from_cp(const uint32_t *cp, size_t n, size_t *out_len);
void sbe_ustr_push(sbe_ustr *s, uint32_t c);
void sbe_ustr_append(sbe_ustr *s, const uint32_t *cp, size_t n);
void sbe_ustr_free(sbe_ustr *s);

int sbe_u_isspace(uint32_t c);  /* Python str.isspace() for one character */
int sbe_u_isword(uint32_t c);   /* re's \w on str: isalnum() or '_' */
int sbe_u_iscased(uint32_t c);
int sbe_u_iscaseignorable(uint32_t c);
int sbe_u_decimal(uint32_t c);  /* unicodedata.decimal(c), or -1 */

/* Appends Python's s.lower() of cp[0..n) to out. */
void sbe_u_lower(const uint32_t *cp, size_t n, sbe_ustr *out);
/* Python's s.strip(): the bounds [*b, *e) of cp[0..n) without surrounding whitespace. */
void sbe_u_strip(const uint32_t *cp, size_t n, size_t *b, size_t *e);

/* One token of s.split(): cp[off .. off+len). */
typedef struct {
  size_t off, len;
} sbe_span;
/* Python's s.split() with no argument; returns the token count, *out malloc'd. */
size_t sbe_u_split_ws(const uint32_t *cp, size_t n, sbe_span **out);
/* Index of the first occurrence of lit (ASCII) at or after from, or (size_t)-1. */
size_t sbe_u_find(const uint32_t *cp, size_t n, size_t from, const char *lit);
#endif
