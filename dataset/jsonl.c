/* A benchmark's JSON Lines input, a parsed line at a time (jsonl.h). */
#include "jsonl.h"
#include "lines.h"

#include <stdio.h>

int sbr_jsonl_each(const char *path, const char *what, sbr_jsonl_fn line, void *arg, bool *unreadable, char *err,
                   size_t err_len) {
  if (unreadable) *unreadable = false;
  sbu_lines r;
  if (sbu_lines_open(&r, path, err, err_len) < 0) {
    if (unreadable) *unreadable = true;
    return -1;
  }
  int rc = 0;
  size_t taken = 0;
  while (rc == 0 && sbu_lines_next(&r)) {
    json_object *o = json_tokener_parse(r.line);
    rc = line(arg, o, r.lineno, err, err_len);
    json_object_put(o);
    taken++;
  }
  sbu_lines_close(&r);
  if (rc == 0 && !taken) snprintf(err, err_len, "%s: no %s", path, what), rc = -1;
  return rc;
}
