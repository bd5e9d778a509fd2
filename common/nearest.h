/* The nearest name to a mistyped one ("did you mean ...?"): edit distance
 * with transpositions (optimal string alignment), case-insensitive. Prefix sbu_. */
#ifndef SURGEBOX_NEAREST_H
#define SURGEBOX_NEAREST_H

#include <stddef.h>

/* Insertions, deletions, substitutions and swaps of two neighbours that turn
 * a into b, ignoring ASCII case; names longer than 64 bytes count as far. */
size_t sbu_edit_distance(const char *a, const char *b);

/* The candidate nearest to word, or NULL when none is close: at most one
 * edit per three characters of the longer name (at least one; a '+' may be
 * typed as 'p' or 'x': "gpp" for "g++"), and not word itself. The first of
 * equally near ones wins. Else the first candidate word begins (3 characters
 * or more: "crux" for "cruxeval") or ends after a non-alphanumeric ("17" for
 * "c++17"). */
const char *sbu_nearest(const char *word, const char *const *cands, size_t n);

#endif
