/* A step with "cases" (issue 38): the step's program run once per case, each
 * run in a sandbox of its own. The job's /app as the step finds it (the
 * build's products) is read once; each case gets a fresh workspace (its own
 * tmpfs and uid) holding those files and the case's own, so nothing a case
 * leaves in /app, /tmp or anywhere else is seen by the next. The expected
 * output never enters a sandbox: the daemon compares what the program
 * printed (judge/), on the loop thread when both sides together are small
 * (SMALL_COMPARE: microseconds), on libuv's worker pool otherwise, so the
 * loop stays responsive. The job is called back through the sbd_cases_calls
 * it handed sbd_cases_start (its sandbox, the step's document): this file
 * names nothing of job.c. */
#include "clock.h"
#include "internal.h"
#include "json_seconds.h"
#include "judge.h"
#include "python_name.h"
#include "utf8.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define APP_MAX_BYTES ((uint64_t)64 << 20) /* the built /app copied into each case */
#define APP_MAX_FILES 20000
#define SMALL_COMPARE ((size_t)64 << 10)
/* The stdout and stderr text shown of all cases of a step together: past it
 * a case shows none (its _truncated says so), so that 10,000 cases stay a
 * readable response line. */
#define SHOWN_MAX_BYTES ((uint64_t)16 << 20)
#define WHY_MAX 256

/* The verdicts, in the order case_counts lists them. */
enum {
  V_ACCEPTED,
  V_WRONG_ANSWER,
  V_TIME_LIMIT,
  V_MEMORY_LIMIT,
  V_RUNTIME_ERROR,
  V_SIGNALED,
  V_OUTPUT_LIMIT,
  V_JUDGE_ERROR,
  V_INTERNAL_ERROR,
  V_SKIPPED,
  V_COMPILE_ERROR,
  V_N
};
static const char *const verdict_names[V_N] = {"accepted",     "wrong_answer",  "time_limit",     "memory_limit",
                                               "runtime_error", "signaled",     "output_limit",   "judge_error",
                                               "internal_error", "skipped",     "compile_error"};

typedef struct {
  char *path;
  unsigned char *data;
  size_t len;
  mode_t mode;
} app_file;

struct sbd_cases_run {
  const sbp_cases *cs;
  char *const *argv;       /* the step's */
  sb_limits base;          /* the step's limits, each case's over them */
  size_t i;                /* the case running */
  app_file *app;
  size_t n_app;
  sb_workspace *ws;        /* the case's */
  char **argv_case;        /* step argv + case args (strings borrowed) */
  sb_limits limits;
  json_object *docs;
  uint64_t counts[V_N];
  long first_failure;
  double cpu_s, wall_s;
  uint64_t t0;
  uint64_t shown_left;     /* of SHOWN_MAX_BYTES */
  char error[SB_ERR_MAX];  /* the step's error: why cases were skipped */
  /* a compare on the worker pool */
  uv_work_t work;
  sbd_job *job_back;
  sb_result r;
  json_object *doc;
  bool equal;
  char why[WHY_MAX];
  sbd_cases_calls calls;   /* the job's: start the sandbox, take the step's document */
  sbd_checker *chk;        /* compare "checker": its judge (checker.c), NULL otherwise */
  bool checking;           /* the checker's sandbox runs for case i (its output in r, its doc in doc) */
};

/* ---- the built /app, read once ---- */
typedef struct {
  sbd_cases_run *c;
  uint64_t bytes;
  char err[SB_ERR_MAX];
} app_walk;

