/* trace-dataset's summary: what every item of OUT/index.jsonl became, and
 * the exit status that follows (traces.h). */
#include "traces.h"
#include "driver.h"

#include <stdio.h>
#include <string.h>

static const char *str_of(json_object *o, const char *k) {
  json_object *v;
  return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static void bump(json_object *o, const char *k) {
  json_object *v;
  int n = json_object_object_get_ex(o, k, &v) ? json_object_get_int(v) : 0;
  json_object_object_add(o, k, json_object_new_int(n + 1));
}

static bool check_differs(json_object *rec) {
  json_object *c, *s, *e;
  if (!json_object_object_get_ex(rec, "trace_check", &c)) return false;
  return !(json_object_object_get_ex(c, "stdout_equal", &s) && json_object_get_boolean(s) &&
           json_object_object_get_ex(c, "exit_equal", &e) && json_object_get_boolean(e));
}

/* " (traced: STATUS, signal S, limit L, error E; untraced: ...)" of a record, into buf. */
static const char *how_ended(json_object *r, char *buf, size_t cap) {
  static const char *const keys[] = {"signal", "limit_hit", "error", NULL};
  json_object *u = NULL;
  json_object_object_get_ex(r, "untraced", &u);
  size_t len = 0;
  for (int side = 0; side < 2 && len < cap; side++) {
    json_object *o = side ? u : r;
    if (!o) continue;
    const char *st = str_of(o, "status");
    len += (size_t)snprintf(buf + len, cap - len, "%s%s: %s", side ? "; " : " (", side ? "untraced" : "traced", st ? st : "?");
    for (size_t k = 0; keys[k] && len < cap; k++)
      if (str_of(o, keys[k])) len += (size_t)snprintf(buf + len, cap - len, ", %s %s", keys[k], str_of(o, keys[k]));
  }
  if (len < cap) snprintf(buf + len, cap - len, ")");
  return buf;
}

int sbtd_summarize(const char *out, json_object *records, size_t not_run, const char *label) {
  json_object *sum = json_object_new_object(), *by_status = json_object_new_object(), *caps = json_object_new_object();
  size_t n = json_object_array_length(records), no_trace = 0, differs = 0, failed = 0;
  const char *first_no_trace = NULL;
  json_object *first_differs = NULL, *first_crashed = NULL;
  for (size_t i = 0; i < n; i++) {
    json_object *r = json_object_array_get_idx(records, i);
    const char *ts = str_of(r, "trace_status"), *st = str_of(r, "status");
    if (!ts) {
      no_trace++;
      if (!first_no_trace) first_no_trace = str_of(r, "id");
      continue;
    }
    bump(by_status, ts);
    if (!strcmp(ts, "truncated")) bump(caps, str_of(r, "cap") ? str_of(r, "cap") : "?");
    if (check_differs(r) && !differs++) first_differs = r;
    if (!strcmp(ts, "crashed") && !first_crashed) first_crashed = r;
    if (st && strcmp(st, "ok")) failed++;
  }
  json_object_object_add(sum, "items", json_object_new_int64((int64_t)(n + not_run)));
  json_object_object_add(sum, "trace_status", by_status);
  json_object_object_add(sum, "truncated_by_cap", caps);
  json_object_object_add(sum, "no_trace", json_object_new_int64((int64_t)no_trace));
  json_object_object_add(sum, "check_differs", json_object_new_int64((int64_t)differs));
  json_object_object_add(sum, "program_not_ok", json_object_new_int64((int64_t)failed));
  json_object_object_add(sum, "not_run", json_object_new_int64((int64_t)not_run));
  char p[4400];
  snprintf(p, sizeof p, "%s/summary.json", out);
  if (sbr_write_json_atomic(p, sum) < 0) fprintf(stderr, "%s: cannot write %s\n", label, p);
  /* the lines */
  json_object *v;
#define COUNT(o, k) (json_object_object_get_ex((o), (k), &v) ? json_object_get_int(v) : 0)
  int complete = COUNT(by_status, "complete"), truncated = COUNT(by_status, "truncated"),
      tampered = COUNT(by_status, "tampered"), crashed = COUNT(by_status, "crashed");
  fprintf(stderr, "%s: %zu items: %d complete, %d truncated", label, n + not_run, complete, truncated);
  if (truncated) {
    fprintf(stderr, " (");
    bool first = true;
    json_object_object_foreach(caps, cap, cn) {
      fprintf(stderr, "%s%d by the %s cap", first ? "" : ", ", json_object_get_int(cn), cap);
      first = false;
    }
    fprintf(stderr, ")");
  }
  fprintf(stderr, ", %d tampered, %d crashed, %zu without a trace, %zu not run (internal error or interrupted)\n", tampered,
          crashed, no_trace, not_run);
  char how[1200];
  fprintf(stderr, "%s: %zu programs did not end ok (their traces are still ground truth); %zu traced runs differ from the "
                  "untraced run in stdout or exit%s%s%s\n",
          label, failed, differs, differs ? ", the first: " : "", differs && str_of(first_differs, "id") ? str_of(first_differs, "id") : "",
          differs ? how_ended(first_differs, how, sizeof how) : "");
  if (first_crashed)
    fprintf(stderr, "%s: the first crashed trace (no end record: the tracer was killed, exited early or lost its "
                    "descriptor): %s%s\n", label, str_of(first_crashed, "id") ? str_of(first_crashed, "id") : "?", how_ended(first_crashed, how, sizeof how));
  if (no_trace) fprintf(stderr, "%s: %zu items have no trace (see \"error\" in index.jsonl; the first: %s)\n", label, no_trace, first_no_trace);
#undef COUNT
  json_object_put(sum);
  return (tampered || crashed || no_trace || differs || not_run) ? 2 : 0;
}
