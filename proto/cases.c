/* "cases" (issue 38): a step's test cases, each {stdin, args, files,
 * expected, compare, limits}, with "stop", "budget_s" and
 * "case_output_bytes" beside them. Bounded: SBP_MAX_CASES cases, their
 * bytes together SBP_MAX_CASES_BYTES. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const compare_names[] = {"exact", "lines", "tokens", "numbers", "checker", NULL};

/* NAME or CLASS.NAME, Python identifiers of ASCII letters, digits and _. */
static bool valid_fn_name(const char *s) {
  size_t n = strlen(s), dots = 0;
  if (n == 0 || n > 128) return false;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    bool start = i == 0 || s[i - 1] == '.';
    if (ch == '.') {
      if (start || i + 1 == n || ++dots > 1) return false;
    } else if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || (!start && ch >= '0' && ch <= '9'))) {
      return false;
    }
  }
  return true;
}

static int parse_tol(sbp_pctx *c, json_object *o, const char *key, const char *where, double *out) {
  json_object *x;
  if (!json_object_object_get_ex(o, key, &x)) return 0;
  double d = json_object_get_double(x);
  if (!(json_object_is_type(x, json_type_double) || json_object_is_type(x, json_type_int)) || !isfinite(d) || d < 0)
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s.%s must be a number >= 0", where, key);
  *out = d;
  return 0;
}

/* "compare": "lines", or {"mode": "numbers", "abs_tol": 1e-6, "rel_tol": 1e-6,
 * "ignore_case": true}. */
static int parse_compare(sbp_pctx *c, json_object *v, const char *where, sbp_case *cs) {
  json_object *mode = v, *ic = NULL;
  if (json_object_is_type(v, json_type_object)) {
    static const char *const allowed[] = {"mode", "abs_tol", "rel_tol", "ignore_case", NULL};
    if (sbp_check_fields(c, v, where, allowed) != 0) return -1;
    if (!json_object_object_get_ex(v, "mode", &mode))
      return sbp_fail(c, SBP_E_BAD_REQUEST, "%s.mode is missing", where);
    if (parse_tol(c, v, "abs_tol", where, &cs->abs_tol) != 0 || parse_tol(c, v, "rel_tol", where, &cs->rel_tol) != 0)
      return -1;
    if (json_object_object_get_ex(v, "ignore_case", &ic) && !json_object_is_type(ic, json_type_boolean))
      return sbp_fail(c, SBP_E_BAD_REQUEST, "%s.ignore_case must be true or false", where);
  }
  const char *s = json_object_is_type(mode, json_type_string) ? json_object_get_string(mode) : NULL;
  for (int i = 0; s && compare_names[i]; i++)
    if (strcmp(s, compare_names[i]) == 0) {
      cs->compare = (sbp_compare_mode)i;
      if (ic) cs->ignore_case = json_object_get_boolean(ic);
      if (cs->ignore_case && (cs->compare == SBP_CMP_EXACT || cs->compare == SBP_CMP_CHECKER))
        return sbp_fail(c, SBP_E_BAD_REQUEST, "%s.ignore_case is for \"lines\", \"tokens\" and \"numbers\" (%s "
                        "compares as it is told)", where, s);
      return 0;
    }
  return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must be \"exact\", \"lines\", \"tokens\", \"numbers\" or \"checker\" (or an "
                  "object with \"mode\", abs_tol/rel_tol and ignore_case)", where);
}

/* A function-call case: args a JSON array, expected a JSON value; the
 * harness's stdin made here ({"fn", "args"}). */
static int parse_fn_case(sbp_pctx *c, json_object *v, const char *where, const char *fn, sbp_case *cs,
                         uint64_t *bytes) {
  json_object *x;
  if (json_object_object_get_ex(v, "stdin", NULL) || json_object_object_get_ex(v, "stdin_b64", NULL) ||
      json_object_object_get_ex(v, "expected_b64", NULL))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s: a function-call case (fn_name) takes \"args\" and \"expected\", not "
                    "stdin or expected_b64", where);
  json_object *args = NULL;
  if (json_object_object_get_ex(v, "args", &args) && !json_object_is_type(args, json_type_array))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s.args must be a JSON array of the function's arguments", where);
  json_object *call = json_object_new_object();
  if (!call) return sbp_fail_oom(c);
  json_object_object_add(call, "fn", json_object_new_string(fn));
  json_object_object_add(call, "args", args ? json_object_get(args) : json_object_new_array());
  const char *text = json_object_to_json_string_ext(call, JSON_C_TO_STRING_PLAIN);
  cs->fn_call = text ? strdup(text) : NULL;
  json_object_put(call);
  if (!cs->fn_call) return sbp_fail_oom(c);
  cs->fn_call_len = strlen(cs->fn_call);
  *bytes += cs->fn_call_len;
  if (json_object_object_get_ex(v, "expected", &x)) {
    cs->expected_value = json_object_get(x);
    cs->has_expected = true;
    *bytes += strlen(json_object_to_json_string_ext(x, JSON_C_TO_STRING_PLAIN));
  }
  return 0;
}

