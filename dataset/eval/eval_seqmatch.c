/* difflib.SequenceMatcher(None, a, b).ratio(), ported from CPython: b2j
 * index with the autojunk "popular" purge, find_longest_match, and the
 * recursive matching-block search. Works on code points. */
#include <stdlib.h>
#include <string.h>

#include "eval_metrics.h"
#include "eval_unicode.h"

typedef struct {
  uint32_t v;
  size_t j;
} entry;

typedef struct {
  const uint32_t *a, *b;
  size_t na, nb;
  entry *idx;        /* b's positions sorted by (value, position), popular ones removed */
  size_t nidx;
  size_t *j2len, *newj2len; /* indexed by j+1; zero outside the current row */
  size_t *touched, *newtouched;
} matcher;

static int cmp_entry(const void *x, const void *y) {
  const entry *p = x, *q = y;
  if (p->v != q->v) return p->v < q->v ? -1 : 1;
  return p->j < q->j ? -1 : p->j > q->j;
}

static void chain_b(matcher *m) {
  m->idx = sbe_xmalloc((m->nb ? m->nb : 1) * sizeof *m->idx);
  for (size_t j = 0; j < m->nb; j++) m->idx[j] = (entry){m->b[j], j};
  qsort(m->idx, m->nb, sizeof *m->idx, cmp_entry);
  size_t w = 0, ntest = m->nb / 100 + 1;
  for (size_t i = 0; i < m->nb;) {
    size_t k = i;
    while (k < m->nb && m->idx[k].v == m->idx[i].v) k++;
    /* autojunk: for len(b) >= 200, elements seen more than n//100 + 1 times are popular */
    if (!(m->nb >= 200 && k - i > ntest)) {
      memmove(m->idx + w, m->idx + i, (k - i) * sizeof *m->idx);
      w += k - i;
    }
    i = k;
  }
  m->nidx = w;
}

/* Range of idx holding value v. */
static void lookup(const matcher *m, uint32_t v, size_t *lo_out, size_t *hi_out) {
  size_t lo = 0, hi = m->nidx;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->idx[mid].v < v) lo = mid + 1;
    else hi = mid;
  }
  size_t start = lo;
  hi = m->nidx;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->idx[mid].v <= v) lo = mid + 1;
    else hi = mid;
  }
  *lo_out = start;
  *hi_out = lo;
}

static void longest(matcher *m, size_t alo, size_t ahi, size_t blo, size_t bhi, size_t *bi, size_t *bj,
                    size_t *bk) {
  size_t besti = alo, bestj = blo, bestsize = 0, ntouched = 0;
  for (size_t i = alo; i < ahi; i++) {
    size_t lo, hi, nnew = 0;
    lookup(m, m->a[i], &lo, &hi);
    for (size_t e = lo; e < hi; e++) {
      size_t j = m->idx[e].j;
      if (j < blo) continue;
      if (j >= bhi) break;
      size_t k = m->j2len[j] + 1; /* j2len[j-1] lives at index j */
      m->newj2len[j + 1] = k;
      m->newtouched[nnew++] = j + 1;
      if (k > bestsize) besti = i - k + 1, bestj = j - k + 1, bestsize = k;
    }
    for (size_t t = 0; t < ntouched; t++) m->j2len[m->touched[t]] = 0;
    size_t *sw = m->j2len;
    m->j2len = m->newj2len, m->newj2len = sw;
    sw = m->touched;
    m->touched = m->newtouched, m->newtouched = sw;
    ntouched = nnew;
  }
  for (size_t t = 0; t < ntouched; t++) m->j2len[m->touched[t]] = 0;
  /* No junk function, so only the extension over equal (possibly popular)
   * neighbours applies; the junk-only extension loops never fire. */
  while (besti > alo && bestj > blo && m->a[besti - 1] == m->b[bestj - 1]) besti--, bestj--, bestsize++;
  while (besti + bestsize < ahi && bestj + bestsize < bhi && m->a[besti + bestsize] == m->b[bestj + bestsize])
    bestsize++;
  *bi = besti, *bj = bestj, *bk = bestsize;
}

double sbe_seq_ratio_cp(const uint32_t *a, size_t na, const uint32_t *b, size_t nb) {
  if (na + nb == 0) return 1.0;
  matcher m = {.a = a, .b = b, .na = na, .nb = nb};
  chain_b(&m);
  m.j2len = calloc(nb + 1, sizeof *m.j2len);
  m.newj2len = calloc(nb + 1, sizeof *m.newj2len);
  m.touched = sbe_xmalloc((nb + 1) * sizeof *m.touched);
  m.newtouched = sbe_xmalloc((nb + 1) * sizeof *m.newtouched);
  if (!m.j2len || !m.newj2len) abort();
  size_t (*stack)[4] = sbe_xmalloc((na + nb + 2) * sizeof *stack);
  size_t top = 0, matches = 0;
  stack[top][0] = 0, stack[top][1] = na, stack[top][2] = 0, stack[top][3] = nb, top++;
  while (top) {
    top--;
    size_t alo = stack[top][0], ahi = stack[top][1], blo = stack[top][2], bhi = stack[top][3];
    size_t i, j, k;
    longest(&m, alo, ahi, blo, bhi, &i, &j, &k);
    if (!k) continue;
    matches += k;
    if (alo < i && blo < j) stack[top][0] = alo, stack[top][1] = i, stack[top][2] = blo, stack[top][3] = j, top++;
    if (i + k < ahi && j + k < bhi)
      stack[top][0] = i + k, stack[top][1] = ahi, stack[top][2] = j + k, stack[top][3] = bhi, top++;
  }
  free(stack);
  free(m.idx);
  free(m.j2len);
  free(m.newj2len);
  free(m.touched);
  free(m.newtouched);
  return 2.0 * (double)matches / (double)(na + nb);
}

double sbe_seq_ratio(const char *a, const char *b) {
  if (!a || !b) return 0; /* SequenceMatcher on None raises; SURGE scores 0 */
  sbe_ustr ua = {0}, ub = {0};
  sbe_ustr_from_utf8(&ua, a, strlen(a));
  sbe_ustr_from_utf8(&ub, b, strlen(b));
  double r = sbe_seq_ratio_cp(ua.cp, ua.len, ub.cp, ub.len);
  sbe_ustr_free(&ua);
  sbe_ustr_free(&ub);
  return r;
}
