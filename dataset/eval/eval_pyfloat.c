/* Python's float(str): Unicode digits and spaces, underscores between digits,
 * inf/infinity/nan in any case, surrounding whitespace; no hex. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval_metrics.h"
#include "eval_unicode.h"

static int ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static int digit(char c) { return c >= '0' && c <= '9'; }

/* The decimal grammar _Py_dg_strtod accepts, on an already stripped string. */
static int valid_decimal(const char *s) {
  if (*s == '+' || *s == '-') s++;
  size_t nd = 0;
  while (digit(*s)) s++, nd++;
  if (*s == '.') {
    s++;
    while (digit(*s)) s++, nd++;
  }
  if (!nd) return 0;
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '+' || *s == '-') s++;
    if (!digit(*s)) return 0;
    while (digit(*s)) s++;
  }
  return *s == '\0';
}

int sbe_py_float_cp(const uint32_t *cp, size_t n, double *out) {
  /* _PyUnicode_TransformDecimalAndSpaceToASCII, then underscore removal. */
  char *buf = sbe_xmalloc(n + 1);
  size_t w = 0;
  char prev = '\0';
  int ok = 1;
  for (size_t i = 0; i < n && ok; i++) {
    uint32_t c = cp[i];
    char ch;
    if (c < 127)
      ch = (char)c;
    else if (sbe_u_isspace(c))
      ch = ' ';
    else if (sbe_u_decimal(c) >= 0)
      ch = (char)('0' + sbe_u_decimal(c));
    else
      ch = '?';
    if (ch == '\0' || ch == '?') ok = 0;
    if (ch == '_') {
      if (!digit(prev)) ok = 0; /* underscores only after a digit ... */
    } else {
      if (prev == '_' && !digit(ch)) ok = 0; /* ... and before one */
      buf[w++] = ch;
    }
    prev = ch;
  }
  if (prev == '_') ok = 0;
  buf[w] = '\0';
  char *s = buf, *e = buf + w;
  while (s < e && ascii_space(*s)) s++;
  while (e > s && ascii_space(e[-1])) e--;
  *e = '\0';
  if (ok && s == e) ok = 0;
  if (ok) {
    const char *p = s;
    int neg = *p == '-';
    if (*p == '-' || *p == '+') p++;
    if (!strcasecmp(p, "inf") || !strcasecmp(p, "infinity"))
      *out = neg ? -HUGE_VAL : HUGE_VAL;
    else if (!strcasecmp(p, "nan"))
      *out = neg ? -NAN : NAN;
    else if (valid_decimal(s))
      *out = strtod(s, NULL); /* correctly rounded, like Python's dtoa */
    else
      ok = 0;
  }
  free(buf);
  return ok ? 0 : -1;
}

int sbe_py_float(const char *s, double *out) {
  if (!s) return -1;
  sbe_ustr u = {0};
  sbe_ustr_from_utf8(&u, s, strlen(s));
  int r = sbe_py_float_cp(u.cp, u.len, out);
  sbe_ustr_free(&u);
  return r;
}
