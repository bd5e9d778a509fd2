/* surgebox cases PROGRAM [FILE|DIR...] --tests TESTS.jsonl: one program,
 * built once, run against every case of TESTS (issue 38), judged by the
 * daemon (PROTOCOL.md, "Test cases"). The toolchain is the one exec names
 * for PROGRAM's extension (sbc_toolchain_of) unless --toolchain says.
 *
 * Output: a table (case, line, verdict, CPU and wall time, a failure's
 * first difference) and the counts; --json: the step's record with each
 * case's "line". Exit: 0 every case accepted; 3 a case was not (the
 * build's failure included); 2 bad input (TESTS, a FILE), a refused
 * request or a failure of surgebox (internal_error, toolchain_missing):
 * never a verdict; 1 usage. */
#include "cases_tests.h"
#include "cli.h"
#include "client.h"
#include "protocol.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SBC_EXIT_CASES_FAILED = 3 };

typedef struct {
  sbc_job_fields job; /* first: sbc_job_opts store here */
  const char *tests, *toolchain, *compare, *stop, *fn_name;
  double budget;
  bool json, warm;
} cases_opts_t;

enum { O_COMPARE = 256, O_STOP };
/* --compare, --stop: one of their words */
static int choice(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  static const char *const compares[] = {"exact", "lines", "tokens", "numbers", NULL};
  static const char *const stops[] = {"first_failure", "never", NULL};
  cases_opts_t *c = opts;
  *(o->key == O_COMPARE ? &c->compare : &c->stop) = val;
  return sbo_check_choice(p, o->key, val, o->key == O_COMPARE ? compares : stops);
}

#define AT(F) SBO_AT(cases_opts_t, F)
static const sbo_opt cases_opts[] = {
    {"tests", 0, "TESTS.jsonl", "the cases, one JSON object a line (stdin, args, expected, compare, ...)", SBO_STR, AT(tests)},
    {"toolchain", 0, "NAME", "build and run with this toolchain (default: the one PROGRAM's extension names)", SBO_STR,
     AT(toolchain)},
    {"compare", O_COMPARE, "MODE", "exact|lines|tokens|numbers, for cases that do not say (default lines)", SBO_CALL,
     .call = choice},
    {"stop", O_STOP, "WHEN", "first_failure|never (default never: every case runs)", SBO_CALL, .call = choice},
    {"budget", 0, "S", "wall-clock seconds for all the cases together; the rest are skipped", SBO_DOUBLE, AT(budget)},
    {"fn-name", 0, "NAME", "call this Python function with each case's arguments (or fn_name on the lines)", SBO_STR,
     AT(fn_name)},
    {"warm", 0, NULL, "start Python cases from the slot's warm interpreter (else cold, saying why)", SBO_FLAG, AT(warm)},
    {"json", 0, NULL, "print the step's record (every case, its line) as JSON on stdout", SBO_FLAG, AT(json)},
    {NULL, 0, NULL, NULL}};

static const sbo_cmd cases_cmd = {
    "surgebox cases", "PROGRAM [FILE|DIR...] --tests TESTS.jsonl [options]",
    "Build PROGRAM once and run it against every case of TESTS.jsonl, each case in a sandbox of its own;\n"
    "the daemon judges each output (PROTOCOL.md, \"Test cases\"). The toolchain is the one PROGRAM's\n"
    "extension names (.c gcc, .cpp g++, .py python3, ...) unless --toolchain says.",
    cases_opts, sbc_job_opts,
    "A line of TESTS.jsonl: {\"stdin\": \"1 2\\n\", \"expected\": \"3\\n\"}; also args, files, compare, limits,\n"
    "stdin_b64, expected_b64; a function call: {\"fn_name\": \"add\", \"arguments\": [1, 2], \"expected\": 3}.\n"
    "Exit status: 0 every case accepted, 3 a case was not (a build failure too), 1 usage error,\n"
    "2 bad input (TESTS.jsonl, a FILE), a refused request or a failure of surgebox (never a verdict).\n",
    false, sbc_daemon_groups};

