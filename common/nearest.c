/* Did-you-mean suggestions (nearest.h). */
#include "nearest.h"

#include <ctype.h>
#include <stdbool.h>
#include <strings.h>
#include <string.h>

#define NEAR_MAX 64

size_t sbu_edit_distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  if (n > NEAR_MAX || m > NEAR_MAX) return (size_t)-1;
  size_t d[NEAR_MAX + 1][NEAR_MAX + 1];
  for (size_t i = 0; i <= n; i++) d[i][0] = i;
  for (size_t j = 0; j <= m; j++) d[0][j] = j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      int ai = tolower((unsigned char)a[i - 1]), bj = tolower((unsigned char)b[j - 1]);
      size_t best = d[i - 1][j - 1] + (ai != bj);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && ai == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == bj &&
          d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[n][m];
}

/* "g++" read as "gpp" or "gxx" (how a name with '+' gets typed without it). */
static size_t plus_distance(const char *word, const char *cand) {
  char a[NEAR_MAX + 1], b[NEAR_MAX + 1];
  size_t n = strlen(cand);
  if (n > NEAR_MAX || !strchr(cand, '+')) return (size_t)-1;
  for (size_t i = 0; i <= n; i++) {
    a[i] = cand[i] == '+' ? 'p' : cand[i];
    b[i] = cand[i] == '+' ? 'x' : cand[i];
  }
  size_t da = sbu_edit_distance(word, a), db = sbu_edit_distance(word, b);
  return da < db ? da : db;
}

/* word as the start (at least 3 characters: "crux" for "cruxeval") or the
 * end after a non-alphanumeric ("17" for "c++17") of a candidate. */
static bool part_of(const char *word, const char *cand) {
  size_t n = strlen(word), m = strlen(cand);
  if (n >= m || n < 2) return false;
  if (n >= 3 && strncasecmp(cand, word, n) == 0) return true;
  return strcasecmp(cand + m - n, word) == 0 && !isalnum((unsigned char)cand[m - n - 1]);
}

const char *sbu_nearest(const char *word, const char *const *cands, size_t n) {
  const char *best = NULL;
  size_t best_d = (size_t)-1;
  for (size_t i = 0; i < n; i++) {
    if (!cands[i] || strcmp(cands[i], word) == 0) continue;
    size_t d = sbu_edit_distance(word, cands[i]), dp = plus_distance(word, cands[i]);
    if (dp < d) d = dp;
    size_t longer = strlen(word) > strlen(cands[i]) ? strlen(word) : strlen(cands[i]);
    size_t allowed = longer / 3 ? longer / 3 : 1;
    if (d <= allowed && d < best_d) best = cands[i], best_d = d;
  }
  for (size_t i = 0; !best && i < n; i++)
    if (cands[i] && part_of(word, cands[i])) best = cands[i];
  return best;
}
