/* Output comparison for test cases: exact bytes, lines, tokens, numbers
 * (judge.h). */
#include "judge.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sbj_compare_default(sbj_compare *c) {
  c->mode = SBJ_LINES;
  c->abs_tol = 1e-6;
  c->rel_tol = 1e-6;
  c->ignore_case = false;
}

static const char *const mode_names[] = {"exact", "lines", "tokens", "numbers", "checker"};

int sbj_mode_parse(const char *name) {
  for (int i = 0; i < (int)(sizeof mode_names / sizeof *mode_names); i++)
    if (strcmp(name, mode_names[i]) == 0) return i;
  return -1;
}

const char *sbj_mode_name(sbj_mode m) { return mode_names[m]; }

/* At most 24 bytes of S, printable, quoted. */
static void quote(char *out, size_t n, const char *s, size_t len) {
  size_t o = 0;
  if (n < 4) {
    if (n) out[0] = 0;
    return;
  }
  out[o++] = '"';
  for (size_t i = 0; i < len && i < 24 && o + 5 < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '"' || ch == '\\') {
      out[o++] = '\\';
      out[o++] = (char)ch;
    } else if (ch == '\n') {
      out[o++] = '\\';
      out[o++] = 'n';
    } else if (ch < 0x20 || ch >= 0x7f) {
      out[o++] = '?';
    } else {
      out[o++] = (char)ch;
    }
  }
  if (len > 24 && o + 4 < n) {
    memcpy(out + o, "...", 3);
    o += 3;
  }
  out[o++] = '"';
  out[o] = 0;
}

static void say(char *why, size_t why_len, const char *what, size_t at, const char *e, size_t elen, const char *a,
                size_t alen) {
  if (!why || !why_len) return;
  char qe[40], qa[40];
  quote(qe, sizeof qe, e, elen);
  quote(qa, sizeof qa, a, alen);
  if (e) snprintf(why, why_len, "%s %zu: expected %s, got %s", what, at, qe, qa);
  else snprintf(why, why_len, "%s %zu: expected the end, got %s", what, at, qa);
}

/* A cursor over lines or tokens of a buffer. */
typedef struct {
  const char *p, *end;
} cursor;

static bool is_blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v'; }

/* The next line without its trailing whitespace; false at the end. Blank
 * lines at the very end count as the end. */
static bool next_line(cursor *c, const char **s, size_t *len) {
  const char *q = c->p;
  bool rest_blank = true;
  for (const char *r = q; r < c->end; r++)
    if (!is_blank(*r) && *r != '\n') {
      rest_blank = false;
      break;
    }
  if (rest_blank) return false;
  const char *nl = memchr(q, '\n', (size_t)(c->end - q));
  const char *stop = nl ? nl : c->end;
  c->p = nl ? nl + 1 : c->end;
  while (stop > q && is_blank(stop[-1])) stop--;
  *s = q;
  *len = (size_t)(stop - q);
  return true;
}

static bool next_token(cursor *c, const char **s, size_t *len) {
  while (c->p < c->end && isspace((unsigned char)*c->p)) c->p++;
  if (c->p >= c->end) return false;
  const char *q = c->p;
  while (c->p < c->end && !isspace((unsigned char)*c->p)) c->p++;
  *s = q;
  *len = (size_t)(c->p - q);
  return true;
}

/* A whole token as a finite or infinite double (strtod's syntax: "1e5",
 * "-0.5", "inf"); false for anything else ("1,5", "0x" half-numbers). */
static bool token_number(const char *s, size_t len, double *v) {
  char buf[128];
  if (len == 0 || len >= sizeof buf) return false;
  memcpy(buf, s, len);
  buf[len] = 0;
  char *end;
  errno = 0;
  *v = strtod(buf, &end);
  return end == buf + len && !isnan(*v);
}

static bool near(const sbj_compare *c, double e, double a) {
  if (e == a) return true; /* also equal infinities */
  if (isinf(e) || isinf(a) || isnan(e) || isnan(a)) return false;
  double d = fabs(e - a);
  return d <= c->abs_tol || d <= c->rel_tol * fabs(e);
}

/* Equal bytes, ASCII letters folded when C ignores case. */
static bool same_bytes(const sbj_compare *c, const char *e, size_t elen, const char *a, size_t alen) {
  if (elen != alen) return false;
  if (!c->ignore_case) return memcmp(e, a, elen) == 0;
  for (size_t i = 0; i < elen; i++) {
    unsigned char x = (unsigned char)e[i], y = (unsigned char)a[i];
    if (x >= 'A' && x <= 'Z') x = (unsigned char)(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = (unsigned char)(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

static bool tokens_equal(const sbj_compare *c, const char *e, size_t elen, const char *a, size_t alen) {
  if (same_bytes(c, e, elen, a, alen)) return true;
  double ev, av;
  return c->mode == SBJ_NUMBERS && token_number(e, elen, &ev) && token_number(a, alen, &av) && near(c, ev, av);
}

bool sbj_output_equal(const sbj_compare *c, const char *expected, size_t expected_len, const char *actual,
                      size_t actual_len, char *why, size_t why_len) {
  if (why && why_len) why[0] = 0;
  if (c->mode == SBJ_EXACT) {
    size_t i = 0;
    while (i < expected_len && i < actual_len && expected[i] == actual[i]) i++;
    if (i == expected_len && i == actual_len) return true;
    say(why, why_len, "byte", i, i < expected_len ? expected + i : NULL, expected_len - i, actual + i,
        actual_len > i ? actual_len - i : 0);
    if (why && i >= actual_len && i < expected_len) {
      char qe[40];
      quote(qe, sizeof qe, expected + i, expected_len - i);
      snprintf(why, why_len, "byte %zu: expected %s, got the end", i, qe);
    }
    return false;
  }
  bool lines = c->mode == SBJ_LINES;
  bool (*next)(cursor *, const char **, size_t *) = lines ? next_line : next_token;
  cursor ce = {expected, expected + expected_len}, ca = {actual, actual + actual_len};
  for (size_t n = 1;; n++) {
    const char *e, *a;
    size_t elen = 0, alen = 0;
    bool he = next(&ce, &e, &elen), ha = next(&ca, &a, &alen);
    if (!he && !ha) return true;
    const char *what = lines ? "line" : "token";
    if (!ha) {
      char qe[40];
      quote(qe, sizeof qe, e, elen);
      if (why && why_len) snprintf(why, why_len, "%s %zu: expected %s, got the end", what, n, qe);
      return false;
    }
    if (!he) {
      say(why, why_len, what, n, NULL, 0, a, alen);
      return false;
    }
    bool same = lines ? same_bytes(c, e, elen, a, alen) : tokens_equal(c, e, elen, a, alen);
    if (!same) {
      say(why, why_len, what, n, e, elen, a, alen);
      return false;
    }
  }
}

const char *sbj_checker_verdict(bool exited, int status) {
  if (exited && status == 0) return "accepted";
  if (exited && (status == 1 || status == 2)) return "wrong_answer";
  return "judge_error";
}