static int parse_case(sbp_pctx *c, json_object *v, size_t i, const char *step, const char *fn,
                      const sbp_case *dflt, sbp_case *cs, uint64_t *bytes) {
  char where[96], field[160];
  snprintf(where, sizeof where, "%s%scases[%zu]", step, *step ? "." : "", i);
  if (!json_object_is_type(v, json_type_object)) return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must be an object", where);
  static const char *const allowed[] = {"stdin", "stdin_b64", "args", "files", "expected", "expected_b64",
                                        "compare", "limits", NULL};
  if (sbp_check_fields(c, v, where, allowed) != 0) return -1;
  cs->compare = dflt->compare;
  cs->abs_tol = dflt->abs_tol;
  cs->rel_tol = dflt->rel_tol;
  cs->ignore_case = dflt->ignore_case;
  json_object *x;
  if (fn) {
    if (parse_fn_case(c, v, where, fn, cs, bytes) != 0) return -1;
    if (!(cs->args = calloc(1, sizeof *cs->args))) return sbp_fail_oom(c);
  } else {
    if (sbp_get_stdin(c, v, where, &cs->stdin_data, &cs->stdin_len, &cs->has_stdin) != 0) return -1;
  }
  *bytes += cs->stdin_len;
  if (fn) {
    /* args and expected are JSON values, read above */
  } else if (json_object_object_get_ex(v, "args", &x)) {
    snprintf(field, sizeof field, "%s.args", where);
    if (sbp_parse_strv(c, x, field, true, &cs->args, &cs->n_args) != 0) return -1;
  } else if (!(cs->args = calloc(1, sizeof *cs->args))) {
    return sbp_fail_oom(c);
  }
  if (json_object_object_get_ex(v, "files", &x)) {
    size_t n = json_object_is_type(x, json_type_array) ? json_object_array_length(x) : 0;
    if (!json_object_is_type(x, json_type_array) || n > SBP_MAX_CASE_FILES)
      return sbp_fail(c, SBP_E_BAD_REQUEST, "%s.files must be an array of at most %zu files", where,
                      SBP_MAX_CASE_FILES);
    if (n && !(cs->files = calloc(n, sizeof *cs->files))) return sbp_fail_oom(c);
    cs->n_files = n;
    for (size_t k = 0; k < n; k++) {
      snprintf(field, sizeof field, "%s.files[%zu]", where, k);
      if (sbp_parse_file(c, json_object_array_get_idx(x, k), field, &cs->files[k]) != 0) return -1;
      *bytes += cs->files[k].len;
    }
    if (sbp_check_unique_paths(c, cs->files, n) != 0) return -1;
  }
  if (!fn) {
    json_object *plain = NULL, *b64 = NULL;
    bool has_plain = json_object_object_get_ex(v, "expected", &plain);
    bool has_b64 = json_object_object_get_ex(v, "expected_b64", &b64);
    if (has_plain && has_b64)
      return sbp_fail(c, SBP_E_BAD_REQUEST, "%s: give \"expected\" or \"expected_b64\", not both", where);
    if (has_plain) {
      snprintf(field, sizeof field, "%s.expected", where);
      char *copy = NULL;
      if (sbp_get_string(c, plain, field, true, true, &copy, &cs->expected_len) != 0) return -1;
      cs->expected = (unsigned char *)copy;
      cs->has_expected = true;
    } else if (has_b64) {
      snprintf(field, sizeof field, "%s.expected_b64", where);
      size_t blen, bad = 0;
      if (sbp_get_string(c, b64, field, true, true, NULL, &blen) != 0) return -1;
      sbu_b64_result r = sbu_base64_decode(json_object_get_string(b64), blen, &cs->expected, &cs->expected_len, &bad);
      if (r == SBU_B64_NOMEM) return sbp_fail_oom(c);
      if (r != SBU_B64_OK) return sbp_fail(c, SBP_E_BAD_BASE64, "%s is not valid base64 (at character %zu)", field, bad);
      cs->has_expected = true;
    }
    *bytes += cs->expected_len;
  }
  if (json_object_object_get_ex(v, "compare", &x)) {
    snprintf(field, sizeof field, "%s.compare", where);
    if (parse_compare(c, x, field, cs) != 0) return -1;
  }
  x = NULL;
  json_object_object_get_ex(v, "limits", &x);
  return sbp_parse_step_limits(c, x, where, &cs->limits);
}