/* The exec request in the toolchain form, the cases at its top level. */
static json_object *build_request(const sbc_ctx *g, const cases_opts_t *o, const char *toolchain, json_object *files,
                                  sbc_cases_tests *t) {
  json_object *req = sbc_request_new("exec");
  json_object_object_add(req, "toolchain", json_object_new_string(toolchain));
  json_object_object_add(req, "files", json_object_get(files));
  if (g->profile) json_object_object_add(req, "profile", json_object_new_string(g->profile));
  if (o->warm) json_object_object_add(req, "warm", json_object_new_boolean(true));
  if (json_object_object_length(o->job.options)) json_object_object_add(req, "options", json_object_get(o->job.options));
  if (json_object_array_length(o->job.args)) json_object_object_add(req, "args", json_object_get(o->job.args));
  if (json_object_array_length(o->job.cargs)) json_object_object_add(req, "compile_args", json_object_get(o->job.cargs));
  if (json_object_object_length(o->job.limits)) json_object_object_add(req, "limits", json_object_get(o->job.limits));
  if (o->compare)
    for (size_t i = 0; i < t->n; i++) {
      json_object *c = json_object_array_get_idx(t->cases, i);
      if (!json_object_object_get_ex(c, "compare", NULL)) json_object_object_add(c, "compare", json_object_new_string(o->compare));
    }
  json_object_object_add(req, "cases", json_object_get(t->cases));
  const char *fn = o->fn_name ? o->fn_name : t->fn_name;
  if (fn) json_object_object_add(req, "fn_name", json_object_new_string(fn));
  if (o->stop) json_object_object_add(req, "stop", json_object_new_string(o->stop));
  if (o->budget > 0) json_object_object_add(req, "budget_s", json_object_new_double(o->budget));
  return req;
}

/* A refused request's message names a case as "cases[N]": say its line. */
static int refused(const cases_opts_t *o, const sbc_cases_tests *t, const char *code, const char *msg) {
  const char *at = strstr(msg, "cases[");
  char *end = NULL;
  unsigned long n = at ? strtoul(at + 6, &end, 10) : 0;
  if (at && end && *end == ']' && n < t->n)
    return sbo_fail(cases_cmd.name, o->json, SBO_EXIT_FAILURE, "%s line %zu: %s: %s; fix that line", o->tests,
                    t->lines[n], code, msg);
  return sbo_fail(cases_cmd.name, o->json, SBO_EXIT_FAILURE, "%s: %s", code, msg);
}

static const char *str(json_object *o, const char *key) {
  json_object *v = NULL;
  return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                             : NULL;
}

static double num(json_object *o, const char *key) {
  json_object *v = NULL;
  return json_object_object_get_ex(o, key, &v) && (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))
             ? json_object_get_double(v)
             : -1;
}

/* The step that carries the cases: a step with "cases", else the answer's
 * cases_not_run entry (an earlier step failed); *ran says which. */
static json_object *cases_record(json_object *resp, bool *ran) {
  json_object *steps = NULL, *nr = NULL;
  if (json_object_object_get_ex(resp, "steps", &steps) && json_object_is_type(steps, json_type_array))
    for (size_t i = 0; i < json_object_array_length(steps); i++) {
      json_object *s = json_object_array_get_idx(steps, i);
      if (json_object_object_get_ex(s, "cases", NULL)) {
        *ran = true;
        return s;
      }
    }
  *ran = false;
  if (json_object_object_get_ex(resp, "cases_not_run", &nr) && json_object_is_type(nr, json_type_array) &&
      json_object_array_length(nr))
    return json_object_array_get_idx(nr, 0);
  return NULL;
}

/* The record as --json prints it: every case with its "line" (and, when
 * the cases never ran, one entry per case with the one verdict), the job's
 * status, the build step's document, which files. */
