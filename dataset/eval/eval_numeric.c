/* SURGE's parse_numerical_output and its numerical / sorting / Monte Carlo
 * scores for SC and TC. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_extract.h"
#include "eval_metrics.h"
#include "eval_unicode.h"

typedef struct {
  const uint32_t *cp;
  size_t n;
} view;

static int contains(view s, const char *lit) { return sbe_u_find(s.cp, s.n, 0, lit) != (size_t)-1; }
static int has_char(view s, uint32_t c) {
  for (size_t i = 0; i < s.n; i++)
    if (s.cp[i] == c) return 1;
  return 0;
}

static void push_num(sbe_numlist *l, double v) {
  l->v = sbe_xrealloc(l->v, (l->n + 1) * sizeof *l->v);
  l->v[l->n++] = v;
}

/* float(piece) after optionally stripping whitespace and trailing dots. */
static int add_piece(sbe_numlist *l, const uint32_t *cp, size_t n, int strip, int rstrip_dot) {
  size_t b = 0, e = n;
  if (strip) sbe_u_strip(cp, n, &b, &e);
  if (rstrip_dot)
    while (e > b && cp[e - 1] == '.') e--;
  double v;
  if (sbe_py_float_cp(cp + b, e - b, &v) != 0) return -1;
  push_num(l, v);
  return 0;
}

/* s.split(',') and float(x.strip()) of each piece; skip_blank drops pieces
 * that strip to nothing. */
static int split_commas(sbe_numlist *l, view s, int skip_blank) {
  size_t start = 0;
  for (size_t i = 0; i <= s.n; i++) {
    if (i < s.n && s.cp[i] != ',') continue;
    size_t b, e;
    sbe_u_strip(s.cp + start, i - start, &b, &e);
    if (!(skip_blank && b == e) && add_piece(l, s.cp + start, i - start, 1, 0) != 0) return -1;
    start = i + 1;
  }
  return 0;
}

static int split_ws(sbe_numlist *l, view s, int rstrip_dot) {
  sbe_span *tok;
  size_t nt = sbe_u_split_ws(s.cp, s.n, &tok);
  int r = 0;
  for (size_t i = 0; i < nt && r == 0; i++) r = add_piece(l, s.cp + tok[i].off, tok[i].len, 0, rstrip_dot);
  free(tok);
  return r;
}

/* Copy of s without the characters in drop. */
static void without(view s, const char *drop, sbe_ustr *out) {
  for (size_t i = 0; i < s.n; i++)
    if (s.cp[i] >= 128 || !strchr(drop, (int)s.cp[i])) sbe_ustr_push(out, s.cp[i]);
}

static int parse_cp(view in, sbe_numlist *l) {
  sbe_ustr t = {0}, c = {0};
  for (size_t i = 0; i < in.n; i++) sbe_ustr_push(&t, in.cp[i] == '\n' ? ' ' : in.cp[i]);
  size_t b, e;
  sbe_u_strip(t.cp, t.len, &b, &e);
  view s = {t.cp + b, e - b};
  int has_e = contains(s, "e+") || contains(s, "e-"), r;
  if (has_char(s, ',') && has_e) {
    r = split_commas(l, s, 0);
  } else if (has_e) { /* numpy array of strings: drop quotes and brackets */
    without(s, "'[]", &c);
    r = split_ws(l, (view){c.cp, c.len}, 0);
  } else if (contains(s, "[[") && contains(s, "]]")) { /* numpy matrix: "1." style */
    without(s, "[]", &c);
    r = split_ws(l, (view){c.cp, c.len}, 1);
  } else if (s.n >= 1 && s.cp[0] == '[' && s.cp[s.n - 1] == ']') {
    size_t i = 0, j = s.n; /* s.strip('[]') */
    while (i < j && (s.cp[i] == '[' || s.cp[i] == ']')) i++;
    while (j > i && (s.cp[j - 1] == '[' || s.cp[j - 1] == ']')) j--;
    view inner = {s.cp + i, j - i};
    r = has_char(inner, ',') ? split_commas(l, inner, 1) : split_ws(l, inner, 0);
  } else if (has_char(s, ',')) {
    r = split_commas(l, s, 0);
  } else {
    r = add_piece(l, s.cp, s.n, 0, 0);
  }
  sbe_ustr_free(&t);
  sbe_ustr_free(&c);
  return r;
}

int sbe_parse_numerical(const char *s, sbe_numlist *out) {
  out->v = NULL;
  out->n = 0;
  if (!s) return -1; /* None.replace raises */
  sbe_ustr u = {0};
  sbe_ustr_from_utf8(&u, s, strlen(s));
  int r = parse_cp((view){u.cp, u.len}, out);
  sbe_ustr_free(&u);
  if (r != 0) sbe_numlist_free(out);
  return r;
}

