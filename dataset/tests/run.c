/* surgebox verify --benchmark tests: every solution runs against its
 * problem's tests as one native job (toolchain form, the run step carrying
 * the cases: the build runs once), through the driver's pump; then pass@k
 * and the result file.
 *
 * The unit is the program (the problem's cases and toolchain, and the
 * code), keyed by SHA-256: identical solutions of one problem run once.
 * Resume: each program's record goes to OUT.progress as it arrives; a run
 * that was interrupted or met failures of surgebox runs only what is left.
 * --shard I/N runs this shard's programs (keyed by their hash, balanced by
 * count) and writes OUT.progress and OUT.shard.json; surgebox merge joins
 * the records and scores them here, with nothing left to run. */
#include "tests_bench.h"
#include "cliopt.h"
#include "verify.h"
#include "driver.h"
#include "progress.h"
#include "passk.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  char hash[65];
  size_t sol;          /* a solution that is this program */
  json_object *record; /* its outcome (owned), NULL: not known yet */
  bool other;          /* another shard's */
} program;

typedef struct {
  program *progs;
  size_t n;
  sbr_driver *d;
  const sbtb_opts *o;
  const sbtb_problems *ps;
  const sbtb_solutions *ss;
  const char *progress_path;
  size_t ran;
  time_t last_save;
} run_state;

static program *find_prog(run_state *rs, const char *hash) {
  return sbr_progress_find(rs->progs, rs->n, sizeof *rs->progs, hash);
}

static void save_progress(void *ctx) {
  run_state *rs = ctx;
  if (!rs->progress_path) return;
  json_object *v = json_object_new_object();
  for (size_t i = 0; i < rs->n; i++)
    if (rs->progs[i].record && !rs->progs[i].other) json_object_object_add(v, rs->progs[i].hash, json_object_get(rs->progs[i].record));
  sbr_progress_save(rs->progress_path, "tests", "records", v, &rs->last_save);
}

/* an earlier run's record of a program (sbr_progress_resume) */
static bool take_record(void *ctx, const char *hash, json_object *rec) {
  program *p = find_prog(ctx, hash);
  if (!p || p->record) return false;
  p->record = json_object_get(rec);
  return true;
}

/* at most max bytes of s, cut at a UTF-8 boundary: its head, or its tail
 * (where a traceback says what was raised) */
static json_object *bounded(const char *s, size_t max, bool tail) {
  size_t len = strlen(s);
  if (len <= max) return json_object_new_string_len(s, (int)len);
  if (tail) {
    const char *t = s + len - max;
    while (*t && ((unsigned char)*t & 0xC0) == 0x80) t++;
    return json_object_new_string(t);
  }
  len = max;
  while (len && ((unsigned char)s[len] & 0xC0) == 0x80) len--;
  return json_object_new_string_len(s, (int)len);
}

static json_object *get(json_object *o, const char *k) { return json_object_object_get(o, k); }
/* an array's length; 0 for anything else (a field the answer lacks) */
static size_t len_of(json_object *a) { return json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0; }

/* the counts without the zeros */
static json_object *nonzero(json_object *counts) {
  json_object *c = json_object_new_object();
  json_object_object_foreach(counts, k, v) if (json_object_get_int(v) > 0) json_object_object_add(c, k, json_object_get(v));
  return c;
}

/* The record of an answer that has case results: {passed, n_cases, counts,
 * first_failure: null | {case, verdict, why}}; NULL when it has none. */
