/* A benchmark's JSON Lines input (the tests benchmark's problems and
 * solutions, trace-dataset's programs), one object a line (prefix
 * sbr_jsonl). */
#ifndef SURGEBOX_JSONL_H
#define SURGEBOX_JSONL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* One line, parsed (NULL: not JSON; put after the call): 0 taken, else
 * -1 with err naming the file, the line and what is wrong. */
typedef int (*sbr_jsonl_fn)(void *arg, json_object *o, size_t lineno, char *err, size_t err_len);
/* Each non-blank line of path to line(arg, ...) until one is refused: 0,
 * or -1 with err: the callback's, "PATH: no WHAT" for a file without a
 * line, or "cannot read PATH: why" with *unreadable set when unreadable
 * is given. */
int sbr_jsonl_each(const char *path, const char *what, sbr_jsonl_fn line, void *arg, bool *unreadable, char *err,
                   size_t err_len);

#endif
