/* surgebox cases: a TESTS.jsonl file read into a request's "cases" (issue
 * 38). One case a line with the fields PROTOCOL.md's "Test cases" defines
 * (stdin, args, files, expected, compare, limits, their _b64 forms), plus
 * "fn_name" (the same on every line) and "arguments" (a function call's
 * argument list: the case's args). Blank lines are not cases. A line that
 * cannot be a case is one error naming the file, its line and the fix. */
#include "cases_tests.h"
#include "json_line.h"
#include "lines.h"
#include "protocol.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const known[] = {"stdin",   "stdin_b64", "args",    "files",     "expected",
                                    "expected_b64", "compare", "limits", "fn_name", "arguments", NULL};

/* The line's object, or NULL with why. */
static json_object *parse_line(const char *s, size_t n, char *why, size_t why_len) {
  json_object *o = sbp_json_line(s, n, why, why_len);
  if (!o || json_object_is_type(o, json_type_object)) return o;
  snprintf(why, why_len, "not a JSON object");
  json_object_put(o);
  return NULL;
}

/* Checks the line's keys and moves "fn_name" and "arguments" where the
 * request wants them: 0, or -1 with why. */
static int take_case(sbc_cases_tests *t, json_object *o, char *why, size_t why_len) {
  json_object_object_foreach(o, k, v) {
    (void)v;
    size_t i = 0;
    while (known[i] && strcmp(known[i], k) != 0) i++;
    if (!known[i]) {
      snprintf(why, why_len, "unknown field \"%.60s\" (a case has stdin, args, files, expected, compare, limits; "
                             "a function call fn_name and arguments)", k);
      return -1;
    }
  }
  json_object *fn = NULL, *arguments = NULL;
  if (json_object_object_get_ex(o, "fn_name", &fn)) {
    if (!json_object_is_type(fn, json_type_string) || !json_object_get_string_len(fn)) {
      snprintf(why, why_len, "\"fn_name\" must be a function's name as a string");
      return -1;
    }
    const char *name = json_object_get_string(fn);
    if (t->fn_name && strcmp(t->fn_name, name) != 0) {
      snprintf(why, why_len, "\"fn_name\" is \"%.60s\" here but \"%.60s\" on line %zu: one function per run", name,
               t->fn_name, t->fn_line);
      return -1;
    }
    if (!t->fn_name) t->fn_name = strdup(name); /* its line: set by the caller */
  }
  if (json_object_object_get_ex(o, "arguments", &arguments)) {
    if (json_object_object_get_ex(o, "args", NULL)) {
      snprintf(why, why_len, "\"arguments\" and \"args\" are the same thing: give one");
      return -1;
    }
    if (!json_object_is_type(arguments, json_type_array)) {
      snprintf(why, why_len, "\"arguments\" must be a JSON array (the function's arguments)");
      return -1;
    }
    json_object_object_add(o, "args", json_object_get(arguments));
    json_object_object_del(o, "arguments");
  }
  json_object_object_del(o, "fn_name");
  return 0;
}

int sbc_cases_tests_read(sbc_cases_tests *t, const char *path, char *err, size_t err_len) {
  memset(t, 0, sizeof *t);
  t->cases = json_object_new_array();
  sbu_lines r;
  if (sbu_lines_open(&r, path, err, err_len) < 0) return -1;
  size_t cap = 0, lineno = 0;
  int rc = 0;
  bool calls = false, plain = false; /* lines with fn_name, lines without */
  size_t plain_line = 0, call_line = 0;
  while (rc == 0 && sbu_lines_next(&r)) {
    lineno = r.lineno;
    char why[600];
    json_object *o = parse_line(r.line, r.len, why, sizeof why);
    bool had_fn = o && json_object_object_get_ex(o, "fn_name", NULL);
    bool first_fn = had_fn && !t->fn_name;
    if (o && take_case(t, o, why, sizeof why) < 0) {
      json_object_put(o);
      o = NULL;
    }
    if (o && first_fn) t->fn_line = lineno;
    if (o && had_fn) calls = true, call_line = call_line ? call_line : lineno;
    if (o && !had_fn) plain = true, plain_line = plain_line ? plain_line : lineno;
    if (o && calls && plain) {
      snprintf(why, sizeof why, "%s \"fn_name\" but line %zu %s: every line a function call, or none",
               had_fn ? "has" : "lacks", had_fn ? plain_line : call_line, had_fn ? "lacks it" : "has it");
      json_object_put(o);
      o = NULL;
    }
    if (o && t->n == SBP_MAX_CASES) {
      snprintf(why, sizeof why, "more than %zu cases: split the file (a run takes at most %zu)", SBP_MAX_CASES,
               SBP_MAX_CASES);
      json_object_put(o);
      o = NULL;
    }
    if (!o) {
      snprintf(err, err_len, "%s line %zu: %s; fix that line (one case a line, e.g. {\"stdin\": \"1 2\\n\", "
                             "\"expected\": \"3\\n\"})", path, lineno, why);
      rc = -1;
      break;
    }
    json_object_array_add(t->cases, o);
    if (t->n == cap) t->lines = realloc(t->lines, (cap = cap ? cap * 2 : 64) * sizeof *t->lines);
    t->lines[t->n++] = lineno;
  }
  if (rc == 0 && ferror(r.f)) {
    snprintf(err, err_len, "cannot read %s: %s", path, strerror(errno));
    rc = -1;
  }
  if (rc == 0 && t->n == 0) {
    snprintf(err, err_len, "%s has no cases: write one JSON object a line, e.g. {\"stdin\": \"1 2\\n\", "
                           "\"expected\": \"3\\n\"}", path);
    rc = -1;
  }
  sbu_lines_close(&r);
  return rc;
}

void sbc_cases_tests_free(sbc_cases_tests *t) {
  json_object_put(t->cases);
  free(t->lines);
  free(t->fn_name);
  memset(t, 0, sizeof *t);
}