static json_object *record_of(json_object *resp) {
  json_object *steps = get(resp, "steps"), *step = NULL, *notrun = get(resp, "cases_not_run");
  for (size_t i = 0; i < len_of(steps); i++)
    if (json_object_object_get_ex(json_object_array_get_idx(steps, i), "n_cases", NULL))
      step = json_object_array_get_idx(steps, i);
  if (!step && len_of(notrun)) step = json_object_array_get_idx(notrun, 0);
  json_object *counts = step ? get(step, "case_counts") : NULL;
  if (!step || !json_object_is_type(counts, json_type_object)) return NULL;
  int n = json_object_get_int(get(step, "n_cases"));
  json_object *rec = json_object_new_object(), *ff = get(step, "first_failure");
  json_object_object_add(rec, "passed", json_object_new_boolean(json_object_get_int(get(counts, "accepted")) == n && n > 0));
  json_object_object_add(rec, "n_cases", json_object_new_int(n));
  json_object_object_add(rec, "counts", nonzero(counts));
  json_object *first = NULL;
  if (json_object_is_type(ff, json_type_int)) {
    int idx = json_object_get_int(ff);
    first = json_object_new_object();
    json_object_object_add(first, "case", json_object_new_int(idx));
    json_object *c = NULL, *cases = get(step, "cases");
    for (size_t i = 0; i < len_of(cases); i++)
      if (json_object_get_int(get(json_object_array_get_idx(cases, i), "index")) == idx) c = json_object_array_get_idx(cases, i);
    const char *verdict = c ? json_object_get_string(get(c, "verdict")) : json_object_get_string(get(step, "verdict"));
    json_object_object_add(first, "verdict", json_object_new_string(verdict ? verdict : "?"));
    const char *why = NULL;
    bool tail = false;
    if (c) { /* the judge's difference, else what the program said last, else the sandbox's word */
      const char *keys[] = {"why", "stderr", "error"};
      for (size_t k = 0; k < 3 && !why; k++) {
        json_object *w = get(c, keys[k]);
        if (json_object_is_type(w, json_type_string) && json_object_get_string_len(w))
          why = json_object_get_string(w), tail = k == 1;
      }
    } else { /* the build failed: what the compiler said */
      for (size_t i = 0; i < len_of(steps) && !why; i++) {
        json_object *s = json_object_array_get_idx(steps, i), *e = get(s, "stderr");
        if (strcmp(json_object_get_string(get(s, "status")), "ok") && json_object_get_string_len(e)) why = json_object_get_string(e);
      }
    }
    if (why) json_object_object_add(first, "why", bounded(why, 300, tail));
  }
  json_object_object_add(rec, "first_failure", first);
  return rec;
}

static json_object *make_request(size_t i, void *ctx) {
  run_state *rs = ctx;
  program *p = &rs->progs[i];
  if (p->record || p->other) return NULL;
  const sbtb_solution *s = &rs->ss->v[p->sol];
  json_object *req = sbtb_request(&rs->ps->v[s->problem], s->code, s->code_len, rs->o->stop, rs->o->time_limit,
                                  rs->o->warm);
  sbr_driver_profile(rs->d, req);
  return req;
}

static bool on_response(size_t i, const sbc_result *r, json_object *resp, void *ctx) {
  run_state *rs = ctx;
  if (sbr_failure_of(r, NULL, 0)) return true; /* counted by the pump: nothing recorded */
  json_object *rec = record_of(resp);
  if (!rec) { /* an answer without case results (unsupported, ...): not the program's outcome */
    char why[512];
    const char *w = sbc_result_why(r);
    snprintf(why, sizeof why, "%s: no case results for the solution on line %zu%s%s", r->status ? r->status : "?",
             rs->ss->v[rs->progs[i].sol].line, w ? ": " : "", w ? w : "");
    sbr_failures_add(&rs->d->failures, why);
    return true;
  }
  rs->progs[i].record = rec;
  rs->ran++;
  if (time(NULL) != rs->last_save) save_progress(rs);
  return false;
}

enum { O_STOP = 256 };
#define AT(F) SBO_AT(sbtb_opts, F)
static const sbo_opt verify_opts[] = {
    SBR_VERIFY_BENCHMARK_OPT("tests"),
    {"problems", 0, "P.jsonl", "the problems: {id, language, tests | input_output | test_cases | public_test_cases | test | test_list} a line (required)", SBO_STR, AT(problems)},
    {"solutions", 0, "S.jsonl", "the solutions: {id, code} a line, many per problem (required)", SBO_STR, AT(solutions)},
    {"out", 0, "RESULT.json", "every solution's result and the summary; an interrupted run resumes from RESULT.json.progress", SBO_STR, AT(out)},
    {"k", 0, "1,10", "pass@k for these k (default 1,10, each where every problem has at least k solutions)", SBO_STR, AT(k)},
    {"stop", O_STOP, "never|first_failure", "run every case of a solution (default), or stop at its first failing one", SBO_STR, AT(stop)},
    {"language", 0, "LANG", "the language of problems that do not say (APPS, TACO: python)", SBO_STR, AT(language)},
    {"time-limit", 0, "S", "each case's time limit in seconds (default: the daemon's)", SBO_DOUBLE, AT(time_limit)},
    SBR_CACHE_DIR_OPT(sbtb_opts),
    {"warm", 0, NULL, "start Python solutions' cases from the slots' warm interpreters (else cold, saying why)", SBO_FLAG, AT(warm)},
    {NULL, 0, NULL, NULL}};
#undef AT
static const sbo_cmd verify_cmd = {"surgebox verify", "--benchmark tests --problems P.jsonl --solutions S.jsonl [options]",
                                   "Run every solution against its problem's tests (one job each, the build once) and "
                                   "report pass@k.",
                                   verify_opts, NULL,
                                   "exit: 0 scored, 1 bad arguments or a bad line, 2 a file cannot be read or a failure "
                                   "of surgebox (counted and said; those solutions are not scored), 130 interrupted\n",
                                   false, sbr_run_groups};

