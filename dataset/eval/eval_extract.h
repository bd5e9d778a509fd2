/* SURGE's answer extraction (extract_output in its sc.py/rl.py): pulls the
 * answer out of raw model text. Used for every subset except FL. */
#ifndef SURGEBOX_EVAL_EXTRACT_H
#define SURGEBOX_EVAL_EXTRACT_H
#include <stddef.h>
#include <stdint.h>

#include "eval_unicode.h"

/* Extracts from text (UTF-8, NUL-terminated). Returns a malloc'd string, or
 * NULL where SURGE returns None (no answer). Note SURGE can return an empty
 * string (an empty code block), which is not the same as None. */
char *sbe_extract(const char *text);
/* Same with an explicit length (text may contain NULs); *out_len gets the
 * answer's length in bytes. */
char *sbe_extract_n(const char *text, size_t n, size_t *out_len);
/* Code-point form: appends the answer to out and returns 1, or returns 0 for None. */
int sbe_extract_cp(const uint32_t *cp, size_t n, sbe_ustr *out);
#endif
