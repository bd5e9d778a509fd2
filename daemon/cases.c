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
#define WARM_WAIT_MS 5 /* a lent slot's zygote starting: asked again after this */

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

/* A lane runs one case at a time: the main lane on the job's own slot (its
 * sandboxes started by the job, job->run), lent lanes each on a slot the
 * scheduler lent for one case (their sandboxes started here). */
typedef struct lane {
  sbd_cases_run *c;        /* NULL: the run went while this lent lane's case ran */
  sbd_server *srv;
  int slot;
  bool lent;
  long idx;                /* the case running, -1: idle */
  sb_workspace *ws;        /* the case's */
  char **argv_case;        /* step argv + case args (strings borrowed) */
  sb_limits limits;
  sbd_step_run *run;       /* a lent lane's sandbox */
  char warm_refused[SB_ERR_MAX]; /* a lent lane's zygote ended before the program: once again, cold */
  /* a compare on the worker pool */
  uv_work_t work;
  sb_result r;
  json_object *doc;
  bool equal;
  char why[WHY_MAX];
  struct lane *next;       /* the run's lent lanes */
} lane;

struct sbd_cases_run {
  const sbp_cases *cs;
  char *const *argv;       /* the step's */
  sb_limits base;          /* the step's limits, each case's over them */
  sbd_job *job;
  lane main;
  lane *lent;
  size_t next;             /* the next case to start (cases start in index order) */
  size_t ended;            /* cases that ended */
  json_object **by_index;  /* each ended case's document, n of them */
  signed char *verdict;    /* each case's verdict, -1: not ended */
  size_t cut;              /* cases past it are reported skipped: first_failure, a cancel */
  bool stopping;           /* start no more cases */
  app_file *app;
  size_t n_app;
  double cpu_s, wall_s;
  uint64_t t0;
  uint64_t shown_left;     /* of SHOWN_MAX_BYTES */
  char error[SB_ERR_MAX];  /* the step's error: why cases were skipped */
  sbd_cases_calls calls;   /* the job's: start the sandbox, its spec, take the step's document */
  sbd_checker *chk;        /* compare "checker": its judge (checker.c), NULL otherwise */
  bool checking;           /* the checker's sandbox runs for the main lane's case (its output in r, its doc in doc) */
  sbd_borrower borrower;   /* lent slots for the next cases (sched.c) */
  bool solo;               /* a traced step: its own slot only */
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

static void lane_clear(lane *l) {
  sb_workspace_destroy_in_slot(l->ws, l->slot);
  l->ws = NULL;
  free(l->argv_case);
  l->argv_case = NULL;
  if (l->doc) json_object_put(l->doc);
  l->doc = NULL;
  sb_result_free(&l->r);
  l->idx = -1;
}

static void free_run(sbd_cases_run *c) {
  sbd_sched_unborrow(c->job->srv, &c->borrower);
  for (size_t k = 0; k < c->n_app; k++) {
    free(c->app[k].path);
    free(c->app[k].data);
  }
  free(c->app);
  lane_clear(&c->main);
  /* A lent lane still running (the job freed under it: the daemon's end)
   * is killed and ends on its own, giving its slot back (lane_done). */
  while (c->lent) {
    lane *l = c->lent;
    c->lent = l->next;
    l->c = NULL;
    if (l->run) sbd_step_kill(l->run, "cancel");
  }
  for (size_t k = 0; c->by_index && k < c->cs->n; k++)
    if (c->by_index[k]) json_object_put(c->by_index[k]);
  free(c->by_index);
  free(c->verdict);
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

static json_object *case_doc(sbd_cases_run *c, long idx, const sb_result *r) {
  json_object *d = json_object_new_object();
  if (!d) return NULL;
  json_object_object_add(d, "index", json_object_new_int64((int64_t)idx));
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

/* Case idx ended with verdict v: its document kept by index, so that the
 * answer is in case order whichever lane ended first. */
static void record(sbd_cases_run *c, long idx, json_object *d, int v, const char *why) {
  if (!d) d = json_object_new_object();
  if (!d) return;
  if (!json_object_object_get_ex(d, "index", NULL))
    json_object_object_add(d, "index", json_object_new_int64((int64_t)idx));
  json_object_object_add(d, "verdict", json_object_new_string(verdict_names[v]));
  if (why && *why) json_object_object_add(d, "why", json_object_new_string(why));
  if (c->by_index[idx]) json_object_put(c->by_index[idx]);
  c->by_index[idx] = d;
  c->verdict[idx] = (signed char)v;
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
/* Cases start in index order, the first on the job's own slot (the main
 * lane); once one ended, more start on slots the scheduler lends while
 * nothing is queued (one case per lent slot; a step with a checker stays on
 * its own slot). Whatever order they end in, the answer is the sequential
 * one: documents by index, and past a cut (the first failure under stop:
 * first_failure, the lowest case running at a cancel) every case is
 * reported skipped, the ones still running there killed. */
static void case_end(sbd_cases_run *c, lane *l);
static void start_case(sbd_cases_run *c, lane *l);

static bool lanes_idle(const sbd_cases_run *c) { return c->main.idx < 0 && !c->lent; }

static bool can_start(const sbd_cases_run *c) {
  return !c->stopping && !c->job->cancelled && c->next < c->cs->n;
}

static void finish(sbd_job *job) {
  sbd_cases_run *c = job->cases;
  uint64_t counts[V_N] = {0};
  long first_failure = -1;
  json_object *docs = json_object_new_array();
  for (size_t k = 0; k < c->cs->n; k++) {
    json_object *d = c->by_index[k];
    int v = c->verdict[k];
    c->by_index[k] = NULL;
    if (v < 0 || k > c->cut) { /* not run, or past the cut: as the sequential run would say */
      if (d) json_object_put(d);
      v = V_SKIPPED;
      d = json_object_new_object();
      if (d) {
        json_object_object_add(d, "index", json_object_new_int64((int64_t)k));
        json_object_object_add(d, "verdict", json_object_new_string(verdict_names[v]));
      }
    }
    counts[v]++;
    if (v != V_ACCEPTED && first_failure < 0) first_failure = (long)k;
    if (docs && d) json_object_array_add(docs, d);
    else if (d) json_object_put(d);
  }
  if (job->cancelled) snprintf(c->error, sizeof c->error, "cancelled: the cases not run are skipped");
  else if (c->cs->stop_first_failure && c->cut + 1 < c->cs->n && !c->error[0])
    snprintf(c->error, sizeof c->error, "stop: first_failure after case %zu: the rest skipped", c->cut);
  const char *status = SBP_STATUS_OK;
  if (counts[V_INTERNAL_ERROR]) status = SBP_STATUS_INTERNAL_ERROR;
  else if (counts[V_ACCEPTED] != c->cs->n) status = SBP_STATUS_CASES_FAILED;
  json_object *doc = json_object_new_object();
  if (doc) {
    json_object_object_add(doc, "status", json_object_new_string(status));
    json_object_object_add(doc, "n_cases", json_object_new_int64((int64_t)c->cs->n));
    json_object_object_add(doc, "case_counts", counts_json(counts));
    json_object_object_add(doc, "first_failure", first_failure >= 0 ? json_object_new_int64(first_failure) : NULL);
    json_object_object_add(doc, "cpu_time_s", sbu_json_seconds(c->cpu_s));
    json_object_object_add(doc, "wall_time_s", sbu_json_seconds(c->wall_s));
    json_object_object_add(doc, "error", c->error[0] ? json_object_new_string(c->error) : NULL);
    json_object_object_add(doc, "cases", docs);
  } else if (docs) {
    json_object_put(docs);
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

/* budget_s spent: no case starts any more. */
static void check_budget(sbd_cases_run *c) {
  if (!c->stopping && c->next < c->cs->n && c->cs->budget_s > 0 &&
      (double)(sbu_now_ns() - c->t0) / 1e9 >= c->cs->budget_s) {
    snprintf(c->error, sizeof c->error, "budget_s %g spent after %zu cases: the rest skipped", c->cs->budget_s,
             c->next);
    c->stopping = true;
  }
}

/* Kill the cases running past the cut: their results will not be shown. */
static void kill_past(sbd_cases_run *c) {
  if (c->main.idx >= 0 && (size_t)c->main.idx > c->cut && c->job->run && !c->checking)
    sbd_step_kill(c->job->run, "cancel");
  for (lane *l = c->lent; l; l = l->next)
    if (l->idx >= 0 && (size_t)l->idx > c->cut && l->run) sbd_step_kill(l->run, "cancel");
}

/* Borrow slots while there are cases to start and one case already ended
 * (the first one alone: a budget or a first failure may end the step before
 * anything more would run, as it did sequentially). */
static void update_borrow(sbd_cases_run *c) {
  bool want = can_start(c) && c->ended >= 1 && !c->chk && !c->solo;
  if (want) sbd_sched_borrow(c->job->srv, &c->borrower);
  else sbd_sched_unborrow(c->job->srv, &c->borrower);
}

static void main_next(sbd_cases_run *c) {
  if (can_start(c)) start_case(c, &c->main);
  else if (lanes_idle(c)) finish(c->job);
}

/* Case l->idx ended (its document recorded): the lane is free. */
static void case_end(sbd_cases_run *c, lane *l) {
  sbd_server *srv = c->job->srv;
  long idx = l->idx;
  bool lent = l->lent;
  int slot = l->slot;
  lane_clear(l);
  c->ended++;
  int v = c->verdict[idx];
  if (c->cs->stop_first_failure && v >= 0 && v != V_ACCEPTED && (size_t)idx < c->cut) {
    c->cut = (size_t)idx;
    c->stopping = true;
    kill_past(c);
  }
  check_budget(c);
  update_borrow(c);
  if (lent) {
    lane **p = &c->lent;
    while (*p && *p != l) p = &(*p)->next;
    if (*p) *p = l->next;
    free(l);
    if (lanes_idle(c)) finish(c->job);
    sbd_sched_give_back(srv, slot); /* c may be gone: only srv */
    return;
  }
  main_next(c);
  sbd_sched_pump(srv); /* slots to lend, now that this run borrows */
}

static void record_end(sbd_cases_run *c, lane *l, json_object *d, int v, const char *why) {
  record(c, l->idx, d, v, why);
  case_end(c, l);
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

static void compare(sbd_cases_run *c, lane *l) {
  const sbp_case *k = &c->cs->v[l->idx];
  sbj_compare cmp;
  sbj_compare_default(&cmp);
  cmp.mode = k->compare == SBP_CMP_EXACT ? SBJ_EXACT
             : k->compare == SBP_CMP_TOKENS ? SBJ_TOKENS
             : k->compare == SBP_CMP_NUMBERS ? SBJ_NUMBERS
                                             : SBJ_LINES;
  cmp.abs_tol = k->abs_tol;
  cmp.rel_tol = k->rel_tol;
  cmp.ignore_case = k->ignore_case;
  l->why[0] = '\0';
  if (c->cs->fn_name) {
    l->equal = fn_result_equal(&cmp, k->expected_value, &l->r.out, l->why, sizeof l->why);
    return;
  }
  l->equal = sbj_output_equal(&cmp, (const char *)k->expected, k->expected_len,
                              l->r.out.data ? (const char *)l->r.out.data : "", l->r.out.len, l->why, sizeof l->why);
}

static void compared(sbd_cases_run *c, lane *l) {
  json_object *d = l->doc;
  l->doc = NULL;
  sb_result_free(&l->r);
  record_end(c, l, d, l->equal ? V_ACCEPTED : V_WRONG_ANSWER, l->equal ? NULL : l->why);
}

static void compare_work(uv_work_t *w) {
  lane *l = w->data;
  compare(l->c, l);
}

static void compare_after(uv_work_t *w, int status) {
  (void)status; /* never cancelled: uv_cancel is not called on it */
  lane *l = w->data;
  compared(l->c, l);
}

/* The checker's build ended or could not start: the cases run, or each is
 * judge_error, the step's error saying why. */
static void checker_built(sbd_job *job, int rc, const char *err) {
  sbd_cases_run *c = job->cases;
  if (rc < 0) {
    snprintf(c->error, sizeof c->error, "%s", err);
    for (; c->next < c->cs->n; c->next++) record(c, (long)c->next, NULL, V_JUDGE_ERROR, NULL);
    finish(job);
    return;
  }
  if (rc > 0) c->calls.start_sandbox(job); /* its compile */
  else main_next(c);
}

/* The program's run of a checker case ended well: the checker judges it,
 * in a sandbox of its own, the program's workspace gone first. Main lane
 * only (a step with a checker borrows no slot). */
static void start_check(sbd_job *job, sb_result *r, json_object *d) {
  sbd_cases_run *c = job->cases;
  lane *l = &c->main;
  const sbp_case *k = &c->cs->v[l->idx];
  sb_workspace_destroy_in_slot(l->ws, l->slot);
  l->ws = NULL;
  char err[SB_ERR_MAX] = "";
  if (sbd_checker_case_begin(c->chk, job, k->stdin_data, k->has_stdin ? k->stdin_len : 0, r->out.data, r->out.len,
                             k->expected, k->has_expected ? k->expected_len : 0, err) < 0) {
    sbd_log(job->srv, "error", "job %s case %ld: the checker's workspace: %s", job->req->id_key, l->idx, err);
    if (d) json_object_object_add(d, "error", json_object_new_string(err));
    sb_result_free(r);
    sbd_checker_abandon(c->chk, job);
    record_end(c, l, d, V_INTERNAL_ERROR, NULL);
    return;
  }
  l->r = *r;
  l->doc = d;
  c->checking = true;
  c->calls.start_sandbox(job);
}

/* A case's run ended on lane l (r taken). */
static void lane_result(sbd_cases_run *c, lane *l, sb_result *r) {
  sbd_job *job = c->job;
  c->cpu_s += r->cpu_time_s;
  c->wall_s += r->wall_time_s;
  sbd_metrics_step(job->srv, r->cpu_time_s, r->wall_time_s);
  json_object *d = case_doc(c, l->idx, r);
  int v = verdict_of(r);
  const sbp_case *k = &c->cs->v[l->idx];
  if (v == V_ACCEPTED && k->compare == SBP_CMP_CHECKER && !job->cancelled && !l->lent) {
    start_check(job, r, d);
    return;
  }
  if (v != V_ACCEPTED || !k->has_expected || job->cancelled) {
    if (v == V_INTERNAL_ERROR) sbd_log(job->srv, "error", "job %s case %ld: %s", job->req->id_key, l->idx, r->error);
    sb_result_free(r);
    record_end(c, l, d, v, NULL);
    return;
  }
  l->r = *r; /* the output's bytes, ours until compared */
  l->doc = d;
  if (k->expected_len + r->out.len <= SMALL_COMPARE && !(c->cs->fn_name && r->out.len > 4096)) {
    compare(c, l);
    compared(c, l);
    return;
  }
  l->work.data = l;
  if (uv_queue_work(&job->srv->loop, &l->work, compare_work, compare_after) < 0) {
    compare(c, l); /* no worker pool: here, then */
    compared(c, l);
  }
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
    lane *l = &c->main;
    sbd_metrics_step(job->srv, r->cpu_time_s, r->wall_time_s);
    c->checking = false;
    l->why[0] = '\0';
    int v = verdict_index(sbd_checker_case_end(c->chk, job, r, l->doc, l->why, sizeof l->why));
    json_object *d = l->doc;
    l->doc = NULL;
    sb_result_free(&l->r);
    record_end(c, l, d, v, v == V_ACCEPTED ? NULL : l->why);
    return true;
  }
  lane_result(c, &c->main, r);
  return true;
}

/* The case's workspace: the built /app, then the case's files over it. */
static int prepare(sbd_cases_run *c, lane *l, char err[SB_ERR_MAX]) {
  const sbp_case *k = &c->cs->v[l->idx];
  int rc = sb_workspace_create(c->job->srv->rt, 512, &l->ws, err);
  for (size_t f = 0; rc == 0 && f < c->n_app; f++)
    rc = sb_workspace_write(l->ws, c->app[f].path, c->app[f].data, c->app[f].len, c->app[f].mode, err);
  for (size_t f = 0; rc == 0 && f < k->n_files; f++)
    rc = sb_workspace_write(l->ws, k->files[f].path, k->files[f].data, k->files[f].len,
                            k->files[f].has_mode ? k->files[f].mode : 0644, err);
  if (rc == 0 && c->cs->fn_name)
    rc = sb_workspace_write(l->ws, SBD_FN_HARNESS_NAME, sbd_fn_harness, strlen(sbd_fn_harness), 0644, err);
  size_t n = 0, na = 0;
  while (c->argv[n]) n++;
  while (k->args[na]) na++;
  free(l->argv_case);
  l->argv_case = NULL;
  l->limits = c->base;
  sbt_limits_apply(&l->limits, &k->limits);
  if (rc == 0 && c->cs->fn_name) { /* INTERPRETER HARNESS FILE */
    l->argv_case = calloc(4, sizeof *l->argv_case);
    if (!l->argv_case) {
      snprintf(err, SB_ERR_MAX, "out of memory");
      return -ENOMEM;
    }
    l->argv_case[0] = c->argv[0];
    l->argv_case[1] = (char *)"/app/" SBD_FN_HARNESS_NAME;
    l->argv_case[2] = c->argv[1];
    return 0;
  }
  l->argv_case = rc == 0 ? calloc(n + na + 1, sizeof *l->argv_case) : NULL;
  if (rc == 0 && !l->argv_case) {
    snprintf(err, SB_ERR_MAX, "out of memory");
    rc = -ENOMEM;
  }
  for (size_t a = 0; rc == 0 && a < n; a++) l->argv_case[a] = c->argv[a];
  for (size_t a = 0; rc == 0 && a < na; a++) l->argv_case[n + a] = k->args[a];
  return rc;
}

/* The case's spec over the job's (its workspace, argv, stdin, limits). */
static void case_spec(const sbd_cases_run *c, const lane *l, sb_spec *spec) {
  const sbp_case *k = &c->cs->v[l->idx];
  spec->workspace = l->ws;
  spec->argv = (const char *const *)l->argv_case;
  spec->stdin_data = c->cs->fn_name ? (const void *)k->fn_call : k->has_stdin ? k->stdin_data : NULL;
  spec->stdin_len = c->cs->fn_name ? k->fn_call_len : k->stdin_len;
  spec->limits = l->limits;
}

static void lane_done(void *arg, sb_result *r);

/* A lent lane's sandbox, on its own slot: the job's spec, the case's over it. */
static void start_lent(sbd_cases_run *c, lane *l) {
  sbd_job *job = c->job;
  sb_spec spec;
  sb_spec_init(&spec);
  c->calls.job_spec(job, &spec);
  case_spec(c, l, &spec);
  spec.netns_slot = l->slot;
  spec.warm = spec.warm && !l->warm_refused[0];
  spec.warm_refused = l->warm_refused[0] ? l->warm_refused : NULL;
  if (!spec.warm) spec.warm_lang = NULL;
  char err[SB_ERR_MAX] = "";
  int rc = sbd_step_start(job->srv, &spec, (sbd_step_done){lane_done, l}, &l->run, err);
  sbd_spawner_check(job->srv);
  if (rc < 0) {
    sb_result r;
    sbd_step_start_failed(job->srv, &spec, err, &r);
    l->run = NULL;
    lane_result(c, l, &r);
  }
}

/* A lent lane's run ended (step.c's done). */
static void lane_done(void *arg, sb_result *r) {
  lane *l = arg;
  l->run = NULL;
  sbd_cases_run *c = l->c;
  if (!c) { /* its run went meanwhile: only the slot back */
    sb_result_free(r);
    sbd_server *srv = l->srv;
    int slot = l->slot;
    lane_clear(l);
    free(l);
    sbd_sched_give_back(srv, slot);
    return;
  }
  if (r->warm_lost && !c->job->cancelled && !l->warm_refused[0]) {
    snprintf(l->warm_refused, sizeof l->warm_refused, "the slot's zygote ended before it started the program");
    sbd_log(c->job->srv, "warn", "job %s: %s; run again cold", c->job->req->id_key, r->error);
    sb_result_free(r);
    start_lent(c, l);
    return;
  }
  lane_result(c, l, r);
}

static void start_case(sbd_cases_run *c, lane *l) {
  sbd_job *job = c->job;
  l->idx = (long)c->next++;
  char err[SB_ERR_MAX] = "";
  if (prepare(c, l, err) < 0) {
    sbd_log(job->srv, "error", "job %s case %ld: %s", job->req->id_key, l->idx, err);
    json_object *d = json_object_new_object();
    if (d) json_object_object_add(d, "error", json_object_new_string(err));
    record_end(c, l, d, V_INTERNAL_ERROR, NULL);
    return;
  }
  if (l->lent) start_lent(c, l);
  else c->calls.start_sandbox(job);
}

/* The scheduler lends a slot (sched.c's take): the next case on it. */
static bool take_slot(void *arg, int slot) {
  sbd_cases_run *c = arg;
  check_budget(c);
  if (!can_start(c) || c->chk || c->solo) {
    update_borrow(c);
    return false;
  }
  /* A warm step takes a slot whose zygote for its interpreter and
   * environment is up: a lent case never waits for an interpreter's
   * start-up on its own wall clock. A slot without one starts one (its
   * start-up runs in the zygote) and stays free meanwhile, for a queued job
   * too; the scheduler asks again shortly. One that cannot be warm runs its
   * case cold, as the job's own slot does. */
  sb_spec spec;
  sb_spec_init(&spec);
  c->calls.job_spec(c->job, &spec);
  spec.netns_slot = slot;
  char why[SB_ERR_MAX];
  if (spec.warm && spec.warm_lang && sb_runtime_warm_slot_start(c->job->srv->rt, &spec, why) == 0) {
    sbd_sched_pump_soon(c->job->srv, WARM_WAIT_MS);
    return false;
  }
  lane *l = calloc(1, sizeof *l);
  if (!l) return false;
  l->c = c;
  l->srv = c->job->srv;
  l->slot = slot;
  l->lent = true;
  l->idx = -1;
  l->next = c->lent;
  c->lent = l;
  start_case(c, l);
  return true;
}

void sbd_cases_spec(const sbd_job *job, sb_spec *spec) {
  const sbd_cases_run *c = job->cases;
  if (c->chk && (c->checking || sbd_checker_building(c->chk))) {
    sbd_checker_spec(c->chk, spec);
    return;
  }
  case_spec(c, &c->main, spec);
}

bool sbd_cases_cancel(sbd_job *job) {
  sbd_cases_run *c = job->cases;
  if (!c) return false;
  /* the sequential answer: the lowest case not ended is the one killed, the
   * ones after it skipped */
  size_t low = c->next;
  if (c->main.idx >= 0) low = (size_t)c->main.idx;
  for (lane *l = c->lent; l; l = l->next)
    if (l->idx >= 0 && (size_t)l->idx < low) low = (size_t)l->idx;
  size_t cut = low < c->next ? low : c->next - 1; /* nothing running: every case started ended */
  if (c->next == 0) cut = 0;
  if (cut < c->cut) c->cut = cut;
  c->stopping = true;
  sbd_sched_unborrow(job->srv, &c->borrower);
  for (lane *l = c->lent; l; l = l->next)
    if (l->run) sbd_step_kill(l->run, "cancel");
  return c->lent != NULL;
}

void sbd_cases_unstarted(sbd_job *job) {
  sbd_cases_run *c = job->cases;
  lane_clear(&c->main);
  if (lanes_idle(c)) finish(job);
}

void sbd_cases_start(sbd_job *job, const sbd_jstep *js, sbd_cases_calls calls) {
  sbd_cases_run *c = calloc(1, sizeof *c);
  size_t n = js->cases->n;
  json_object **by_index = calloc(n ? n : 1, sizeof *by_index);
  signed char *verdict = malloc(n ? n : 1);
  if (!c || !by_index || !verdict) {
    free(c);
    free(by_index);
    free(verdict);
    json_object *d = json_object_new_object();
    if (d) {
      json_object_object_add(d, "status", json_object_new_string(SBP_STATUS_INTERNAL_ERROR));
      json_object_object_add(d, "error", json_object_new_string("out of memory"));
    }
    calls.finished(job, d, false, 0, 0);
    return;
  }
  memset(verdict, -1, n ? n : 1);
  c->calls = calls;
  c->cs = js->cases;
  c->argv = js->argv;
  c->base = js->limits;
  c->job = job;
  c->by_index = by_index;
  c->verdict = verdict;
  c->cut = n ? n - 1 : 0;
  c->main.c = c;
  c->main.srv = job->srv;
  c->main.slot = job->slot;
  c->main.idx = -1;
  c->borrower = (sbd_borrower){.take = take_slot, .arg = c};
  c->t0 = sbu_now_ns();
  c->shown_left = SHOWN_MAX_BYTES;
  job->cases = c;
  size_t argc = 0;
  while (c->argv[argc]) argc++;
  if (c->cs->fn_name && (argc != 2 || !sbu_is_python_name(c->argv[0]))) {
    snprintf(c->error, sizeof c->error,
             "fn_name needs a Python step run as INTERPRETER FILE (python3 sol.py; the python3 toolchain without "
             "args): this one runs %s with %zu arguments", c->argv[0], argc - 1);
    for (; c->next < n; c->next++) record(c, (long)c->next, NULL, V_JUDGE_ERROR, NULL);
    finish(job);
    return;
  }
  c->solo = js->traced; /* its sandbox the job's own (the tracer's mounts and filter) */
  app_walk w = {.c = c};
  char err[SB_ERR_MAX] = "";
  if (sb_workspace_walk(job->ws, app_one, &w, err) < 0) {
    snprintf(c->error, sizeof c->error, "the built /app cannot be given to the cases: %s", w.err[0] ? w.err : err);
    sbd_log(job->srv, "error", "job %s: %s", job->req->id_key, c->error);
    for (; c->next < n; c->next++) record(c, (long)c->next, NULL, V_INTERNAL_ERROR, NULL);
    finish(job);
    return;
  }
  bool uses_checker = false;
  for (size_t i = 0; i < n; i++) uses_checker |= c->cs->v[i].compare == SBP_CMP_CHECKER;
  if (uses_checker) { /* built once, before the first case */
    int rc = sbd_checker_new(job, &c->cs->checker, &c->chk, err);
    if (rc == 0) rc = sbd_checker_build_begin(c->chk, job, err);
    checker_built(job, rc, err);
    return;
  }
  main_next(c);
}

void sbd_cases_free(sbd_job *job) {
  sbd_cases_run *c = job->cases;
  if (!c) return;
  job->cases = NULL;
  sbd_checker_abandon(c->chk, job);
  sbd_checker_free(c->chk, job->slot);
  c->chk = NULL;
  free_run(c);
}