void sbe_numlist_free(sbe_numlist *l) {
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

static void flag(int *f) {
  if (f) *f = 1;
}
#define FLAG(info, field) flag((info) ? &(info)->field : NULL)

/* Both sides as number lists; on a parse failure (either side) flag it and
 * return -1 with nothing left to free. */
static int parse_both(const char *pred, const char *gt, sbe_numlist *o, sbe_numlist *g, sbe_score_info *info) {
  if (sbe_parse_numerical(pred, o) != 0) {
    FLAG(info, parse_failure);
    return -1;
  }
  if (sbe_parse_numerical(gt, g) != 0) {
    FLAG(info, parse_failure);
    sbe_numlist_free(o);
    return -1;
  }
  return 0;
}

double sbe_score_numerical(const char *pred, const char *gt, sbe_score_info *info) {
  sbe_numlist o, g;
  if (parse_both(pred, gt, &o, &g, info) != 0) return 0;
  double score = 0;
  if (g.n == 0) { /* max([]) raises */
    FLAG(info, surge_raised);
  } else {
    double sum = 0;
    for (size_t i = 0; i < g.n; i++) { /* prediction cut or padded with 0 */
      double p = i < o.n ? o.v[i] : 0.0;
      sum += fabs(p - g.v[i]) / (fabs(g.v[i]) + 1e-10);
    }
    double x = 1 - sum / (double)g.n;
    if (isnan(x))
      FLAG(info, nan_other); /* np.clip keeps NaN; reported as 0 */
    else
      score = x < 0 ? 0 : x > 1 ? 1 : x;
  }
  sbe_numlist_free(&o);
  sbe_numlist_free(&g);
  return score;
}

typedef struct {
  double v;
  size_t i;
} ranked;

static int by_value(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->v < y->v) return -1;
  if (x->v > y->v) return 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

/* scipy.stats.rankdata(method='average'), 1-based; v has no NaN. */
static void rank_average(const double *v, size_t n, double *rank) {
  ranked *r = sbe_xmalloc(n * sizeof *r);
  for (size_t i = 0; i < n; i++) r[i] = (ranked){v[i], i};
  qsort(r, n, sizeof *r, by_value);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && r[j + 1].v == r[i].v) j++;
    double avg = ((double)i + (double)j) / 2 + 1;
    for (size_t k = i; k <= j; k++) rank[r[k].i] = avg;
    i = j + 1;
  }
  free(r);
}

static int constant(const double *v, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (!(v[i] == v[0])) return 0;
  return 1;
}

double sbe_spearman(const double *x, const double *y, size_t n) {
  if (n <= 1 || constant(x, n) || constant(y, n)) return NAN;
  for (size_t i = 0; i < n; i++)
    if (isnan(x[i]) || isnan(y[i])) return NAN;
  double *rx = sbe_xmalloc(n * sizeof *rx), *ry = sbe_xmalloc(n * sizeof *ry);
  rank_average(x, n, rx);
  rank_average(y, n, ry);
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; i++) mx += rx[i], my += ry[i];
  mx /= (double)n;
  my /= (double)n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; i++) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  free(rx);
  free(ry);
  return sxy / sqrt(sxx) / sqrt(syy);
}

double sbe_score_sorting(const char *pred, const char *gt, sbe_score_info *info) {
  sbe_numlist o, g;
  if (parse_both(pred, gt, &o, &g, info) != 0) return 0;
  double score = 0;
  if (o.n != g.n) {
    FLAG(info, length_mismatch); /* spearmanr raises */
  } else {
    double r = sbe_spearman(o.v, g.v, o.n);
    if (!isnan(r))
      score = r < 0 ? 0 : r > 1 ? 1 : r;
    else if (o.n <= 1 || constant(o.v, o.n) || constant(g.v, g.n))
      FLAG(info, nan_constant);
    else
      FLAG(info, nan_other);
  }
  sbe_numlist_free(&o);
  sbe_numlist_free(&g);
  return score;
}

/* s.split(":")[-1].strip() */
static char *after_last_colon(const char *s) {
  const char *c = strrchr(s, ':');
  const char *p = c ? c + 1 : s;
  sbe_ustr u = {0};
  sbe_ustr_from_utf8(&u, p, strlen(p));
  size_t b, e;
  sbe_u_strip(u.cp, u.len, &b, &e);
  char *r = sbe_utf8_from_cp(u.cp + b, e - b, NULL);
  sbe_ustr_free(&u);
  return r;
}

double sbe_score_montecarlo(const char *pred, const char *gt, sbe_score_info *info) {
  if (!pred || !gt) { /* None.split crashes SURGE's evaluation */
    FLAG(info, surge_raised);
    return 0;
  }
  char *p = after_last_colon(pred), *g = after_last_colon(gt);
  double s = sbe_score_numerical(p, g, info);
  free(p);
  free(g);
  return s;
}

static int is_numerical_fid(const char *fid) {
  static const char *const keys[] = {"gd_", "rk_", "qr_", "lu_", "power_method_", "heat_eq_", "euler_", "fft_"};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
    if (strstr(fid, keys[i])) return 1;
  return 0;
}

double sbe_score_sc_tc(const char *raw_pred, const char *gt, const char *fid, sbe_score_info *info) {
  if (!raw_pred || !gt) {
    FLAG(info, no_answer);
    return 0;
  }
  if (!fid) { /* a missing fid raises in SURGE */
    FLAG(info, surge_raised);
    return 0;
  }
  char *out = sbe_extract(raw_pred);
  if (!out) FLAG(info, no_answer);
  double s;
  if (is_numerical_fid(fid))
    s = sbe_score_numerical(out, gt, info);
  else if (strstr(fid, "sort"))
    s = sbe_score_sorting(out, gt, info);
  else if (!strncmp(fid, "mc_", 3))
    s = sbe_score_montecarlo(out, gt, info);
  else
    s = out && !strcmp(out, gt);
  free(out);
  return s;
}