static int app_one(const char *rel, const struct stat *st, int dirfd, const char *name, void *ud) {
  app_walk *w = ud;
  if (!S_ISREG(st->st_mode)) return 0; /* directories come with their files; symlinks, FIFOs: not copied */
  if (w->c->n_app >= APP_MAX_FILES) {
    snprintf(w->err, sizeof w->err, "/app holds over %d files: too many to give each case a copy", APP_MAX_FILES);
    return -1;
  }
  unsigned char *data = NULL;
  size_t len = 0;
  mode_t mode = 0644;
  if (sb_workspace_read_at(dirfd, name, APP_MAX_BYTES - w->bytes, &data, &len, &mode, w->err) < 0) {
    if (w->bytes + (uint64_t)st->st_size > APP_MAX_BYTES)
      snprintf(w->err, sizeof w->err, "/app holds over %llu bytes: too many to give each case a copy",
               (unsigned long long)APP_MAX_BYTES);
    return -1;
  }
  app_file *grown = realloc(w->c->app, (w->c->n_app + 1) * sizeof *grown);
  char *path = strdup(rel);
  if (!grown || !path) {
    free(data);
    free(path);
    if (grown) w->c->app = grown;
    snprintf(w->err, sizeof w->err, "out of memory");
    return -1;
  }
  w->c->app = grown;
  w->c->app[w->c->n_app++] = (app_file){path, data, len, mode & 0777};
  w->bytes += len;
  return 0;
}

static void free_run(sbd_cases_run *c) {
  for (size_t k = 0; k < c->n_app; k++) {
    free(c->app[k].path);
    free(c->app[k].data);
  }
  free(c->app);
  free(c->argv_case);
  if (c->docs) json_object_put(c->docs);
  sbd_checker_free(c->chk, -1);
  free(c);
}

/* ---- documents ---- */
/* At most max bytes of b as text: cut at a UTF-8 boundary, U+FFFD for
 * what is not UTF-8 or is NUL. */
static json_object *shown_text(const sb_buf *b, uint64_t max, bool *cut) {
  size_t n = b->len < max ? b->len : (size_t)max;
  *cut = n < b->len || b->truncated;
  char *t = malloc(n * 3 + 1);
  if (!t) return NULL;
  size_t o = 0;
  for (size_t k = 0; k < n;) {
    size_t s = sbu_utf8_seq(b->data + k, n - k);
    if (s) {
      memcpy(t + o, b->data + k, s);
      o += s;
      k += s;
    } else if (n < b->len && n - k < 4 && b->data[k] >= 0xc0) {
      break; /* a sequence the cut split */
    } else {
      memcpy(t + o, "\xef\xbf\xbd", 3);
      o += 3;
      k++;
    }
  }
  json_object *s = json_object_new_string_len(t, (int)o);
  free(t);
  return s;
}

static json_object *case_doc(sbd_cases_run *c, const sb_result *r) {
  json_object *d = json_object_new_object();
  if (!d) return NULL;
  json_object_object_add(d, "index", json_object_new_int64((int64_t)c->i));
  json_object_object_add(d, "exit_code", r->status == SB_SIGNALED || r->exit_code < 0 ? NULL
                                                                                      : json_object_new_int(r->exit_code));
  const char *abbrev = r->signal ? sigabbrev_np(r->signal) : NULL;
  char sig[32];
  snprintf(sig, sizeof sig, "SIG%s", abbrev ? abbrev : "?");
  json_object_object_add(d, "signal", r->signal ? json_object_new_string(sig) : NULL);
  json_object_object_add(d, "cpu_time_s", sbu_json_seconds(r->cpu_time_s));
  json_object_object_add(d, "wall_time_s", sbu_json_seconds(r->wall_time_s));
  json_object_object_add(d, "max_rss_kb", json_object_new_int64((int64_t)r->max_rss_kb));
  json_object_object_add(d, "limit_hit", r->limit_hit ? json_object_new_string(r->limit_hit) : NULL);
  bool cut;
  uint64_t show = c->cs->case_output_bytes < c->shown_left / 2 ? c->cs->case_output_bytes : c->shown_left / 2;
  c->shown_left -= (r->out.len < show ? r->out.len : show) + (r->err.len < show ? r->err.len : show);
  json_object_object_add(d, "stdout", shown_text(&r->out, show, &cut));
  json_object_object_add(d, "stdout_bytes", json_object_new_int64((int64_t)r->out.len));
  json_object_object_add(d, "stdout_truncated", json_object_new_boolean(cut));
  json_object_object_add(d, "stderr", shown_text(&r->err, show, &cut));
  json_object_object_add(d, "stderr_bytes", json_object_new_int64((int64_t)r->err.len));
  json_object_object_add(d, "stderr_truncated", json_object_new_boolean(cut));
  if (r->error[0]) json_object_object_add(d, "error", json_object_new_string(r->error));
  /* how it started: "warm (zygote, ...)" or "cold", "cold (warm refused: why)" */
  if (r->start[0]) json_object_object_add(d, "start", json_object_new_string(r->start));
  return d;
}