static json_object *json_record(json_object *resp, json_object *rec, bool ran, const sbc_cases_tests *t,
                                const cases_opts_t *o, const char *program) {
  json_object *out = NULL;
  json_object_deep_copy(rec, &out, NULL);
  json_object *cases = NULL;
  if (!ran) {
    cases = json_object_new_array();
    for (size_t i = 0; i < t->n; i++) {
      json_object *c = json_object_new_object();
      json_object_object_add(c, "index", json_object_new_int64((int64_t)i));
      json_object_object_add(c, "verdict", json_object_new_string(str(rec, "verdict") ? str(rec, "verdict") : "skipped"));
      json_object_array_add(cases, c);
    }
    json_object_object_add(out, "cases", cases);
  }
  json_object_object_get_ex(out, "cases", &cases);
  for (size_t i = 0; cases && i < json_object_array_length(cases); i++) {
    json_object *c = json_object_array_get_idx(cases, i);
    int64_t idx = json_object_get_int64(json_object_object_get(c, "index"));
    if (idx >= 0 && (size_t)idx < t->n) json_object_object_add(c, "line", json_object_new_int64((int64_t)t->lines[idx]));
  }
  json_object *ff = json_object_object_get(out, "first_failure");
  if (ff && json_object_is_type(ff, json_type_int) && json_object_get_int64(ff) >= 0 &&
      (size_t)json_object_get_int64(ff) < t->n)
    json_object_object_add(out, "first_failure_line", json_object_new_int64((int64_t)t->lines[json_object_get_int64(ff)]));
  else json_object_object_add(out, "first_failure_line", NULL);
  json_object_object_add(out, "job_status", json_object_new_string(str(resp, "status") ? str(resp, "status") : ""));
  json_object *build = NULL, *steps = NULL;
  if (json_object_object_get_ex(resp, "steps", &steps) && json_object_is_type(steps, json_type_array))
    for (size_t i = 0; i < json_object_array_length(steps); i++) {
      json_object *s = json_object_array_get_idx(steps, i);
      if (str(s, "name") && !strcmp(str(s, "name"), "compile")) build = s;
    }
  json_object_object_add(out, "build", build ? json_object_get(build) : NULL);
  json_object_object_add(out, "toolchain", json_object_get(json_object_object_get(resp, "toolchain")));
  json_object_object_add(out, "program", json_object_new_string(program));
  json_object_object_add(out, "tests", json_object_new_string(o->tests));
  return out;
}

/* A failure's first difference, short, on one line. */
static void first_difference(json_object *c, const char *verdict, char *buf, size_t len) {
  buf[0] = '\0';
  const char *why = str(c, "why"), *sig = str(c, "signal"), *lim = str(c, "limit_hit"), *err = str(c, "error");
  json_object *ec = json_object_object_get(c, "exit_code");
  if (why) snprintf(buf, len, "%s", why);
  else if (sig) snprintf(buf, len, "%s", sig);
  else if (lim) snprintf(buf, len, "%s limit", lim);
  else if (!strcmp(verdict, "runtime_error") && ec) {
    const char *e = str(c, "stderr");
    if (e && !*e) e = NULL;
    /* the last line of stderr says most (a traceback's exception) */
    const char *last = e, *p = e;
    while (p && *p) {
      const char *nl = strchr(p, '\n');
      if (!nl) break;
      if (nl[1]) last = nl + 1;
      p = nl + 1;
    }
    if (last) snprintf(buf, len, "exit %d: %.*s", json_object_get_int(ec), (int)strcspn(last, "\n"), last);
    else snprintf(buf, len, "exit %d", json_object_get_int(ec));
  } else if (err) snprintf(buf, len, "%s", err);
  for (char *q = buf; *q; q++)
    if (*q == '\n' || *q == '\t') *q = ' ';
  if (strlen(buf) > 72) strcpy(buf + 69, "...");
}

