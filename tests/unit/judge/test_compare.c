/* judge/compare.c: each mode on outputs worked out by hand. */
#include "check.h"
#include "judge.h"

static bool eq(sbj_mode m, const char *e, const char *a) {
  sbj_compare c;
  sbj_compare_default(&c);
  c.mode = m;
  char why[128];
  return sbj_output_equal(&c, e, strlen(e), a, strlen(a), why, sizeof why);
}

static const char *why_of(sbj_mode m, const char *e, const char *a) {
  static char why[128];
  sbj_compare c;
  sbj_compare_default(&c);
  c.mode = m;
  sbj_output_equal(&c, e, strlen(e), a, strlen(a), why, sizeof why);
  return why;
}

int main(void) {
  /* exact: every byte, the final newline included */
  CHECK(eq(SBJ_EXACT, "4\n", "4\n"));
  CHECK(!eq(SBJ_EXACT, "4\n", "4"));
  CHECK(!eq(SBJ_EXACT, "4\n", "4 \n"));
  CHECK(!eq(SBJ_EXACT, "", "\n"));
  CHECK(eq(SBJ_EXACT, "", ""));
  CHECK_STR(why_of(SBJ_EXACT, "abc\n", "abd\n"), "byte 2: expected \"c\\n\", got \"d\\n\"");
  CHECK_STR(why_of(SBJ_EXACT, "ab\n", "ab"), "byte 2: expected \"\\n\", got the end");

  /* lines: trailing blanks of a line and trailing blank lines ignored */
  CHECK(eq(SBJ_LINES, "1 2\n3\n", "1 2   \n3"));
  CHECK(eq(SBJ_LINES, "1 2\n3\n", "1 2\r\n3\r\n\n\n  \n"));
  CHECK(eq(SBJ_LINES, "", "\n\n"));
  CHECK(!eq(SBJ_LINES, "1 2\n3\n", "1  2\n3\n")); /* inner spaces count */
  CHECK(!eq(SBJ_LINES, "1 2\n3\n", " 1 2\n3\n")); /* leading spaces count */
  CHECK(!eq(SBJ_LINES, "1\n\n2\n", "1\n2\n"));    /* an inner blank line counts */
  CHECK(!eq(SBJ_LINES, "1\n2\n", "1\n"));
  CHECK_STR(why_of(SBJ_LINES, "1\n2\n", "1\n"), "line 2: expected \"2\", got the end");
  CHECK_STR(why_of(SBJ_LINES, "1\n", "1\n7\n"), "line 2: expected the end, got \"7\"");

  /* tokens: any whitespace between */
  CHECK(eq(SBJ_TOKENS, "1 2\n3\n", "1\n2 3"));
  CHECK(eq(SBJ_TOKENS, "yes", "  yes\t\n"));
  CHECK(!eq(SBJ_TOKENS, "1.0", "1"));
  CHECK(!eq(SBJ_TOKENS, "YES", "yes"));
  CHECK_STR(why_of(SBJ_TOKENS, "a b c", "a b d"), "token 3: expected \"c\", got \"d\"");

  /* numbers: within 1e-6 absolute or relative; other tokens exactly */
  CHECK(eq(SBJ_NUMBERS, "0.333333", "0.3333333333"));      /* |d| = 3.3e-7 */
  CHECK(!eq(SBJ_NUMBERS, "0.333333", "0.3333"));           /* |d| = 3.3e-5 */
  CHECK(eq(SBJ_NUMBERS, "1000000000", "1000000500"));      /* relative 5e-7 */
  CHECK(!eq(SBJ_NUMBERS, "1000000000", "1000002000"));     /* relative 2e-6 */
  CHECK(eq(SBJ_NUMBERS, "1.0 x", "1 x"));
  CHECK(!eq(SBJ_NUMBERS, "1.0 x", "1 y"));
  CHECK(eq(SBJ_NUMBERS, "inf", "inf"));
  CHECK(eq(SBJ_NUMBERS, "nan", "nan"));                    /* the same text */
  CHECK(!eq(SBJ_NUMBERS, "nan", "NaN"));                   /* NaN is no number: the text decides */
  CHECK(!eq(SBJ_NUMBERS, "1", "1,0"));
  {
    sbj_compare c = {SBJ_NUMBERS, 0.01, 0, false};
    CHECK(sbj_output_equal(&c, "3.14", 4, "3.141", 5, NULL, 0));
    CHECK(!sbj_output_equal(&c, "3.14", 4, "3.2", 3, NULL, 0));
  }

  /* ignore_case: ASCII letters folded in lines, tokens and numbers */
  {
    sbj_compare c;
    sbj_compare_default(&c);
    c.ignore_case = true;
    char why[128];
    CHECK(sbj_output_equal(&c, "YES\nNo\n", 7, "yes\nno", 6, why, sizeof why));
    CHECK(!sbj_output_equal(&c, "YES\n", 4, "yes!\n", 5, why, sizeof why));
    CHECK_STR(why, "line 1: expected \"YES\", got \"yes!\"");
    CHECK(!sbj_output_equal(&c, "YES\n", 4, "YEA\n", 4, NULL, 0));
    CHECK(!sbj_output_equal(&c, "a[", 2, "A{", 2, NULL, 0)); /* '[' and '{' are 32 apart, no letters */
    CHECK(!sbj_output_equal(&c, "\xc3\xa9", 2, "\xc3\x89", 2, NULL, 0)); /* e-acute vs E-acute: ASCII only */
    c.mode = SBJ_TOKENS;
    CHECK(sbj_output_equal(&c, "Alice  BOB", 10, "alice\nbob\n", 10, NULL, 0));
    CHECK(!sbj_output_equal(&c, "Alice BOB", 9, "alice bobby", 11, NULL, 0));
    c.mode = SBJ_NUMBERS;
    CHECK(sbj_output_equal(&c, "Case 1.0", 8, "case 1", 6, NULL, 0));
    CHECK(!sbj_output_equal(&c, "Case 1.0", 8, "case 1.1", 8, NULL, 0));
    c.mode = SBJ_LINES;
    c.ignore_case = false; /* the default keeps case */
    CHECK(!sbj_output_equal(&c, "YES", 3, "yes", 3, NULL, 0));
  }

  CHECK(sbj_mode_parse("tokens") == SBJ_TOKENS);
  CHECK(sbj_mode_parse("checker") == SBJ_CHECKER);
  CHECK(sbj_mode_parse("token") == -1);
  CHECK_STR(sbj_mode_name(SBJ_NUMBERS), "numbers");

  /* testlib's exit statuses */
  CHECK_STR(sbj_checker_verdict(true, 0), "accepted");
  CHECK_STR(sbj_checker_verdict(true, 1), "wrong_answer");
  CHECK_STR(sbj_checker_verdict(true, 2), "wrong_answer");
  CHECK_STR(sbj_checker_verdict(true, 3), "judge_error");
  CHECK_STR(sbj_checker_verdict(true, 7), "judge_error");
  CHECK_STR(sbj_checker_verdict(false, 9), "judge_error");
  return check_exit();
}