static int parse(int argc, char **argv, sbc_ctx *ctx, sbtb_opts *o) {
  memset(o, 0, sizeof *o);
  o->stop = "never";
  sbr_run_opts run = {0};
  sbo_parser p;
  int rc = sbr_parse(&p, &verify_cmd, argc, argv, ctx, &run, NULL, o);
  if (rc == 0) rc = sbo_no_args(&p);
  static const char *const stops[] = {"never", "first_failure", NULL};
  if (rc == 0) rc = sbo_check_choice(&p, O_STOP, o->stop, stops);
  if (rc == 0 && (!o->problems || !o->solutions))
    rc = sbo_usage_error(&p, "%s is required", !o->problems ? "--problems P.jsonl" : "--solutions S.jsonl");
  sbo_done(&p);
  o->jobs = run.jobs;
  o->dump = run.dump;
  if (rc == 0) rc = sbr_run_shard("verify", &run, o->out != NULL, "--out (the shard's results go to OUT.progress)", &o->shard);
  return rc;
}

/* --k "1,2" (or the default 1,10 where every problem allows) into ks; 0, or
 * 1 with a message: a k above a problem's number of solutions */
static int k_list(const sbtb_opts *o, const size_t *n_sol, const sbtb_problems *ps, size_t *ks, size_t *nk) {
  size_t min_n = (size_t)-1, at = 0;
  for (size_t i = 0; i < ps->n; i++)
    if (n_sol[i] && n_sol[i] < min_n) min_n = n_sol[i], at = i;
  *nk = 0;
  if (!o->k) {
    const size_t defaults[] = {1, 10};
    for (size_t i = 0; i < 2; i++)
      if (defaults[i] <= min_n) ks[(*nk)++] = defaults[i];
      else fprintf(stderr, "verify: pass@%zu not reported: problem \"%s\" has %zu solution(s)\n", defaults[i], ps->v[at].id, min_n);
    return 0;
  }
  const char *s = o->k;
  while (*s) {
    char *end;
    errno = 0;
    unsigned long k = strtoul(s, &end, 10);
    if (end == s || errno || k < 1 || k > 1000000 || (*end && *end != ',') || *nk == 16) {
      fprintf(stderr, "verify: --k %s: a list of at most 16 whole numbers >= 1 (1,10,100)\n", o->k);
      return 1;
    }
    if (k > min_n) {
      fprintf(stderr, "verify: --k %lu: problem \"%s\" (line %zu) has only %zu solution(s); pass@k needs at least k\n", k,
              ps->v[at].id, ps->v[at].line, min_n);
      return 1;
    }
    ks[(*nk)++] = k;
    s = *end ? end + 1 : end;
  }
  return 0;
}

/* The result file and the summary on stdout. Problems whose solutions all
 * have a result are scored; the others are counted (a failure of surgebox
 * left some without one). 0, or 2 when it cannot be written. */
