/* Character tables generated from CPython's Unicode database (see
 * tests/unit/eval/gen_unicode_tables.py). Internal to the evaluator. */
#ifndef SURGEBOX_EVAL_UNICODE_TABLES_H
#define SURGEBOX_EVAL_UNICODE_TABLES_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t first, last;
  uint32_t stride; /* 1 or 2 */
  int32_t delta;
} sbe_lower_run;

/* Sorted, disjoint, inclusive ranges. */
extern const uint32_t sbe_tab_word[][2]; /* str.isalnum() or '_' (regex \w) */
extern const size_t sbe_tab_word_count;
extern const uint32_t sbe_tab_cased[][2];
extern const size_t sbe_tab_cased_count;
extern const uint32_t sbe_tab_case_ignorable[][2];
extern const size_t sbe_tab_case_ignorable_count;
extern const sbe_lower_run sbe_tab_lower[];
extern const size_t sbe_tab_lower_count;
extern const uint32_t sbe_tab_digit_zero[];
extern const size_t sbe_tab_digit_zero_count;
#endif
