/* A text file's non-blank lines (lines.h). */
#include "lines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

int sbu_lines_open(sbu_lines *r, const char *path, char *err, size_t err_len) {
  memset(r, 0, sizeof *r);
  r->f = fopen(path, "r");
  if (r->f) return 0;
  snprintf(err, err_len, "cannot read %s: %s", path, strerror(errno));
  return -1;
}

bool sbu_lines_next(sbu_lines *r) {
  ssize_t got;
  while ((got = getline(&r->line, &r->cap_, r->f)) >= 0) {
    r->lineno++;
    r->len = (size_t)got;
    if (strspn(r->line, " \t\r\n") < r->len) return true; /* a NUL is not blank */
  }
  return false;
}

void sbu_lines_close(sbu_lines *r) {
  free(r->line);
  if (r->f) fclose(r->f);
  memset(r, 0, sizeof *r);
}