static void record(sbd_cases_run *c, json_object *d, int v, const char *why) {
  if (!d) d = json_object_new_object();
  if (!d) return;
  if (!json_object_object_get_ex(d, "index", NULL))
    json_object_object_add(d, "index", json_object_new_int64((int64_t)c->i));
  json_object_object_add(d, "verdict", json_object_new_string(verdict_names[v]));
  if (why && *why) json_object_object_add(d, "why", json_object_new_string(why));
  json_object_array_add(c->docs, d);
  c->counts[v]++;
  if (v != V_ACCEPTED && c->first_failure < 0) c->first_failure = (long)c->i;
}

static int verdict_index(const char *name) {
  for (int v = 0; v < V_N; v++)
    if (strcmp(verdict_names[v], name) == 0) return v;
  return V_JUDGE_ERROR;
}

static json_object *counts_json(const uint64_t counts[V_N]) {
  json_object *o = json_object_new_object();
  for (int v = 0; o && v < V_N; v++) json_object_object_add(o, verdict_names[v], json_object_new_int64((int64_t)counts[v]));
  return o;
}

json_object *sbd_cases_unrun_doc(const char *name, const sbp_cases *cs, bool build_failed) {
  json_object *d = json_object_new_object();
  if (!d) return NULL;
  int v = build_failed ? V_COMPILE_ERROR : V_SKIPPED;
  uint64_t counts[V_N] = {0};
  counts[v] = cs->n;
  json_object_object_add(d, "name", json_object_new_string(name));
  json_object_object_add(d, "verdict", json_object_new_string(verdict_names[v]));
  json_object_object_add(d, "n_cases", json_object_new_int64((int64_t)cs->n));
  json_object_object_add(d, "case_counts", counts_json(counts));
  json_object_object_add(d, "first_failure", json_object_new_int64(0));
  return d;
}

/* ---- the run ---- */
static void next_case(sbd_job *job);

static void finish(sbd_job *job) {
  sbd_cases_run *c = job->cases;
  const char *status = SBP_STATUS_OK;
  if (c->counts[V_INTERNAL_ERROR]) status = SBP_STATUS_INTERNAL_ERROR;
  else if (c->counts[V_ACCEPTED] != c->cs->n) status = SBP_STATUS_CASES_FAILED;
  json_object *doc = json_object_new_object();
  if (doc) {
    json_object_object_add(doc, "status", json_object_new_string(status));
    json_object_object_add(doc, "n_cases", json_object_new_int64((int64_t)c->cs->n));
    json_object_object_add(doc, "case_counts", counts_json(c->counts));
    json_object_object_add(doc, "first_failure", c->first_failure >= 0 ? json_object_new_int64(c->first_failure) : NULL);
    json_object_object_add(doc, "cpu_time_s", sbu_json_seconds(c->cpu_s));
    json_object_object_add(doc, "wall_time_s", sbu_json_seconds(c->wall_s));
    json_object_object_add(doc, "error", c->error[0] ? json_object_new_string(c->error) : NULL);
    json_object_object_add(doc, "cases", c->docs);
    c->docs = NULL;
  }
  double cpu = c->cpu_s, wall = c->wall_s;
  sbd_cases_calls calls = c->calls;
  job->cases = NULL;
  sbd_checker_abandon(c->chk, job);
  sbd_checker_free(c->chk, job->slot);
  c->chk = NULL;
  free_run(c);
  calls.finished(job, doc, strcmp(status, SBP_STATUS_OK) == 0, cpu, wall);
}