static int score(const sbtb_opts *o, run_state *rs, const size_t *ks, size_t nk, bool *complete) {
  const sbtb_problems *ps = rs->ps;
  const sbtb_solutions *ss = rs->ss;
  size_t *n = calloc(ps->n, sizeof *n), *c = calloc(ps->n, sizeof *c), *unknown = calloc(ps->n, sizeof *unknown);
  json_object *results = json_object_new_array();
  for (size_t i = 0; i < ss->n; i++) {
    const sbtb_solution *s = &ss->v[i];
    program *p = find_prog(rs, s->hash);
    json_object *r = json_object_new_object();
    json_object_object_add(r, "id", json_object_new_string(ps->v[s->problem].id));
    json_object_object_add(r, "line", json_object_new_int64((int64_t)s->line));
    n[s->problem]++;
    if (p->record) {
      json_object_object_foreach(p->record, k, v) json_object_object_add(r, k, json_object_get(v));
      c[s->problem] += json_object_get_boolean(get(p->record, "passed"));
    } else {
      unknown[s->problem]++;
      json_object_object_add(r, "passed", NULL);
      json_object_object_add(r, "not_scored", json_object_new_string("a failure of surgebox: no result"));
    }
    json_object_array_add(results, r);
  }
  double sum[16] = {0};
  size_t scored = 0, no_solutions = 0, not_scored = 0;
  json_object *excluded = json_object_new_array();
  for (size_t i = 0; i < ps->n; i++) {
    if (!n[i]) no_solutions++;
    else if (unknown[i]) not_scored++, json_object_array_add(excluded, json_object_new_string(ps->v[i].id));
    else {
      scored++;
      for (size_t j = 0; j < nk; j++) sum[j] += sbr_pass_at_k(n[i], c[i], ks[j]);
    }
  }
  *complete = !not_scored;
  json_object *out = json_object_new_object(), *pak = json_object_new_object(), *karr = json_object_new_array();
  json_object_object_add(out, "benchmark", json_object_new_string("tests"));
  json_object_object_add(out, "problems", json_object_new_int64((int64_t)ps->n));
  json_object_object_add(out, "solutions", json_object_new_int64((int64_t)ss->n));
  json_object_object_add(out, "programs", json_object_new_int64((int64_t)rs->n));
  json_object_object_add(out, "scored_problems", json_object_new_int64((int64_t)scored));
  json_object_object_add(out, "problems_without_solutions", json_object_new_int64((int64_t)no_solutions));
  json_object_object_add(out, "not_scored_problems", excluded);
  printf("tests: %zu problems, %zu solutions (%zu distinct programs); %zu problems scored", ps->n, ss->n, rs->n, scored);
  if (no_solutions) printf(", %zu without solutions", no_solutions);
  if (not_scored) printf(", %zu not scored (a failure of surgebox left solutions without a result)", not_scored);
  printf("\n");
  for (size_t j = 0; j < nk; j++) {
    char key[24];
    snprintf(key, sizeof key, "%zu", ks[j]);
    double v = scored ? sum[j] / (double)scored : NAN;
    json_object_array_add(karr, json_object_new_int64((int64_t)ks[j]));
    json_object_object_add(pak, key, scored ? json_object_new_double(v) : NULL);
    if (scored) printf("%spass@%zu: %.2f", j ? " " : "", ks[j], 100.0 * v);
    else printf("%spass@%zu: -", j ? " " : "", ks[j]);
  }
  if (nk) printf("\n");
  json_object_object_add(out, "k", karr);
  json_object_object_add(out, "pass_at_k", pak);
  /* per language, sorted by name */
  json_object *by = json_object_new_object();
  bool *done = calloc(ps->n, sizeof *done);
  for (;;) {
    const char *next = NULL;
    for (size_t i = 0; i < ps->n; i++)
      if (!done[i] && (!next || strcmp(ps->v[i].language, next) < 0)) next = ps->v[i].language;
    if (!next) break;
    size_t np = 0, ns = 0, npass = 0, nun = 0;
    for (size_t i = 0; i < ps->n; i++)
      if (!done[i] && !strcmp(ps->v[i].language, next)) done[i] = true, np++, ns += n[i], npass += c[i], nun += unknown[i];
    json_object *l = json_object_new_object();
    json_object_object_add(l, "problems", json_object_new_int64((int64_t)np));
    json_object_object_add(l, "solutions", json_object_new_int64((int64_t)ns));
    json_object_object_add(l, "passed", json_object_new_int64((int64_t)npass));
    json_object_object_add(l, "not_scored", json_object_new_int64((int64_t)nun));
    json_object_object_add(by, next, l);
    printf("  %s: %zu problems, %zu solutions, %zu passed%s", next, np, ns, npass, nun ? "" : "\n");
    if (nun) printf(", %zu without a result (a failure of surgebox)\n", nun);
  }
  free(done);
  json_object_object_add(out, "by_language", by);
  json_object_object_add(out, "results", results);
  int rc = 0;
  if (o->out && sbr_write_json_atomic_ext(o->out, out, JSON_C_TO_STRING_SPACED) < 0) {
    fprintf(stderr, "verify: cannot write %s\n", o->out);
    rc = 2;
  }
  json_object_put(out);
  free(n), free(c), free(unknown);
  return rc;
}

static int shard_begin(const sbtb_opts *o, run_state *rs) {
  const char **hashes = malloc((rs->n + 1) * sizeof *hashes);
  bool *mine = calloc(rs->n + 1, sizeof *mine);
  for (size_t i = 0; i < rs->n; i++) hashes[i] = rs->progs[i].hash;
  int rc = sbtb_shard_plan(&o->shard, o, hashes, rs->n, mine);
  for (size_t i = 0; i < rs->n; i++) rs->progs[i].other = !mine[i];
  free(hashes);
  free(mine);
  return rc;
}

