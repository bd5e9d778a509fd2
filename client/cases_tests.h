/* surgebox cases: TESTS.jsonl, one test case a line (cases_tests.c). */
#ifndef SURGEBOX_CASES_TESTS_H
#define SURGEBOX_CASES_TESTS_H

#include <json-c/json.h>
#include <stddef.h>

typedef struct {
  json_object *cases; /* the request's "cases" array, in file order */
  size_t *lines;      /* lines[i]: case i's line in the file (1-based) */
  size_t n;
  char *fn_name;      /* the lines' "fn_name" (the same on each), or NULL */
  size_t fn_line;     /* the first line that named it */
} sbc_cases_tests;

/* Read path: 0, or -1 with err one line naming the file, the line and the
 * fix (not JSON, not an object, an unknown field, fn_name on some lines
 * only or differing, no cases, more than the protocol's cap). */
int sbc_cases_tests_read(sbc_cases_tests *t, const char *path, char *err, size_t err_len);
void sbc_cases_tests_free(sbc_cases_tests *t);

#endif
