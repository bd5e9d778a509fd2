/* difflib.SequenceMatcher(None, a, b).ratio() (autojunk included) and the RL
 * sudoku score. Expected values from CPython 3.11's difflib. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "eval_metrics.h"

/* n copies of unit, malloc'd. */
static char *rep(const char *unit, size_t n) {
  size_t u = strlen(unit);
  char *s = malloc(u * n + 1);
  for (size_t i = 0; i < n; i++) memcpy(s + i * u, unit, u);
  s[u * n] = '\0';
  return s;
}

static char *cat3(const char *a, const char *b, const char *c) {
  size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
  char *s = malloc(la + lb + lc + 1);
  memcpy(s, a, la);
  memcpy(s + la, b, lb);
  memcpy(s + la + lb, c, lc + 1);
  return s;
}

#define BOARD                                                                                                   \
  "7 9 6 5 8 1 2 3 4 \n3 4 2 7 9 6 1 5 8 \n5 8 1 3 4 2 6 7 9 \n9 6 7 8 1 5 4 2 3 \n4 2 3 9 6 7 8 1 5 \n" \
  "8 1 5 4 2 3 9 6 7 \n6 7 9 1 5 8 3 4 2 \n2 3 4 6 7 9 5 8 1 \n1 5 8 2 3 4 7 9 6 \n------- 0 -------\n"

int main(void) {
  CHECK_NEAR(sbe_seq_ratio("abcd", "bcde"), 0.75, 1e-15);
  CHECK_NEAR(sbe_seq_ratio("", ""), 1.0, 0);
  CHECK_NEAR(sbe_seq_ratio("abc", ""), 0.0, 0);
  CHECK_NEAR(sbe_seq_ratio("tide", "diet"), 0.25, 1e-15); /* not symmetric */
  CHECK_NEAR(sbe_seq_ratio("diet", "tide"), 0.5, 1e-15);
  CHECK_NEAR(sbe_seq_ratio("h\xc3\xa9llo w\xc3\xb6rld", "hello world"), 0.8181818181818182, 1e-15); /* code points */
  CHECK_NEAR(sbe_seq_ratio("abc", NULL), 0.0, 0);

  /* autojunk: len(b) = 300, 'a' and 'b' each occur 150 > 300//100 + 1 times */
  char *a = rep("ab", 150), *b1 = rep("a", 150), *b2 = rep("b", 150), *b = cat3(b1, b2, "");
  CHECK_NEAR(sbe_seq_ratio(a, b), 0.0033333333333333335, 1e-15); /* 0.5033... without autojunk */
  free(a), free(b1), free(b2), free(b);
  /* x=250 then y vs 250 '=' then xy: '=' is popular */
  char *eq = rep("=", 250);
  a = cat3("x", eq, "y"), b = cat3(eq, "xy", "");
  CHECK_NEAR(sbe_seq_ratio(a, b), 0.007936507936507936, 1e-15);
  free(a), free(b), free(eq);
  /* blocks still extend over popular neighbours: identical strings score 1 */
  char *dash = rep("-", 210);
  a = cat3("q", dash, "z");
  CHECK_NEAR(sbe_seq_ratio(a, a), 1.0, 0);
  free(a);
  free(dash);
  dash = rep("-", 220);
  a = cat3("abc", dash, "def"), b = cat3(dash, "abcdef", "");
  CHECK_NEAR(sbe_seq_ratio(a, b), 0.02654867256637168, 1e-15);
  free(a), free(b), free(dash);
  /* everything popular: no match at all */
  char *x = rep("x", 100), *abc = rep("abc", 40);
  a = cat3(x, abc, ""), b = cat3(abc, x, "");
  CHECK_NEAR(sbe_seq_ratio(a, b), 0.0, 0);
  free(a), free(b), free(x), free(abc);
  /* the 200 threshold: a size-0 match still extends from (0, 0) */
  char *a10 = rep("a", 10), *a199 = rep("a", 199), *a200 = rep("a", 200);
  CHECK_NEAR(sbe_seq_ratio(a10, a199), 0.09569377990430622, 1e-15);
  CHECK_NEAR(sbe_seq_ratio(a10, a200), 0.09523809523809523, 1e-15);
  free(a10), free(a199), free(a200);
  char *abcd = rep("abcd", 49);
  b = cat3("xyz", abcd, "k"); /* len 200: a-d occur 49 times, x, y, z, k once */
  CHECK_NEAR(sbe_seq_ratio("xyzabcdk", b), 0.07692307692307693, 1e-15);
  free(b), free(abcd);
  /* Greek text longer than 200 characters, against its upper case */
  char *greek = rep("\xce\xa3\xce\xaf\xcf\x83\xcf\x85\xcf\x86\xce\xbf\xcf\x82 ", 30); /* "Σίσυφος " */
  char *upper = rep("\xce\xa3\xce\x8a\xce\xa3\xce\xa5\xce\xa6\xce\x9f\xce\xa3 ", 30);  /* "ΣΊΣΥΦΟΣ " */
  CHECK_NEAR(sbe_seq_ratio(greek, upper), 0.004166666666666667, 1e-15);
  free(greek), free(upper);

  /* sudoku: the board cut before the last mark can beat the answer */
  sbe_score_info info = {0};
  CHECK_NEAR(sbe_score_sudoku("Thought: I solve it.\n" BOARD "\nOutput: the board is solved", BOARD, &info),
             0.975609756097561, 1e-15);
  CHECK(info.surge_raised == 0);
  /* mark near the start: the negative slice start wraps, the slice is empty */
  char *tail = rep("x", 300);
  a = cat3("Output: 7 9 6\n------- 0 -------\n", tail, "");
  CHECK_NEAR(sbe_score_sudoku(a, BOARD, NULL), 0.0935672514619883, 1e-15);
  free(a), free(tail);
  /* a non-empty cut whose extraction is None: SURGE raises, the item scores 0 */
  char *pad = rep("a", 160);
  a = cat3("Output: 7\n**\n\n", pad, "------- 0 -------");
  info = (sbe_score_info){0};
  CHECK_NEAR(sbe_score_sudoku(a, BOARD, &info), 0.0, 0); /* ratio(gt, extract(raw)) alone is 0.0207 */
  CHECK(info.surge_raised == 1);
  free(a), free(pad);
  /* overlapping marks: re.finditer keeps the first (rfind would give 0.918) */
  CHECK_NEAR(sbe_score_sudoku("Thought:\n7 9 6 5 8 1 2 3 4 \n3 4 2 7 9 6 1 5 8 \n5 8 1 3 4 2 6 7 9 \n9 6 7 8 1 5 4 2 3 \n"
                              "4 2 3 9 6 7 8 1 5 \n8 1 5 4 2 3 9 6 7 \n6 7 9 1 5 8 3 4 2 \n2 3 4 6 7 9 5 8 1 \n"
                              "1 5 8 2 3 4 7 9 6 \n------- 0 ------- 0 -------\nOutput: 1 2 3",
                              BOARD, NULL),
             0.975609756097561, 1e-15);
  CHECK_NEAR(sbe_score_sudoku("Output: 7 9 6 5 8 1 2 3 4", BOARD, NULL), 0.1650485436893204, 1e-15);
  /* slicing happens on the stripped text */
  tail = rep("  \n", 100);
  a = cat3(tail, "7 9 6\n------- 0 -------", "");
  CHECK_NEAR(sbe_score_sudoku(a, BOARD, NULL), 0.2169811320754717, 1e-15);
  free(a), free(tail);
  return check_exit();
}