static void print_table(json_object *rec, bool ran, const sbc_cases_tests *t) {
  json_object *cases = NULL;
  json_object_object_get_ex(rec, "cases", &cases);
  printf("%5s %6s  %-15s %8s %8s  %s\n", "case", "line", "verdict", "cpu_s", "wall_s", "first difference");
  for (size_t i = 0; i < t->n; i++) {
    json_object *c = ran && cases ? json_object_array_get_idx(cases, i) : NULL;
    const char *v = c ? str(c, "verdict") : str(rec, "verdict");
    if (!v) v = "?";
    char diff[128] = "", cpu[32] = "-", wall[32] = "-";
    if (c && strcmp(v, "accepted") != 0 && strcmp(v, "skipped") != 0) first_difference(c, v, diff, sizeof diff);
    if (c && num(c, "cpu_time_s") >= 0) snprintf(cpu, sizeof cpu, "%.3f", num(c, "cpu_time_s"));
    if (c && num(c, "wall_time_s") >= 0) snprintf(wall, sizeof wall, "%.3f", num(c, "wall_time_s"));
    printf("%5zu %6zu  %-15s %8s %8s  %s\n", i + 1, t->lines[i], v, cpu, wall, diff);
  }
}

/* "5 cases: 3 accepted, 2 wrong_answer" (verdicts with a count), then where the first failure is. */
static void print_counts(json_object *rec, const sbc_cases_tests *t, FILE *f) {
  json_object *counts = NULL;
  fprintf(f, "%zu case%s:", t->n, t->n == 1 ? "" : "s");
  int shown = 0;
  if (json_object_object_get_ex(rec, "case_counts", &counts) && json_object_is_type(counts, json_type_object)) {
    json_object_object_foreach(counts, k, v) {
      if (json_object_get_int64(v) > 0) fprintf(f, "%s %lld %s", shown++ ? "," : "", (long long)json_object_get_int64(v), k);
    }
  }
  json_object *ff = json_object_object_get(rec, "first_failure");
  if (ff && json_object_is_type(ff, json_type_int) && (size_t)json_object_get_int64(ff) < t->n)
    fprintf(f, "; first failure: case %lld (line %zu)", (long long)json_object_get_int64(ff) + 1,
            t->lines[json_object_get_int64(ff)]);
  fputc('\n', f);
}

/* What the build said when it failed: the compile step's output, on stderr. */
static void print_build_failure(json_object *resp) {
  json_object *steps = NULL;
  if (!json_object_object_get_ex(resp, "steps", &steps) || !json_object_is_type(steps, json_type_array)) return;
  for (size_t i = 0; i < json_object_array_length(steps); i++) {
    json_object *s = json_object_array_get_idx(steps, i);
    if (!str(s, "status") || !strcmp(str(s, "status"), SBP_STATUS_OK)) continue;
    if (str(s, "stdout")) fputs(str(s, "stdout"), stderr);
    if (str(s, "stderr")) fputs(str(s, "stderr"), stderr);
    fprintf(stderr, "surgebox cases: step %s failed (%s): no case ran\n", str(s, "name") ? str(s, "name") : "?",
            str(s, "status"));
  }
}

/* The round trip, the daemon's refusal mapped to a TESTS line. */
static int roundtrip(const sbc_ctx *g, const cases_opts_t *o, const sbc_cases_tests *t, json_object *req,
                     json_object **resp) {
  sbc_conn c;
  char err[512];
  *resp = NULL;
  if (sbc_open_ctx(&c, g, NULL, err, sizeof err) < 0) return sbo_fail(cases_cmd.name, o->json, SBO_EXIT_FAILURE, "%s", err);
  (void)sbc_send(&c, req);
  *resp = sbc_recv(&c); /* after a failed send too: a daemon that refused us said why */
  sbc_close(&c);
  if (!*resp)
    return sbo_fail(cases_cmd.name, o->json, SBO_EXIT_FAILURE, "no answer from the daemon at %s", c.socket_path);
  const char *code = sbp_response_error_code(*resp);
  if (!code) return 0;
  json_object *e = NULL;
  json_object_object_get_ex(*resp, "error", &e);
  int rc = refused(o, t, code, e && str(e, "message") ? str(e, "message") : "");
  json_object_put(*resp);
  *resp = NULL;
  return rc;
}