/* "checker": {"toolchain": NAME, "files": [...], "options": {...}, "limits":
 * {...}, "verdict": "exit_code" | "first_line"}: the special judge's
 * program, built and run by the daemon (daemon/checker.c), never in the
 * program's sandbox. */
static int parse_checker(sbp_pctx *c, json_object *v, const char *where, sbp_checker *out, uint64_t *bytes) {
  char field[160];
  if (!json_object_is_type(v, json_type_object))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must be an object {\"toolchain\", \"files\"}", where);
  static const char *const allowed[] = {"toolchain", "files", "options", "limits", "verdict", "io", NULL};
  if (sbp_check_fields(c, v, where, allowed) != 0) return -1;
  json_object *x;
  if (!json_object_object_get_ex(v, "toolchain", &x))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s.toolchain is missing (the checker's language, as a job's toolchain)", where);
  snprintf(field, sizeof field, "%s.toolchain", where);
  size_t len;
  if (sbp_get_string(c, x, field, false, false, &out->toolchain, &len) != 0) return -1;
  if (!json_object_object_get_ex(v, "files", &x) || !json_object_is_type(x, json_type_array) ||
      json_object_array_length(x) == 0 || json_object_array_length(x) > SBP_MAX_CHECKER_FILES)
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s.files must be an array of 1 to %zu files (the checker's sources)", where,
                    SBP_MAX_CHECKER_FILES);
  size_t n = json_object_array_length(x);
  if (!(out->files = calloc(n, sizeof *out->files))) return sbp_fail_oom(c);
  out->n_files = n;
  for (size_t k = 0; k < n; k++) {
    snprintf(field, sizeof field, "%s.files[%zu]", where, k);
    if (sbp_parse_file(c, json_object_array_get_idx(x, k), field, &out->files[k]) != 0) return -1;
    *bytes += out->files[k].len;
  }
  if (sbp_check_unique_paths(c, out->files, n) != 0) return -1;
  if (json_object_object_get_ex(v, "options", &x)) {
    if (!json_object_is_type(x, json_type_object))
      return sbp_fail(c, SBP_E_BAD_REQUEST, "%s.options must be an object (the toolchain's options)", where);
    out->options = json_object_get(x);
  }
  if (json_object_object_get_ex(v, "verdict", &x)) {
    const char *s = json_object_is_type(x, json_type_string) ? json_object_get_string(x) : "";
    if (strcmp(s, "first_line") == 0) out->first_line = true;
    else if (strcmp(s, "exit_code") != 0)
      return sbp_fail(c, SBP_E_BAD_REQUEST, "%s.verdict must be \"exit_code\" (testlib's) or \"first_line\"", where);
  }
  if (json_object_object_get_ex(v, "io", &x)) {
    const char *s = json_object_is_type(x, json_type_string) ? json_object_get_string(x) : "";
    if (strcmp(s, "sandboxfusion") == 0) out->sandboxfusion_io = true;
    else if (strcmp(s, "testlib") != 0)
      return sbp_fail(c, SBP_E_BAD_REQUEST, "%s.io must be \"testlib\" (input output answer as arguments) or "
                      "\"sandboxfusion\" (stdin.txt, stdout.txt, answer.txt in its directory)", where);
  }
  x = NULL;
  json_object_object_get_ex(v, "limits", &x);
  return sbp_parse_step_limits(c, x, where, &out->limits);
}