/* the distinct programs, sorted by hash */
static void build_programs(run_state *rs) {
  rs->progs = calloc(rs->ss->n + 1, sizeof *rs->progs);
  for (size_t i = 0; i < rs->ss->n; i++) {
    snprintf(rs->progs[i].hash, sizeof rs->progs[i].hash, "%s", rs->ss->v[i].hash);
    rs->progs[i].sol = i;
  }
  qsort(rs->progs, rs->ss->n, sizeof *rs->progs, sbr_progress_by_hash);
  size_t w = 0;
  for (size_t r = 0; r < rs->ss->n; r++)
    if (!w || strcmp(rs->progs[w - 1].hash, rs->progs[r].hash)) rs->progs[w++] = rs->progs[r];
  rs->n = w;
}

/* The programs without a result through the driver: 0, 2 or 130. */
static int run_programs(sbr_driver *d, const sbtb_opts *o, run_state *rs) {
  size_t pending = 0;
  for (size_t i = 0; i < rs->n; i++) pending += !rs->progs[i].record && !rs->progs[i].other;
  sbr_pump pump = {.total = rs->n, .make = make_request, .done = on_response, .checkpoint = save_progress, .ctx = rs};
  if (o->dump) return sbr_driver_dump(d, &pump, o->dump);
  int rc = 0;
  if (!pending) fprintf(stderr, "verify: every program's result is known, nothing to run\n");
  if (pending || d->ctx.profile) rc = sbr_driver_connect(d);
  if (pending && !rc) rc = sbr_driver_pump(d, &pump);
  if (rc && rc != 130) return rc;
  size_t left = 0;
  for (size_t i = 0; i < rs->n; i++) left += !rs->progs[i].record && !rs->progs[i].other;
  fprintf(stderr, "verify: %zu programs ran\n", rs->ran);
  if (rc == 130) fprintf(stderr, "verify: interrupted with %zu programs left%s\n", left, o->out ? ": run again to resume" : "");
  else if (left)
    fprintf(stderr, "verify: %zu programs got no result (a failure of surgebox, said below); their problems are not scored%s\n",
            left, o->out ? ": run again to retry them" : "");
  return rc;
}

SBR_COMMAND(sbtb_verify_cmdline, sbtb_opts, parse, sbtb_verify_run)

int sbtb_verify_run(const sbc_ctx *ctx, const sbtb_opts *o) {
  sbr_driver d;
  sbr_driver_init(&d, "verify", ctx, o->jobs);
  d.cache_dir = o->cache_dir;
  sbtb_problems ps = {0};
  sbtb_solutions ss = {0};
  run_state rs = {.d = &d, .o = o, .ps = &ps, .ss = &ss};
  char err[1200], progress[4200];
  bool unreadable;
  size_t ks[16], nk = 0, *n_sol = NULL;
  int rc = 0;
  if (sbtb_problems_load(o->problems, o->language, &ps, &unreadable, err, sizeof err) < 0 ||
      sbtb_solutions_load(o->solutions, &ps, &ss, &unreadable, err, sizeof err) < 0) {
    fprintf(stderr, "verify: %s; nothing ran\n", err);
    rc = unreadable ? 2 : 1;
    goto out;
  }
  n_sol = calloc(ps.n, sizeof *n_sol);
  for (size_t i = 0; i < ss.n; i++) n_sol[ss.v[i].problem]++;
  if ((rc = k_list(o, n_sol, &ps, ks, &nk))) goto out;
  build_programs(&rs);
  if (o->out) {
    snprintf(progress, sizeof progress, "%s.progress", o->out);
    rs.progress_path = progress;
    sbr_progress_resume(progress, "records", json_type_object, "programs' results", take_record, &rs);
  }
  if (o->shard.count && shard_begin(o, &rs) < 0) {
    rc = 2;
    goto out;
  }
  fprintf(stderr, "verify: tests: %zu problems, %zu solutions, %zu distinct programs to run\n", ps.n, ss.n, rs.n);
  rc = run_programs(&d, o, &rs);
  if (rc == 130) save_progress(&rs); /* what arrived since the last save */
  if (rc == 130 || o->dump) goto out;
  if (o->shard.count) {
    save_progress(&rs);
    fprintf(stderr, "verify: shard %u/%u: its results are in %s; surgebox merge scores the shards\n", o->shard.index,
            o->shard.count, progress);
  } else if (!rc || d.failures.count) {
    bool complete;
    int src = score(o, &rs, ks, nk, &complete);
    if (rs.progress_path) {
      if (complete && !src) unlink(progress);
      else save_progress(&rs);
    }
    if (!rc) rc = src;
  }
out:
  for (size_t i = 0; i < rs.n; i++) json_object_put(rs.progs[i].record);
  free(rs.progs);
  free(n_sol);
  sbtb_solutions_free(&ss);
  sbtb_problems_free(&ps);
  return sbr_driver_finish(&d, rc);
}
