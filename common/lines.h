/* A text file's lines one at a time, blank ones skipped (JSON Lines files:
 * the cases of surgebox cases, the problems, solutions and programs files). */
#ifndef SURGEBOX_LINES_H
#define SURGEBOX_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
  FILE *f;
  char *line;    /* the line read, its '\n' kept, NUL-terminated */
  size_t len;    /* its bytes (a NUL inside counts) */
  size_t lineno; /* its number in the file, from 1 */
  size_t cap_;
} sbu_lines;

/* Opens path: 0, or -1 with "cannot read PATH: why" in err. */
int sbu_lines_open(sbu_lines *r, const char *path, char *err, size_t err_len);
/* The next line that is not blank (only spaces, tabs, CR and LF): true; false
 * at the end of the file or on a read error (ferror(r->f) tells). */
bool sbu_lines_next(sbu_lines *r);
void sbu_lines_close(sbu_lines *r);

#endif