/* The cases from c->i on are not run: each says skipped. */
static void skip_rest(sbd_cases_run *c) {
  for (; c->i < c->cs->n; c->i++) record(c, NULL, V_SKIPPED, NULL);
}

static void case_done(sbd_job *job) {
  sbd_cases_run *c = job->cases;
  sb_workspace_destroy_in_slot(c->ws, job->slot);
  c->ws = NULL;
  bool failed = c->first_failure >= 0;
  c->i++;
  if (job->cancelled) {
    snprintf(c->error, sizeof c->error, "cancelled: the cases not run are skipped");
    skip_rest(c);
  } else if (failed && c->cs->stop_first_failure && c->i < c->cs->n) {
    snprintf(c->error, sizeof c->error, "stop: first_failure after case %ld: the rest skipped", c->first_failure);
    skip_rest(c);
  } else if (c->cs->budget_s > 0 && c->i < c->cs->n &&
             (double)(sbu_now_ns() - c->t0) / 1e9 >= c->cs->budget_s) {
    snprintf(c->error, sizeof c->error, "budget_s %g spent after %zu cases: the rest skipped", c->cs->budget_s, c->i);
    skip_rest(c);
  }
  if (c->i >= c->cs->n) finish(job);
  else next_case(job);
}

static int verdict_of(const sb_result *r) {
  switch (r->status) {
  case SB_OK: return V_ACCEPTED;
  case SB_RUNTIME_ERROR: return V_RUNTIME_ERROR;
  case SB_SIGNALED: return V_SIGNALED;
  case SB_TIMEOUT: return V_TIME_LIMIT;
  case SB_MEMORY_LIMIT: return V_MEMORY_LIMIT;
  case SB_OUTPUT_LIMIT: return V_OUTPUT_LIMIT;
  default: return V_INTERNAL_ERROR; /* the sandbox's failure or the host's OOM killer: never the program's */
  }
}

/* The harness's line {"result": VALUE} against the expected value (json_equal:
 * lists and tuples alike, floats within the tolerances). */
static bool fn_result_equal(const sbj_compare *cmp, json_object *expected, const sb_buf *out, char *why, size_t n) {
  json_tokener *tok = json_tokener_new();
  json_object *doc = tok && out->data ? json_tokener_parse_ex(tok, (const char *)out->data, (int)out->len) : NULL;
  bool clean = doc && json_tokener_get_error(tok) == json_tokener_success;
  if (tok) json_tokener_free(tok);
  json_object *value = NULL;
  if (!clean || !json_object_is_type(doc, json_type_object) || !json_object_object_get_ex(doc, "result", &value)) {
    snprintf(why, n, "the function returned no value (no result line from the harness)");
    if (doc) json_object_put(doc);
    return false;
  }
  bool eq = sbj_json_equal(cmp, expected, value, why, n);
  json_object_put(doc);
  return eq;
}

static void compare(sbd_cases_run *c) {
  const sbp_case *k = &c->cs->v[c->i];
  sbj_compare cmp;
  sbj_compare_default(&cmp);
  cmp.mode = k->compare == SBP_CMP_EXACT ? SBJ_EXACT
             : k->compare == SBP_CMP_TOKENS ? SBJ_TOKENS
             : k->compare == SBP_CMP_NUMBERS ? SBJ_NUMBERS
                                             : SBJ_LINES;
  cmp.abs_tol = k->abs_tol;
  cmp.rel_tol = k->rel_tol;
  cmp.ignore_case = k->ignore_case;
  c->why[0] = '\0';
  if (c->cs->fn_name) {
    c->equal = fn_result_equal(&cmp, k->expected_value, &c->r.out, c->why, sizeof c->why);
    return;
  }
  c->equal = sbj_output_equal(&cmp, (const char *)k->expected, k->expected_len,
                              c->r.out.data ? (const char *)c->r.out.data : "", c->r.out.len, c->why, sizeof c->why);
}