/* The answer shown; the exit status. */
static int report(json_object *resp, const cases_opts_t *o, const sbc_cases_tests *t, const char *program) {
  const char *status = str(resp, "status");
  bool ran = false;
  json_object *rec = cases_record(resp, &ran);
  if (!status || !rec || !strcmp(status, SBP_STATUS_INTERNAL_ERROR) || !strcmp(status, SBP_STATUS_TOOLCHAIN_MISSING) ||
      !strcmp(status, SBP_STATUS_UNSUPPORTED) || !strcmp(status, SBP_STATUS_CANCELLED)) {
    const char *why = str(resp, "error");
    if (!why && rec) why = str(rec, "error");
    if (!why) why = rec ? "a case's sandbox failed" : "the answer has no cases";
    return sbo_fail(cases_cmd.name, o->json, SBO_EXIT_FAILURE, "%s: %s (a failure of surgebox, not a verdict)",
                    status ? status : "no status", why);
  }
  if (o->json) {
    json_object *out = json_record(resp, rec, ran, t, o, program);
    sbc_print_json(out);
    json_object_put(out);
  } else {
    if (!ran) print_build_failure(resp);
    print_table(rec, ran, t);
    print_counts(rec, t, stdout);
  }
  fflush(stdout);
  return !strcmp(status, SBP_STATUS_OK) ? 0 : SBC_EXIT_CASES_FAILED;
}

int sbc_cases_main(const sbc_ctx *g0, int argc, char **argv) {
  sbc_ctx g = *g0;
  cases_opts_t o = {0};
  sbc_job_fields_init(&o.job);
  sbc_files files = {json_object_new_array(), 0};
  sbc_cases_tests t = {0};
  sbo_parser p;
  int rc = sbo_parse(&p, &cases_cmd, argc, argv, &o, sbc_ctx_key, &g);
  o.json = o.json || p.json;
  bool done = rc != 0;
  if (rc < 0) rc = 0; /* --help */
  const char *toolchain = o.toolchain;
  if (!done && p.n_pos == 0) rc = sbo_usage_error(&p, "PROGRAM is required (the source file to build and run)");
  else if (!done && !o.tests) rc = sbo_usage_error(&p, "--tests TESTS.jsonl is required (one case a line)");
  else if (!done && p.dashdash) rc = sbo_usage_error(&p, "no '--' here: a case's arguments go in its \"args\", common ones in --arg");
  else if (!done && !toolchain && !(toolchain = sbc_toolchain_of(p.pos[0])))
    rc = sbo_usage_error(&p, "cannot tell %s's language from its name: give --toolchain NAME (see surgebox toolchains)",
                         p.pos[0]);
  char err[PATH_MAX + 1024] = "";
  for (int i = 0, fr; !done && rc == 0 && i < p.n_pos; i++)
    if ((fr = sbc_files_add(&files, p.pos[i], err, sizeof err)) < 0)
      rc = sbo_fail(cases_cmd.name, o.json, fr == -2 ? SBO_EXIT_FAILURE : SBO_EXIT_USAGE, "%s", err);
  if (!done && rc == 0 && sbc_cases_tests_read(&t, o.tests, err, sizeof err) < 0)
    rc = sbo_fail(cases_cmd.name, o.json, SBO_EXIT_FAILURE, "%s", err); /* bad input: 2, as every command's */
  json_object *req = NULL, *resp = NULL;
  if (!done && rc == 0) {
    req = build_request(&g, &o, toolchain, files.files, &t);
    rc = roundtrip(&g, &o, &t, req, &resp);
  }
  if (!done && rc == 0) rc = report(resp, &o, &t, p.pos[0]);
  json_object_put(resp);
  json_object_put(req);
  sbc_cases_tests_free(&t);
  json_object_put(files.files);
  sbc_job_fields_free(&o.job);
  sbo_done(&p);
  return rc;
}
