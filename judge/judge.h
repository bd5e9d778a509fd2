/* Judges for test cases (issue 38): is a program's output the expected
 * one? Pure functions over bytes and JSON values, nothing of the sandbox;
 * the checker-program judge (a special judge run in a sandbox of its own)
 * is the daemon's (daemon/checker.c), and turns into a verdict through
 * sbj_checker_verdict.
 *
 * Modes, after DMOJ's checkers and what RL reward code does:
 *   exact   the bytes, all of them (DMOJ "identical")
 *   lines   trailing whitespace of each line and trailing blank lines
 *           ignored (DMOJ "standard" keeps line structure; most RL reward
 *           code compares stdout.strip() or per-line rstrip)
 *   tokens  whitespace-separated tokens, equal one by one
 *   numbers tokens; a pair both numbers is equal within an absolute or a
 *           relative tolerance (DMOJ "floats"), other tokens exactly
 * Any of lines, tokens and numbers may also ignore case (ignore_case):
 * ASCII letters compared folded, as SandboxFusion's lower_cmp compares the
 * lines of the ASCII text it mostly sees (Python's lower() also folds
 * non-ASCII letters; this does not).
 * A function-call case compares JSON values as Python's == on what
 * json.loads gives, with tuples already lists and floats within tolerance
 * (LiveCodeBench, HumanEval+/MBPP+): sbj_json_equal. */
#ifndef SURGEBOX_JUDGE_H
#define SURGEBOX_JUDGE_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

typedef enum { SBJ_EXACT, SBJ_LINES, SBJ_TOKENS, SBJ_NUMBERS, SBJ_CHECKER } sbj_mode;

typedef struct {
  sbj_mode mode;
  double abs_tol, rel_tol; /* numbers, and floats in JSON values */
  bool ignore_case;        /* lines, tokens, numbers: ASCII letters folded */
} sbj_compare;

/* The default comparison: lines, tolerances 1e-6 (used only by numbers), case kept. */
void sbj_compare_default(sbj_compare *c);

/* A mode by its protocol name ("exact", "lines", "tokens", "numbers",
 * "checker"); -1 when unknown. And back. */
int sbj_mode_parse(const char *name);
const char *sbj_mode_name(sbj_mode m);

/* true: ACTUAL matches EXPECTED under C. When it does not and WHY is given,
 * a short description of the first difference (<= why_len bytes, NUL
 * terminated: "line 3: expected \"4\", got \"5\""); the bytes quoted are
 * escaped and cut. Not for SBJ_CHECKER. */
bool sbj_output_equal(const sbj_compare *c, const char *expected, size_t expected_len, const char *actual,
                      size_t actual_len, char *why, size_t why_len);

/* Function-call results: EXPECTED and ACTUAL as json-c values. Arrays
 * element by element (a tuple arrives as an array), objects key by key,
 * numbers as Python compares them (an int and a float by value; a bool is
 * 0 or 1, as True == 1 in Python), floats within the tolerances; NaN equals
 * nothing, as in Python. */
bool sbj_json_equal(const sbj_compare *c, json_object *expected, json_object *actual, char *why, size_t why_len);

/* A checker program's verdict, testlib's convention: it exited 0
 * (accepted), 1 (wrong answer) or 2 (presentation error: wrong answer);
 * 3 is testlib's "fail", a failure of the checker itself, and any other
 * end (another status, a signal, a limit) is judge_error as well. Its
 * first line is the message the case carries. */
const char *sbj_checker_verdict(bool exited, int status);

#endif
