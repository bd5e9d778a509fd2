/* SURGE's jaccard_similarity: sets of s.lower().split() tokens. */
#include <stdlib.h>
#include <string.h>

#include "eval_metrics.h"
#include "eval_unicode.h"

typedef struct {
  const uint32_t *cp;
  size_t len;
} token;

static int cmp_token(const void *a, const void *b) {
  const token *x = a, *y = b;
  size_t n = x->len < y->len ? x->len : y->len;
  for (size_t i = 0; i < n; i++)
    if (x->cp[i] != y->cp[i]) return x->cp[i] < y->cp[i] ? -1 : 1;
  return x->len < y->len ? -1 : x->len > y->len;
}

/* Sorted distinct tokens of lower(s).split(); the tokens point into *low. */
static size_t token_set(const char *s, size_t n, sbe_ustr *low, token **out) {
  sbe_ustr u = {0};
  sbe_ustr_from_utf8(&u, s, n);
  sbe_u_lower(u.cp, u.len, low);
  sbe_ustr_free(&u);
  sbe_span *sp;
  size_t nt = sbe_u_split_ws(low->cp, low->len, &sp);
  token *t = sbe_xmalloc((nt ? nt : 1) * sizeof *t);
  for (size_t i = 0; i < nt; i++) t[i] = (token){low->cp + sp[i].off, sp[i].len};
  free(sp);
  qsort(t, nt, sizeof *t, cmp_token);
  size_t w = 0;
  for (size_t i = 0; i < nt; i++)
    if (w == 0 || cmp_token(&t[w - 1], &t[i]) != 0) t[w++] = t[i];
  *out = t;
  return w;
}

double sbe_jaccard_n(const char *a, size_t na, const char *b, size_t nb) {
  if (!a || !b) return 0; /* None.lower() raises; SURGE's try/except returns 0 */
  sbe_ustr la = {0}, lb = {0};
  token *ta, *tb;
  size_t ca = token_set(a, na, &la, &ta), cb = token_set(b, nb, &lb, &tb);
  size_t inter = 0, i = 0, j = 0;
  while (i < ca && j < cb) {
    int c = cmp_token(&ta[i], &tb[j]);
    if (c == 0) inter++, i++, j++;
    else if (c < 0) i++;
    else j++;
  }
  size_t uni = ca + cb - inter;
  double r = (ca == 0 && cb == 0) ? 1.0 : (double)inter / (double)uni;
  free(ta);
  free(tb);
  sbe_ustr_free(&la);
  sbe_ustr_free(&lb);
  return r;
}

double sbe_jaccard(const char *a, const char *b) {
  if (!a || !b) return 0;
  return sbe_jaccard_n(a, strlen(a), b, strlen(b));
}