static void compared(sbd_job *job) {
  sbd_cases_run *c = job->cases;
  record(c, c->doc, c->equal ? V_ACCEPTED : V_WRONG_ANSWER, c->equal ? NULL : c->why);
  c->doc = NULL;
  sb_result_free(&c->r);
  case_done(job);
}

static void compare_work(uv_work_t *w) { compare(w->data); }

static void compare_after(uv_work_t *w, int status) {
  (void)status; /* never cancelled: uv_cancel is not called on it */
  sbd_cases_run *c = w->data;
  compared(c->job_back);
}

/* The checker's build ended or could not start: the cases run, or each is
 * judge_error, the step's error saying why. */
static void checker_built(sbd_job *job, int rc, const char *err) {
  sbd_cases_run *c = job->cases;
  if (rc < 0) {
    snprintf(c->error, sizeof c->error, "%s", err);
    for (; c->i < c->cs->n; c->i++) record(c, NULL, V_JUDGE_ERROR, NULL);
    finish(job);
    return;
  }
  if (rc > 0) c->calls.start_sandbox(job); /* its compile */
  else next_case(job);
}

/* The program's run of a checker case ended well: the checker judges it,
 * in a sandbox of its own, the program's workspace gone first. */
static void start_check(sbd_job *job, sb_result *r, json_object *d) {
  sbd_cases_run *c = job->cases;
  const sbp_case *k = &c->cs->v[c->i];
  sb_workspace_destroy_in_slot(c->ws, job->slot);
  c->ws = NULL;
  char err[SB_ERR_MAX] = "";
  if (sbd_checker_case_begin(c->chk, job, k->stdin_data, k->has_stdin ? k->stdin_len : 0, r->out.data, r->out.len,
                             k->expected, k->has_expected ? k->expected_len : 0, err) < 0) {
    sbd_log(job->srv, "error", "job %s case %zu: the checker's workspace: %s", job->req->id_key, c->i, err);
    if (d) json_object_object_add(d, "error", json_object_new_string(err));
    record(c, d, V_INTERNAL_ERROR, NULL);
    sb_result_free(r);
    sbd_checker_abandon(c->chk, job);
    case_done(job);
    return;
  }
  c->r = *r;
  c->doc = d;
  c->checking = true;
  c->calls.start_sandbox(job);
}

