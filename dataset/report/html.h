/* Writing HTML safely (prefix sbh_). Every byte that came from a run (item
 * output, a group's or toolchain's name, a file name) goes through
 * sbh_text: markup characters are escaped, control characters and bytes
 * that are not well-formed UTF-8 are shown as visible \xNN marks. Nothing
 * from a run is ever written raw. */
#ifndef SURGEBOX_HTML_H
#define SURGEBOX_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* n bytes of s as HTML text (also safe inside a double-quoted attribute). */
void sbh_text_n(FILE *f, const char *s, size_t n);
/* A C string (NULL writes "-"). */
void sbh_text(FILE *f, const char *s);
/* printf's format into a buffer, then escaped: for text built from run data. */
void sbh_textf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* <tag class="cls">text</tag>, the text escaped; tag and cls are ours. */
void sbh_elem(FILE *f, const char *tag, const char *cls, const char *text);
/* An anchor id made of [a-z0-9-] only from parts ours ("item-dr-12"). */
void sbh_id(char *out, size_t n, const char *subset, size_t index);

#endif