int sbp_parse_cases(sbp_pctx *c, json_object *obj, const char *where, sbp_cases *out) {
  json_object *v, *x;
  const char *dot = *where ? "." : "";
  if (!json_object_object_get_ex(obj, "cases", &v)) {
    static const char *const with_cases[] = {"stop", "budget_s", "case_output_bytes", "fn_name", "checker", "compare",
                                             NULL};
    for (size_t i = 0; with_cases[i]; i++)
      if (json_object_object_get_ex(obj, with_cases[i], NULL))
        return sbp_fail(c, SBP_E_BAD_REQUEST, "%s%s%s is only valid with \"cases\"", where, dot, with_cases[i]);
    return 0;
  }
  if (!json_object_is_type(v, json_type_array))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s%scases must be an array of objects", where, dot);
  size_t n = json_object_array_length(v);
  if (n == 0) return sbp_fail(c, SBP_E_BAD_REQUEST, "%s%scases must not be empty", where, dot);
  if (n > SBP_MAX_CASES)
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s%scases: %zu cases, at most %zu are accepted in one job; split them",
                    where, dot, n, SBP_MAX_CASES);
  if (!(out->v = calloc(n, sizeof *out->v))) return sbp_fail_oom(c);
  out->n = n;
  if (json_object_object_get_ex(obj, "fn_name", &x)) {
    const char *s = json_object_is_type(x, json_type_string) ? json_object_get_string(x) : "";
    if (!valid_fn_name(s))
      return sbp_fail(c, SBP_E_BAD_REQUEST, "%s%sfn_name must be a Python name (\"add\", or \"Solution.add\" for a "
                      "method of a class made without arguments), at most 128 characters", where, dot);
    if (!(out->fn_name = strdup(s))) return sbp_fail_oom(c);
  }
  uint64_t bytes = 0;
  char field[96];
  sbp_case dflt = {.compare = SBP_CMP_LINES, .abs_tol = 1e-6, .rel_tol = 1e-6}; /* "compare" beside the cases */
  snprintf(field, sizeof field, "%s%scompare", where, dot);
  if (json_object_object_get_ex(obj, "compare", &x) && parse_compare(c, x, field, &dflt) != 0) return -1;
  snprintf(field, sizeof field, "%s%schecker", where, dot);
  if (json_object_object_get_ex(obj, "checker", &x) && parse_checker(c, x, field, &out->checker, &bytes) != 0) return -1;
  bool uses_checker = false;
  for (size_t i = 0; i < n; i++) {
    if (parse_case(c, json_object_array_get_idx(v, i), i, where, out->fn_name, &dflt, &out->v[i], &bytes) != 0)
      return -1;
    uses_checker |= out->v[i].compare == SBP_CMP_CHECKER;
    if (bytes > SBP_MAX_CASES_BYTES)
      return sbp_fail(c, SBP_E_BAD_REQUEST,
                      "%s%scases: stdin, expected and files of the cases together exceed %llu bytes (at case %zu); "
                      "split them",
                      where, dot, (unsigned long long)SBP_MAX_CASES_BYTES, i);
  }
  if (uses_checker && !out->checker.toolchain)
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s%scompare \"checker\" needs \"checker\" beside the cases: {\"toolchain\", "
                    "\"files\"}", where, dot);
  if (uses_checker && out->fn_name)
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s%sfunction-call cases (fn_name) compare JSON values, not with a checker",
                    where, dot);
  if (json_object_object_get_ex(obj, "stop", &x)) {
    const char *s = json_object_is_type(x, json_type_string) ? json_object_get_string(x) : "";
    if (strcmp(s, "first_failure") == 0) out->stop_first_failure = true;
    else if (strcmp(s, "never") != 0)
      return sbp_fail(c, SBP_E_BAD_REQUEST, "%s%sstop must be \"first_failure\" or \"never\"", where, dot);
  }
  if (json_object_object_get_ex(obj, "budget_s", &x)) {
    double d = json_object_get_double(x);
    if (!(json_object_is_type(x, json_type_double) || json_object_is_type(x, json_type_int)) || !(d > 0) ||
        d > SBP_LIMIT_MAX_TIME_S)
      return sbp_fail(c, SBP_E_BAD_LIMITS, "%s%sbudget_s must be a number of seconds in (0, %g]", where, dot,
                      (double)SBP_LIMIT_MAX_TIME_S);
    out->budget_s = d;
  }
  out->case_output_bytes = SBP_DEFAULT_CASE_OUTPUT_BYTES;
  if (json_object_object_get_ex(obj, "case_output_bytes", &x)) {
    int64_t b = json_object_get_int64(x);
    if (!json_object_is_type(x, json_type_int) || b < 0 || (uint64_t)b > SBP_MAX_CASE_OUTPUT_BYTES)
      return sbp_fail(c, SBP_E_BAD_LIMITS, "%s%scase_output_bytes must be an integer from 0 to %llu", where, dot,
                      (unsigned long long)SBP_MAX_CASE_OUTPUT_BYTES);
    out->case_output_bytes = (uint64_t)b;
  }
  return 0;
}

void sbp_cases_clear(sbp_cases *cs) {
  for (size_t i = 0; cs->v && i < cs->n; i++) {
    sbp_case *k = &cs->v[i];
    free(k->stdin_data);
    sbp_strv_free(k->args);
    for (size_t f = 0; k->files && f < k->n_files; f++) {
      free(k->files[f].path);
      free(k->files[f].data);
    }
    free(k->files);
    free(k->expected);
    free(k->fn_call);
    if (k->expected_value) json_object_put(k->expected_value);
  }
  free(cs->v);
  free(cs->fn_name);
  free(cs->checker.toolchain);
  if (cs->checker.options) json_object_put(cs->checker.options);
  for (size_t f = 0; cs->checker.files && f < cs->checker.n_files; f++) {
    free(cs->checker.files[f].path);
    free(cs->checker.files[f].data);
  }
  free(cs->checker.files);
  memset(cs, 0, sizeof *cs);
}