bool sbd_cases_result(sbd_job *job, sb_result *r) {
  sbd_cases_run *c = job->cases;
  if (!c) return false;
  if (c->chk && sbd_checker_building(c->chk)) {
    sbd_metrics_step(job->srv, r->cpu_time_s, r->wall_time_s);
    char err[SB_ERR_MAX] = "";
    int rc = sbd_checker_build_end(c->chk, job, r, err);
    checker_built(job, rc, err);
    return true;
  }
  if (c->checking) {
    sbd_metrics_step(job->srv, r->cpu_time_s, r->wall_time_s);
    c->checking = false;
    c->why[0] = '\0';
    int v = verdict_index(sbd_checker_case_end(c->chk, job, r, c->doc, c->why, sizeof c->why));
    record(c, c->doc, v, v == V_ACCEPTED ? NULL : c->why);
    c->doc = NULL;
    sb_result_free(&c->r);
    case_done(job);
    return true;
  }
  c->cpu_s += r->cpu_time_s;
  c->wall_s += r->wall_time_s;
  sbd_metrics_step(job->srv, r->cpu_time_s, r->wall_time_s);
  json_object *d = case_doc(c, r);
  int v = verdict_of(r);
  const sbp_case *k = &c->cs->v[c->i];
  if (v == V_ACCEPTED && k->compare == SBP_CMP_CHECKER && !job->cancelled) {
    start_check(job, r, d);
    return true;
  }
  if (v != V_ACCEPTED || !k->has_expected || job->cancelled) {
    if (v == V_INTERNAL_ERROR) sbd_log(job->srv, "error", "job %s case %zu: %s", job->req->id_key, c->i, r->error);
    record(c, d, v, NULL);
    sb_result_free(r);
    case_done(job);
    return true;
  }
  c->r = *r; /* the output's bytes, ours until compared */
  c->doc = d;
  if (k->expected_len + r->out.len <= SMALL_COMPARE && !(c->cs->fn_name && r->out.len > 4096)) {
    compare(c);
    compared(job);
    return true;
  }
  c->job_back = job;
  c->work.data = c;
  if (uv_queue_work(&job->srv->loop, &c->work, compare_work, compare_after) < 0) {
    compare(c); /* no worker pool: here, then */
    compared(job);
  }
  return true;
}

/* The case's workspace: the built /app, then the case's files over it. */
static int prepare(sbd_job *job, char err[SB_ERR_MAX]) {
  sbd_cases_run *c = job->cases;
  const sbp_case *k = &c->cs->v[c->i];
  int rc = sb_workspace_create(job->srv->rt, 512, &c->ws, err);
  for (size_t f = 0; rc == 0 && f < c->n_app; f++)
    rc = sb_workspace_write(c->ws, c->app[f].path, c->app[f].data, c->app[f].len, c->app[f].mode, err);
  for (size_t f = 0; rc == 0 && f < k->n_files; f++)
    rc = sb_workspace_write(c->ws, k->files[f].path, k->files[f].data, k->files[f].len,
                            k->files[f].has_mode ? k->files[f].mode : 0644, err);
  if (rc == 0 && c->cs->fn_name)
    rc = sb_workspace_write(c->ws, SBD_FN_HARNESS_NAME, sbd_fn_harness, strlen(sbd_fn_harness), 0644, err);
  size_t n = 0, na = 0;
  while (c->argv[n]) n++;
  while (k->args[na]) na++;
  free(c->argv_case);
  if (rc == 0 && c->cs->fn_name) { /* INTERPRETER HARNESS FILE */
    c->argv_case = calloc(4, sizeof *c->argv_case);
    if (!c->argv_case) {
      snprintf(err, SB_ERR_MAX, "out of memory");
      return -ENOMEM;
    }
    c->argv_case[0] = c->argv[0];
    c->argv_case[1] = (char *)"/app/" SBD_FN_HARNESS_NAME;
    c->argv_case[2] = c->argv[1];
    c->limits = c->base;
    sbt_limits_apply(&c->limits, &k->limits);
    return 0;
  }
  c->argv_case = rc == 0 ? calloc(n + na + 1, sizeof *c->argv_case) : NULL;
  if (rc == 0 && !c->argv_case) {
    snprintf(err, SB_ERR_MAX, "out of memory");
    rc = -ENOMEM;
  }
  for (size_t a = 0; rc == 0 && a < n; a++) c->argv_case[a] = c->argv[a];
  for (size_t a = 0; rc == 0 && a < na; a++) c->argv_case[n + a] = k->args[a];
  c->limits = c->base;
  sbt_limits_apply(&c->limits, &k->limits);
  return rc;
}

static void next_case(sbd_job *job) {
  sbd_cases_run *c = job->cases;
  char err[SB_ERR_MAX] = "";
  if (prepare(job, err) < 0) {
    sbd_log(job->srv, "error", "job %s case %zu: %s", job->req->id_key, c->i, err);
    json_object *d = json_object_new_object();
    if (d) json_object_object_add(d, "error", json_object_new_string(err));
    record(c, d, V_INTERNAL_ERROR, NULL);
    case_done(job);
    return;
  }
  c->calls.start_sandbox(job);
}

