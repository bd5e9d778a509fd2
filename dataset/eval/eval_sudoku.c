/* RL sudoku: SURGE's rl_eval branch for the sudoku-player repository. */
#include <stdlib.h>
#include <string.h>

#include "eval_extract.h"
#include "eval_metrics.h"
#include "eval_unicode.h"

#define MARK "------- 0 -------"
#define MARK_LEN 17
#define BOARD_BEFORE 164 /* 18*9 + 2 characters before the mark */

/* SURGE's extract_sudoku: on the stripped text, the last of re.finditer's
 * (non-overlapping) matches, then text[start-164 : end] with Python's slice
 * rules. Returns 0 (None) when there is no match. */
static int cut_board(const uint32_t *cp, size_t n, size_t *from, size_t *to) {
  size_t b, e, pos = (size_t)-1;
  sbe_u_strip(cp, n, &b, &e);
  for (size_t at = b;;) {
    size_t f = sbe_u_find(cp, e, at, MARK);
    if (f == (size_t)-1) break;
    pos = f;
    at = f + MARK_LEN;
  }
  if (pos == (size_t)-1) return 0;
  size_t len = e - b, p = pos - b, stop = p + MARK_LEN;
  size_t start; /* a negative start counts from the end, then clamps at 0 */
  if (p >= BOARD_BEFORE)
    start = p - BOARD_BEFORE;
  else
    start = BOARD_BEFORE - p <= len ? len - (BOARD_BEFORE - p) : 0;
  if (start > stop) start = stop; /* empty slice */
  *from = b + start;
  *to = b + stop;
  return 1;
}

static void flag_raised(sbe_score_info *info) {
  if (info) info->surge_raised = 1;
}

double sbe_score_sudoku(const char *raw_pred, const char *gt, sbe_score_info *info) {
  if (!raw_pred || !gt) {
    if (info) info->no_answer = 1;
    return 0;
  }
  sbe_ustr raw = {0}, g = {0}, s1 = {0}, s2 = {0};
  sbe_ustr_from_utf8(&raw, raw_pred, strlen(raw_pred));
  sbe_ustr_from_utf8(&g, gt, strlen(gt));
  if (!sbe_extract_cp(raw.cp, raw.len, &s1) && info) info->no_answer = 1;
  double score = 0;
  int raised = 0;
  size_t from, to;
  if (cut_board(raw.cp, raw.len, &from, &to) && to > from) {
    /* A non-empty cut whose extraction is None makes SequenceMatcher raise:
     * the whole item scores 0, even when the first similarity was positive. */
    raised = !sbe_extract_cp(raw.cp + from, to - from, &s2);
  }
  if (raised) {
    flag_raised(info);
  } else {
    double r1 = sbe_seq_ratio_cp(g.cp, g.len, s1.cp, s1.len);
    double r2 = sbe_seq_ratio_cp(g.cp, g.len, s2.cp, s2.len);
    score = r1 > r2 ? r1 : r2;
  }
  sbe_ustr_free(&raw);
  sbe_ustr_free(&g);
  sbe_ustr_free(&s1);
  sbe_ustr_free(&s2);
  return score;
}
