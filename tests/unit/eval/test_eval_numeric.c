/* Python float(), SURGE's parse_numerical_output, and the SC/TC numerical,
 * sorting (Spearman) and Monte Carlo scores. Expected values from CPython
 * 3.11 (float(), and scipy-free rank-average Spearman). */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "eval_metrics.h"

static void fl_ok(const char *s, double want) {
  double v = -12345;
  int r = sbe_py_float(s, &v);
  CHECK(r == 0);
  if (isnan(want))
    CHECK(isnan(v));
  else
    CHECK(v == want);
}

static void fl_bad(const char *s) {
  double v;
  CHECK(sbe_py_float(s, &v) == -1);
}

static void nums(const char *s, size_t n, const double *want) {
  sbe_numlist l;
  int r = sbe_parse_numerical(s, &l);
  CHECK(r == 0);
  CHECK(l.n == n);
  for (size_t i = 0; i < n && i < l.n; i++) CHECK_NEAR(l.v[i], want[i], 1e-15);
  sbe_numlist_free(&l);
}

static void nums_bad(const char *s) {
  sbe_numlist l;
  CHECK(sbe_parse_numerical(s, &l) == -1);
}

int main(void) {
  /* float() */
  fl_ok("  1_000.5  ", 1000.5);
  fl_ok("nan", NAN);
  fl_ok("-Infinity", -INFINITY);
  fl_ok("iNF", INFINITY);
  fl_ok("+inFINITY", INFINITY);
  fl_ok("1e5", 100000.0);
  fl_ok("1e1_0", 1e10);
  fl_ok(".5", 0.5);
  fl_ok("5.", 5.0);
  fl_ok("\xd9\xa3.\xd9\xa5", 3.5);                /* Arabic-Indic digits */
  fl_ok("\xef\xbc\x91\xef\xbc\x92", 12.0);        /* fullwidth digits */
  fl_ok("\xc2\xa0" "1.5\xe2\x80\x83", 1.5);       /* Unicode spaces around */
  fl_ok("0.1", 0.1);
  fl_bad("1_e5");
  fl_bad("0x10");
  fl_bad("");
  fl_bad("1__0");
  fl_bad("_1");
  fl_bad("1_");
  fl_bad("\x1c" "1"); /* str.isspace, but float() strips ASCII whitespace only */
  fl_bad(".");
  fl_bad("1e");
  fl_bad("infinit");
  fl_bad("- 1");
  fl_bad("nan(1)");

  /* parse_numerical_output, branch by branch */
  nums("1.0e-3, 2.5e+2", 2, (const double[]){0.001, 250.0});                     /* (a) */
  nums("['1.0e-3' '2.5e+2'\n '3e-1']", 3, (const double[]){0.001, 250.0, 0.3}); /* (b) */
  nums("1e-3 2e-3", 2, (const double[]){0.001, 0.002});                          /* (b) */
  nums("[[1. 2.]\n [3. 4.]]", 4, (const double[]){1, 2, 3, 4});                  /* (c) */
  nums_bad("[[1, 2], [3, 4]]");                                                   /* (c): "1," */
  nums("[1, 2, , 3]", 3, (const double[]){1, 2, 3});                             /* (d) blanks dropped */
  nums("[1 2 3]", 3, (const double[]){1, 2, 3});                                 /* (d) */
  nums("[]", 0, NULL);                                                            /* (d) empty list */
  nums("1, 2,3", 3, (const double[]){1, 2, 3});                                  /* (e) */
  nums_bad("1,2,");                                                               /* (e): float('') */
  nums("  42 ", 1, (const double[]){42});                                         /* (f) */
  nums_bad("abc");
  nums_bad("(1, 2)");
  nums_bad(NULL);

  /* numerical: pad with zeros / cut; 1e-10 in the denominator */
  sbe_score_info info = {0};
  CHECK_NEAR(sbe_score_numerical("[1, 2]", "[1, 2, 4]", &info), 0.6666666666750001, 1e-15);
  CHECK_NEAR(sbe_score_numerical("[1,2,4,8]", "[1, 2, 4]", NULL), 1.0, 1e-15);
  CHECK_NEAR(sbe_score_numerical("[1.1, 2, 4]", "[1, 2, 4]", NULL), 0.96666666667, 1e-15);
  CHECK_NEAR(sbe_score_numerical("[100]", "[1]", NULL), 0.0, 0);
  CHECK_NEAR(sbe_score_numerical("0", "0", NULL), 1.0, 0);
  info = (sbe_score_info){0};
  CHECK_NEAR(sbe_score_numerical("[1]", "[]", &info), 0.0, 0); /* empty reference */
  CHECK(info.surge_raised == 1);
  info = (sbe_score_info){0};
  CHECK_NEAR(sbe_score_numerical("nan", "1", &info), 0.0, 0); /* NaN in SURGE */
  CHECK(info.nan_other == 1);
  info = (sbe_score_info){0};
  CHECK_NEAR(sbe_score_numerical("x", "1", &info), 0.0, 0);
  CHECK(info.parse_failure == 1);

  /* Spearman with average ranks for ties */
  CHECK_NEAR(sbe_spearman((const double[]){1, 2, 2, 3}, (const double[]){1, 3, 2, 4}, 4), 0.9486832980505139, 1e-12);
  CHECK_NEAR(sbe_spearman((const double[]){10, 20, 20, 20, 5}, (const double[]){1, 2, 3, 3, 0}, 5), 0.9176629354822471,
             1e-12);
  CHECK(isnan(sbe_spearman((const double[]){5, 5, 5}, (const double[]){1, 2, 3}, 3)));
  CHECK(isnan(sbe_spearman((const double[]){1}, (const double[]){1}, 1)));

  /* sorting: clipped to [0, 1]; length mismatch and constant lists give 0 */
  CHECK_NEAR(sbe_score_sorting("[1, 3, 2]", "[1, 2, 3]", NULL), 0.49999999999999994, 1e-12);
  CHECK_NEAR(sbe_score_sorting("[3, 1, 2]", "[1, 2, 3]", NULL), 0.0, 0);
  CHECK_NEAR(sbe_score_sorting("[1, 2, 3]", "[1, 2, 3]", NULL), 1.0, 1e-15);
  info = (sbe_score_info){0};
  CHECK_NEAR(sbe_score_sorting("[1,2]", "[1,2,3]", &info), 0.0, 0);
  CHECK(info.length_mismatch == 1);
  info = (sbe_score_info){0};
  CHECK_NEAR(sbe_score_sorting("[5, 5, 5]", "[1,2,3]", &info), 0.0, 0);
  CHECK(info.nan_constant == 1 && info.nan_other == 0);
  info = (sbe_score_info){0};
  CHECK_NEAR(sbe_score_sorting("[7]", "[7]", &info), 0.0, 0);
  CHECK(info.nan_constant == 1);

  /* dispatch on fid, extraction included */
  CHECK_NEAR(sbe_score_sc_tc("Output: Estimated pi: 3.2", "Estimated value of pi: 3.14159", "mc_1.py", NULL),
             0.9814075038441868, 1e-12);
  CHECK_NEAR(sbe_score_sc_tc("Output: pi = 3.2", "Estimated value of pi: 3.14159", "mc_1.py", NULL), 0.0, 0);
  info = (sbe_score_info){0};
  CHECK_NEAR(sbe_score_sc_tc("", "x: 1", "mc_2.py", &info), 0.0, 0); /* None: SURGE crashes */
  CHECK(info.no_answer == 1 && info.surge_raised == 1);
  CHECK_NEAR(sbe_score_sc_tc("Output:\n```\n['0.0000e+00' '1.3000e+01']\n```", "['0.0000e+00' '1.3286e+01']",
                             "heat_eq_x.py", NULL),
             0.9892367906067346, 1e-12);
  CHECK_NEAR(sbe_score_sc_tc("Output: 13.23", "13.23", "tsp.py", NULL), 1.0, 0);
  CHECK_NEAR(sbe_score_sc_tc("Output: 13.230", "13.23", "tsp.py", NULL), 0.0, 0);
  CHECK_NEAR(sbe_score_sc_tc("Output: [4, 3, 2, 1]", "[1, 2, 3, 4]", "bubble_sort.py", NULL), 0.0, 0);
  CHECK_NEAR(sbe_score_sc_tc("Output: [1, 2, 3]", "[1.0, 2.0, 3.0]", "gd_hbv.py", NULL), 1.0, 0);
  CHECK_NEAR(sbe_score_sc_tc("Output: [1, 2, 3]", "[1, 2, 3]", "matrix_inv.py", NULL), 1.0, 0); /* exact branch */
  return check_exit();
}