void sbd_cases_spec(const sbd_job *job, sb_spec *spec) {
  const sbd_cases_run *c = job->cases;
  if (c->chk && (c->checking || sbd_checker_building(c->chk))) {
    sbd_checker_spec(c->chk, spec);
    return;
  }
  const sbp_case *k = &c->cs->v[c->i];
  spec->workspace = c->ws;
  spec->argv = (const char *const *)c->argv_case;
  spec->stdin_data = c->cs->fn_name ? (const void *)k->fn_call : k->has_stdin ? k->stdin_data : NULL;
  spec->stdin_len = c->cs->fn_name ? k->fn_call_len : k->stdin_len;
  spec->limits = c->limits;
}

void sbd_cases_start(sbd_job *job, const sbd_jstep *js, sbd_cases_calls calls) {
  sbd_cases_run *c = calloc(1, sizeof *c);
  json_object *docs = json_object_new_array();
  if (!c || !docs) {
    free(c);
    if (docs) json_object_put(docs);
    json_object *d = json_object_new_object();
    if (d) {
      json_object_object_add(d, "status", json_object_new_string(SBP_STATUS_INTERNAL_ERROR));
      json_object_object_add(d, "error", json_object_new_string("out of memory"));
    }
    calls.finished(job, d, false, 0, 0);
    return;
  }
  c->calls = calls;
  c->cs = js->cases;
  c->argv = js->argv;
  c->base = js->limits;
  c->docs = docs;
  c->first_failure = -1;
  c->t0 = sbu_now_ns();
  c->shown_left = SHOWN_MAX_BYTES;
  job->cases = c;
  size_t argc = 0;
  while (c->argv[argc]) argc++;
  if (c->cs->fn_name && (argc != 2 || !sbu_is_python_name(c->argv[0]))) {
    snprintf(c->error, sizeof c->error,
             "fn_name needs a Python step run as INTERPRETER FILE (python3 sol.py; the python3 toolchain without "
             "args): this one runs %s with %zu arguments", c->argv[0], argc - 1);
    for (; c->i < c->cs->n; c->i++) record(c, NULL, V_JUDGE_ERROR, NULL);
    finish(job);
    return;
  }
  app_walk w = {.c = c};
  char err[SB_ERR_MAX] = "";
  if (sb_workspace_walk(job->ws, app_one, &w, err) < 0) {
    snprintf(c->error, sizeof c->error, "the built /app cannot be given to the cases: %s", w.err[0] ? w.err : err);
    sbd_log(job->srv, "error", "job %s: %s", job->req->id_key, c->error);
    for (; c->i < c->cs->n; c->i++) record(c, NULL, V_INTERNAL_ERROR, NULL);
    finish(job);
    return;
  }
  bool uses_checker = false;
  for (size_t i = 0; i < c->cs->n; i++) uses_checker |= c->cs->v[i].compare == SBP_CMP_CHECKER;
  if (uses_checker) { /* built once, before the first case */
    int rc = sbd_checker_new(job, &c->cs->checker, &c->chk, err);
    if (rc == 0) rc = sbd_checker_build_begin(c->chk, job, err);
    checker_built(job, rc, err);
    return;
  }
  next_case(job);
}

void sbd_cases_free(sbd_job *job) {
  sbd_cases_run *c = job->cases;
  if (!c) return;
  job->cases = NULL;
  sb_workspace_destroy_in_slot(c->ws, job->slot);
  sbd_checker_abandon(c->chk, job);
  sbd_checker_free(c->chk, job->slot);
  c->chk = NULL;
  if (c->doc) json_object_put(c->doc);
  sb_result_free(&c->r);
  free_run(c);
}
