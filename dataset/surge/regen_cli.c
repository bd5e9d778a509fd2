/* surgebox regen: run SURGE items through the daemon, write the regenerated
 * dataset and the fidelity report.
 *
 *   surgebox regen --data DIR [--subset dr,bg,tc | all] [--out DIR] [--summary FILE]
 *                  [--jobs N] [--repeat K] [--check-determinism] [--only I,J,...]
 *                  [--socket PATH] [--no-autostart] [--no-inproc-time] [--no-gcc9-mimic]
 *                  [--shard I/N|auto [--shards N]]
 *
 * --out DIR receives <subset>.json in SURGE's own shape: "gt" is the
 * regenerated reference, "gt_published" the shipped one, and "exec" what
 * happened. It is rewritten as items finish, so an interrupted run resumes:
 * items whose "exec" is complete are not run again. With --shard only this
 * shard's items run (shard.h) and --out also gets shard.json, what
 * `surgebox merge` checks. */
#include "adapt_internal.h"
#include "atomic_write.h"
#include "client.h"
#include "cliopt.h"
#include "fidelity.h"
#include "pump.h"
#include "regen_shard.h"
#include "protocol.h"
#include "sandbox.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  sbr_subset subset;
  size_t index;
  json_object *item;  /* the published item */
  sbr_job job;
  int sent, got, wanted;
  char **refs;        /* per repeat */
  double *cpu, *wall, *inproc;
  int64_t rss;
  char status[32];
  bool compile_failed;
  json_object *toolchain; /* identity from the response */
  json_object *profile;   /* {"name","manifest_hash"} from the response */
  char error[256];
} task;

static volatile sig_atomic_t interrupted;
static void on_sigint(int s) {
  (void)s;
  interrupted = 1;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  if (n <= 0) return -1;
  double *c = malloc((size_t)n * sizeof *c);
  memcpy(c, v, (size_t)n * sizeof *c);
  qsort(c, (size_t)n, sizeof *c, cmp_double);
  double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
  free(c);
  return m;
}

/* A number printed with 6 decimals (more would be noise). */
static json_object *num(double v) {
  char s[32];
  snprintf(s, sizeof s, "%.6f", v);
  return json_object_new_double_s(strtod(s, NULL), s);
}

/* The item as written to --out: the published item, gt replaced. */
static void record(task *t, json_object *out_item) {
  const char *published = sbr_item_str(t->item, "gt");
  json_object *exec = json_object_new_object();
  bool missing = t->job.missing[0] != '\0';
  bool ran = !missing && t->got > 0 && t->refs[0];
  bool deterministic = true;
  for (int r = 1; ran && r < t->got; r++)
    if (!t->refs[r] || strcmp(t->refs[r], t->refs[0]) != 0) deterministic = false;
  sbr_compare_result c = {0};
  if (ran) sbr_compare(published, t->refs[0], t->job.whitespace_free, t->compile_failed, &c);
  const char *cls = sbr_classify(t->status, missing || !ran, deterministic, &c);
  if (!ran && !missing) cls = t->status[0] && !strcmp(t->status, "timeout") ? "timeout" : "other";
  json_object_object_add(exec, "status", json_object_new_string(missing ? "missing_toolchain" : t->status[0] ? t->status : "not_run"));
  json_object_object_add(exec, "regenerated", json_object_new_boolean(ran));
  json_object_object_add(exec, "group", json_object_new_string(t->job.group));
  if (t->toolchain) {
    json_object_object_add(exec, "toolchain", json_object_get(t->toolchain));
  } else {
    json_object *tc = json_object_new_object();
    json_object_object_add(tc, "name", json_object_new_string(missing ? t->job.missing : t->job.toolchain));
    json_object_object_add(tc, "version", NULL);
    json_object_object_add(exec, "toolchain", tc);
  }
  if (t->profile) json_object_object_add(exec, "profile", json_object_get(t->profile));
  if (missing) json_object_object_add(exec, "missing", json_object_new_string(t->job.missing));
  if (ran) {
    json_object_object_add(exec, "cpu_time_s", num(median(t->cpu, t->got)));
    json_object_object_add(exec, "wall_time_s", num(median(t->wall, t->got)));
    json_object_object_add(exec, "max_rss_kb", json_object_new_int64(t->rss));
    if (t->job.inproc_marker && median(t->inproc, t->got) >= 0) {
      double in = median(t->inproc, t->got);
      json_object_object_add(exec, "inproc_cpu_s", num(in));
      char fmt[48];
      snprintf(fmt, sizeof fmt, "%.4f seconds", in); /* SURGE's own format */
      json_object_object_add(exec, "time", json_object_new_string(fmt));
      json_object *runs = json_object_new_array(); /* every repeat: the spread `surgebox bins` flags edges with */
      for (int r = 0; r < t->got; r++)
        if (t->inproc[r] >= 0) json_object_array_add(runs, num(t->inproc[r]));
      json_object_object_add(exec, "inproc_cpu_s_runs", runs);
    }
    json_object_object_add(exec, "matched", json_object_new_string(c.exact ? "exact" : c.normalized ? "normalized" : "no"));
    json_object_object_add(exec, "jaccard", num(c.jaccard));
    json_object_object_add(exec, "repeats", json_object_new_int(t->got));
    json_object_object_add(exec, "deterministic", json_object_new_boolean(deterministic));
  }
  json_object_object_add(exec, "class", cls ? json_object_new_string(cls) : NULL);
  if (t->error[0]) json_object_object_add(exec, "error", json_object_new_string(t->error));
  sbr_exec_substitution(exec, &t->job);
  json_object_object_add(exec, "complete", json_object_new_boolean(true));
  json_object_object_add(out_item, "gt", ran ? json_object_new_string(t->refs[0]) : json_object_new_string(published ? published : ""));
  json_object_object_add(out_item, "gt_published", published ? json_object_new_string(published) : NULL);
  json_object_object_add(out_item, "exec", exec);
}

int sbr_write_json_atomic(const char *path, json_object *o) {
  return sbu_write_json_atomic(path, o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* ---- the run, as callbacks of sbr_pump ---- */
typedef struct {
  task *tasks;
  size_t total;
  const sbr_env *env;
  const sbr_subset *subsets;
  size_t n_subsets;
  json_object **outs;
  const char *out_dir;
  const char *profile;
} regen_state;

static json_object *out_item(const regen_state *rs, const task *t) {
  size_t s = 0;
  while (rs->subsets[s] != t->subset) s++;
  return json_object_array_get_idx(rs->outs[s], t->index);
}

/* request i: task i % total, repeat i / total */
static json_object *make_request(size_t i, void *ctx) {
  regen_state *rs = ctx;
  task *t = &rs->tasks[i % rs->total];
  if ((int)(i / rs->total) >= t->wanted) return NULL;
  json_object *req = json_tokener_parse(json_object_to_json_string_ext(t->job.request, JSON_C_TO_STRING_PLAIN));
  if (rs->profile && !t->job.profile[0]) json_object_object_add(req, "profile", json_object_new_string(rs->profile));
  return req;
}

static bool on_response(size_t i, json_object *resp, void *ctx) {
  regen_state *rs = ctx;
  task *t = &rs->tasks[i % rs->total];
  const char *code = sbp_response_error_code(resp);
  int r = t->got++;
  if (code) {
    snprintf(t->status, sizeof t->status, "error");
    json_object *e = json_object_object_get(resp, "error");
    snprintf(t->error, sizeof t->error, "%s: %s", code, json_object_get_string(json_object_object_get(e, "message")));
    t->got--;
    t->wanted = t->got; /* stop repeating */
  } else {
    json_object *st = json_object_object_get(resp, "status"), *steps;
    snprintf(t->status, sizeof t->status, "%s", st ? json_object_get_string(st) : "?");
    if (!strcmp(t->status, "toolchain_missing")) {
      snprintf(t->job.missing, sizeof t->job.missing, "%s", t->job.toolchain);
      t->got = t->wanted = 0;
    } else {
      t->refs[r] = sbr_reference(&t->job, resp, &t->inproc[r]);
      if (json_object_object_get_ex(resp, "steps", &steps))
        for (size_t si = 0; si < json_object_array_length(steps); si++) {
          json_object *sd = json_object_array_get_idx(steps, si);
          const char *name = json_object_get_string(json_object_object_get(sd, "name"));
          if (name && !strcmp(name, "compile") && strcmp(json_object_get_string(json_object_object_get(sd, "status")), "ok"))
            t->compile_failed = true;
          if (name && !strcmp(name, t->job.out_step)) {
            t->cpu[r] = json_object_get_double(json_object_object_get(sd, "cpu_time_s"));
            t->wall[r] = json_object_get_double(json_object_object_get(sd, "wall_time_s"));
            t->rss = json_object_get_int64(json_object_object_get(sd, "max_rss_kb"));
          }
        }
      json_object *tc = json_object_object_get(resp, "toolchain"), *pf = json_object_object_get(resp, "profile");
      if (tc && !t->toolchain) t->toolchain = json_object_get(tc);
      if (pf && !t->profile) t->profile = json_object_get(pf);
      if (!t->toolchain && t->job.toolchain[0]) { /* raw steps: the chosen one, as the daemon lists it */
        json_object *id = json_object_new_object();
        json_object_object_add(id, "name", json_object_new_string(t->job.toolchain));
        const char *ver = sbr_env_version(rs->env, t->job.toolchain);
        json_object_object_add(id, "version", ver ? json_object_new_string(ver) : NULL);
        t->toolchain = id;
      }
    }
  }
  if (t->got >= t->wanted) record(t, out_item(rs, t));
  /* failures of the machinery, not of the programs (BG's are meant to fail) */
  return code || !strcmp(t->status, "internal_error");
}

static void save_outputs(void *ctx) {
  regen_state *rs = ctx;
  for (size_t s = 0; s < rs->n_subsets; s++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", rs->out_dir, sbr_subset_name(rs->subsets[s]));
    if (sbr_write_json_atomic(path, rs->outs[s]) < 0) fprintf(stderr, "regen: cannot write %s\n", path);
  }
}

/* The toolchains of SBR_BEST_PROFILE, when the daemon has that profile and
 * the run is not already in it: languages that SURGE's own environment
 * reproduces better (Julia) run there. Absent: they run here, or are missing. */
static void best_profile(sbc_conn *c, sbr_env *env, const char *run_profile) {
  if (run_profile && !strcmp(run_profile, SBR_BEST_PROFILE)) return;
  json_object *req = json_tokener_parse("{\"id\":\"regen-best-profile\",\"type\":\"toolchains\"}");
  json_object_object_add(req, "profile", json_object_new_string(SBR_BEST_PROFILE));
  sbc_send(c, req);
  json_object_put(req);
  json_object *resp = sbc_recv(c);
  if (resp && !sbp_response_error_code(resp))
    sbr_env_set_best(env, SBR_BEST_PROFILE, json_object_object_get(resp, "toolchains"));
  else
    fprintf(stderr, "regen: profile %s not available (%s): Julia runs here when this environment has it\n",
            SBR_BEST_PROFILE,
            resp ? json_object_get_string(json_object_object_get(json_object_object_get(resp, "error"), "message"))
                 : "no answer");
  if (resp) json_object_put(resp);
}

enum { O_DATA = 256, O_SUBSET, O_OUT, O_SUMMARY, O_SOCKET, O_ONLY, O_PROFILE, O_DUMP, O_JOBS, O_REPEAT, O_DETERMINISM,
       O_NO_AUTOSTART, O_NO_INPROC, O_NO_MIMIC, O_RETRY, O_SHARD, O_SHARDS, O_PLAN, O_PLAN_JSON, O_STRICT };
static const sbo_opt regen_opts[] = {
    {"data", O_DATA, "DIR", "SURGE's <subset>.json files (required)"},
    {"subset", O_SUBSET, "LIST", "comma-separated subsets, or all (default dr,bg,tc)"},
    {"out", O_OUT, "DIR", "write <subset>.json there (an interrupted run resumes)"},
    {"summary", O_SUMMARY, "FILE", "the fidelity report as JSON"},
    {"jobs", O_JOBS, "N", "jobs in flight (default: the daemon's workers)"},
    {"repeat", O_REPEAT, "K", "run every item K times"},
    {"check-determinism", O_DETERMINISM, NULL, "run every item at least twice and compare"},
    {"only", O_ONLY, "I,J,...", "only these item indices"},
    {"retry-failed", O_RETRY, NULL, "rerun items a resumed run recorded as failed"},
    {"no-inproc-time", O_NO_INPROC, NULL, "do not use the in-process timers of timed items"},
    {"no-gcc9-mimic", O_NO_MIMIC, NULL, "do not mimic gcc 9's diagnostics"},
    {"profile", O_PROFILE, "NAME", "run jobs in this root file system"},
    {"strict", O_STRICT, NULL, "run nothing when a toolchain is not SURGE's (Python 3.8, GCC 9, JDK 11, ...)"},
    {"dump-requests", O_DUMP, "FILE", "write the exec requests as JSON Lines and run nothing"},
    {"socket", O_SOCKET, "PATH", "the daemon's socket"},
    {"no-autostart", O_NO_AUTOSTART, NULL, "fail instead of starting a private daemon"},
    {"shard", O_SHARD, "I/N|auto", "run only shard I of N (auto: SLURM_ARRAY_TASK_* or JOB_COMPLETION_INDEX); "
                                   "`surgebox merge` joins the --out dirs"},
    {"shards", O_SHARDS, "N", "N for --shard auto on Kubernetes (else $SURGEBOX_SHARDS)"},
    {"plan", O_PLAN, NULL, "print every shard's item count and expected cost, run nothing (no daemon)"},
    {"plan-json", O_PLAN_JSON, NULL, "like --plan, as JSON naming every shard's items (subset: indices)"},
    {NULL, 0, NULL, NULL}};
static const sbo_cmd regen_cmd = {"surgebox regen", "--data DIR [options]",
                                  "Regenerate SURGE's references by running every item; a fidelity report.",
                                  regen_opts, NULL, NULL, false, NULL};

typedef struct {
  const char *data, *out, *summary, *socket, *only, *profile, *dump, *shard, *shards;
  char subsets_arg[128];
  int jobs, repeat;
  bool autostart, inproc, mimic, retry_failed, plan, plan_json, strict;
} opts;

static int parse(int argc, char **argv, opts *o) {
  memset(o, 0, sizeof *o);
  snprintf(o->subsets_arg, sizeof o->subsets_arg, "dr,bg,tc");
  o->repeat = 1;
  o->autostart = o->inproc = o->mimic = true;
  sbo_parser p;
  sbo_init(&p, &regen_cmd, argc, argv);
  int k, rc = 0;
  const char *v;
  long n;
  while (rc == 0 && (k = sbo_next(&p, &v)) > 0) {
    switch (k) {
    case O_DATA: o->data = v; break;
    case O_SUBSET: snprintf(o->subsets_arg, sizeof o->subsets_arg, "%s", v); break;
    case O_OUT: o->out = v; break;
    case O_SUMMARY: o->summary = v; break;
    case O_SOCKET: o->socket = v; break;
    case O_ONLY: o->only = v; break;
    case O_PROFILE: o->profile = v; break;
    case O_DUMP: o->dump = v; break;
    case O_JOBS:
      if (sbo_parse_long(v, 0, 4096, &n) < 0) rc = sbo_bad_value(&p, k, v);
      o->jobs = (int)n;
      break;
    case O_REPEAT:
      if (sbo_parse_long(v, 1, 1000, &n) < 0) rc = sbo_bad_value(&p, k, v);
      o->repeat = (int)n;
      break;
    case O_DETERMINISM: o->repeat = o->repeat < 2 ? 2 : o->repeat; break;
    case O_NO_AUTOSTART: o->autostart = false; break;
    case O_NO_INPROC: o->inproc = false; break;
    case O_NO_MIMIC: o->mimic = false; break;
    case O_RETRY: o->retry_failed = true; break;
    case O_SHARD: o->shard = v; break;
    case O_SHARDS: o->shards = v; break;
    case O_PLAN: o->plan = true; break;
    case O_PLAN_JSON: o->plan = o->plan_json = true; break;
    case O_STRICT: o->strict = true; break;
    }
  }
  if (rc == 0 && k == SBO_STOP) rc = p.status ? p.status : -1;
  if (rc == 0) rc = sbo_no_args(&p);
  if (rc == 0 && !o->data) rc = sbo_usage_error(&p, "--data DIR is required (SURGE's <subset>.json files)");
  sbo_done(&p);
  return rc;
}

bool sbr_in_only(const char *only, size_t index) {
  if (!only) return true;
  for (const char *p = only; *p;) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p) break;
    if ((size_t)v == index) return true;
    p = *end == ',' ? end + 1 : end;
  }
  return false;
}

int sbr_regen_main(const sbc_ctx *ctx, int argc, char **argv) {
  opts o;
  int rc = parse(argc, argv, &o);
  if (rc) return rc < 0 ? 0 : 1;
  sbr_shard shard;
  if (sbr_shard_from_args("regen", o.shard, o.shards, &shard) < 0) return 1;
  if (shard.count && !o.out && !o.dump && !o.plan) {
    fprintf(stderr, "regen: --shard needs --out DIR (what surgebox merge reads)\n");
    return 1;
  }
  sbr_subset subsets[SBR_N_SUBSETS];
  size_t n_subsets = 0;
  if (!strcmp(o.subsets_arg, "all")) {
    for (int s = 0; s < SBR_N_SUBSETS; s++) subsets[n_subsets++] = (sbr_subset)s;
  } else {
    char buf[128];
    snprintf(buf, sizeof buf, "%s", o.subsets_arg);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
      if (n_subsets == SBR_N_SUBSETS || sbr_subset_parse(tok, &subsets[n_subsets]) < 0) {
        fprintf(stderr, "regen: unknown subset %s (ml cl rl sc tc bg dr fl, or all)\n", tok);
        return 1;
      }
      n_subsets++;
    }
  }
  /* the published data, and what a previous run already finished */
  json_object *published[SBR_N_SUBSETS] = {0}, *outs[SBR_N_SUBSETS] = {0};
  for (size_t s = 0; s < n_subsets; s++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", o.data, sbr_subset_name(subsets[s]));
    published[s] = json_object_from_file(path);
    if (!published[s] || !json_object_is_type(published[s], json_type_array)) {
      fprintf(stderr, "regen: cannot read %s: %s\n", path, json_util_get_last_err());
      return 2;
    }
    if (o.out) {
      snprintf(path, sizeof path, "%s/%s.json", o.out, sbr_subset_name(subsets[s]));
      json_object *prev = json_object_from_file(path);
      if (prev && json_object_is_type(prev, json_type_array) &&
          json_object_array_length(prev) == json_object_array_length(published[s]))
        outs[s] = prev;
      else if (prev)
        json_object_put(prev);
    }
    if (!outs[s]) { /* a deep copy of the published items */
      outs[s] = json_tokener_parse(json_object_to_json_string_ext(published[s], JSON_C_TO_STRING_PLAIN));
    }
  }
  if (o.plan) {
    if (!shard.count) {
      fprintf(stderr, "regen: --plan needs --shard I/N (or --shard auto --shards N)\n");
      return 1;
    }
    return sbr_regen_shard_print_plan(shard.count, published, subsets, n_subsets, o.only, o.plan_json, stdout);
  }
  if (o.out && sb_mkdir_p(o.out, 0755) < 0) {
    fprintf(stderr, "regen: cannot create %s: %s\n", o.out, strerror(errno));
    return 2;
  }
  /* the daemon (the embedded default when none is running) */
  char jobs_arg[16];
  snprintf(jobs_arg, sizeof jobs_arg, "%d", o.jobs > 0 ? o.jobs : (int)sysconf(_SC_NPROCESSORS_ONLN));
  const char *extra[] = {"--jobs", jobs_arg, NULL};
  sbc_conn c;
  char err[512];
  if (sbc_open(&c, o.socket, o.autostart, extra, err, sizeof err) < 0) {
    fprintf(stderr, "regen: %s\n", err);
    return 2;
  }
  json_object *tcreq = json_tokener_parse("{\"id\":\"regen-toolchains\",\"type\":\"toolchains\"}");
  if (o.profile) json_object_object_add(tcreq, "profile", json_object_new_string(o.profile));
  sbc_send(&c, tcreq);
  json_object_put(tcreq);
  json_object *tcresp = sbc_recv(&c);
  if (tcresp && sbp_response_error_code(tcresp)) {
    fprintf(stderr, "regen: %s\n", json_object_get_string(json_object_object_get(json_object_object_get(tcresp, "error"), "message")));
    json_object_put(tcresp);
    sbc_close(&c);
    return 2;
  }
  regen_state rs = {0};
  rs.profile = o.profile;
  sbr_env env;
  sbr_env_init(&env, tcresp ? json_object_object_get(tcresp, "toolchains") : NULL, err, sizeof err);
  if (tcresp) json_object_put(tcresp);
  snprintf(env.run_profile, sizeof env.run_profile, "%s", o.profile ? o.profile : "");
  best_profile(&c, &env, o.profile);
  env.inproc_time = o.inproc;
  env.bg_mimic_gcc9 = env.bg_mimic_gcc9 && o.mimic; /* never for a real GCC 9 */
  fprintf(stderr, "regen: profile %s: g++ %s, clang %s (%s), BG python %s, python %s%s%s\n", o.profile ? o.profile : "host", env.gxx_name[0] ? env.gxx_name : "none",
          env.clang_name[0] ? env.clang_name : "none", env.clang_dir, env.bg_python, env.python,
          env.best_profile[0] ? "; julia from profile " : "", env.best_profile);
  bool *mine[SBR_N_SUBSETS] = {0};
  if (shard.count) { /* this shard's items, and its manifest before anything runs */
    json_object *owned;
    double share;
    sbr_regen_shard_plan(&shard, published, subsets, n_subsets, o.only, mine, &owned, &share);
    sbr_regen_manifest_opts mo = {o.only, o.profile, o.repeat, o.inproc, o.mimic};
    json_object *man = sbr_regen_manifest(&shard, o.data, subsets, n_subsets, &mo, env.toolchains, owned, share);
    char path[4200];
    snprintf(path, sizeof path, "%s/shard.json", o.out ? o.out : ".");
    if (o.out && sbr_regen_shard_check_resume(path, man) < 0) return 2;
    if (o.out && sbr_write_json_atomic(path, man) < 0) fprintf(stderr, "regen: cannot write %s\n", path);
    fprintf(stderr, "regen: shard %u/%u, %.1f%% of the expected cost\n", shard.index, shard.count, share * 100);
    json_object_put(man);
    json_object_put(owned);
  }
  /* tasks */
  size_t total = 0, cap = 64;
  task *tasks = calloc(cap, sizeof *tasks);
  for (size_t s = 0; s < n_subsets; s++) {
    for (size_t i = 0; i < json_object_array_length(published[s]); i++) {
      if (!sbr_in_only(o.only, i) || (shard.count && !mine[s][i])) continue;
      json_object *prev = json_object_array_get_idx(outs[s], i), *exec, *complete;
      if (json_object_object_get_ex(prev, "exec", &exec) && json_object_object_get_ex(exec, "complete", &complete) &&
          json_object_get_boolean(complete)) {
        /* finished by an earlier run; --retry-failed runs timeouts and machinery failures again */
        const char *cls = json_object_get_string(json_object_object_get(exec, "class"));
        const char *st = json_object_get_string(json_object_object_get(exec, "status"));
        bool failed = (cls && !strcmp(cls, "timeout")) || (st && (!strcmp(st, "internal_error") || !strcmp(st, "error")));
        if (!(o.retry_failed && failed)) continue;
      }
      if (total == cap) tasks = realloc(tasks, (cap *= 2) * sizeof *tasks);
      task *t = &tasks[total++];
      memset(t, 0, sizeof *t);
      t->subset = subsets[s];
      t->index = i;
      t->item = json_object_array_get_idx(published[s], i);
      t->wanted = o.repeat;
      t->refs = calloc((size_t)o.repeat, sizeof *t->refs);
      t->cpu = calloc((size_t)o.repeat, sizeof(double));
      t->wall = calloc((size_t)o.repeat, sizeof(double));
      t->inproc = calloc((size_t)o.repeat, sizeof(double));
      if (sbr_adapt(t->subset, i, t->item, &env, &t->job, t->error, sizeof t->error) < 0) t->wanted = 0;
      if (t->job.missing[0]) t->wanted = 0;
    }
  }
  if (sbr_env_say_substitutions(&env, "regen", o.strict, stderr) < 0) return 2; /* --strict: nothing ran */
  signal(SIGINT, on_sigint);
  signal(SIGTERM, on_sigint);
  rs.tasks = tasks;
  rs.total = total;
  rs.env = &env;
  rs.subsets = subsets;
  rs.n_subsets = n_subsets;
  rs.outs = outs;
  rs.out_dir = o.out;
  /* items that need no run are recorded right away */
  for (size_t k = 0; k < total; k++)
    if (tasks[k].wanted == 0) record(&tasks[k], out_item(&rs, &tasks[k]));
  sbr_pump pump = {.total = total * (size_t)o.repeat,
                   .window = (size_t)atoi(jobs_arg) * 2 + 2,
                   .make = make_request,
                   .done = on_response,
                   .checkpoint = o.out ? save_outputs : NULL,
                   .ctx = &rs,
                   .label = "regen",
                   .interrupted = &interrupted};
  if (o.dump) {
    FILE *f = strcmp(o.dump, "-") ? fopen(o.dump, "w") : stdout;
    pump.dump = f;
    int drc = f ? sbr_pump_run(&c, &pump) : -1;
    if (f && f != stdout && fclose(f) != 0) drc = -1;
    if (drc < 0) fprintf(stderr, "regen: cannot write %s: %s\n", o.dump, strerror(errno));
    else fprintf(stderr, "regen: the requests are in %s (nothing ran)\n", o.dump);
    sbc_close(&c);
    return drc < 0 ? 2 : 0; /* a one-shot tool: the OS frees the rest */
  }
  double t0 = sbu_now_s();
  sbr_pump_run(&c, &pump);
  size_t done = 0;
  for (size_t k = 0; k < total; k++) done += tasks[k].got >= tasks[k].wanted;
  sbc_close(&c);
  json_object *summary = sbr_summary(outs, subsets, n_subsets);
  sbr_print_table(summary, stdout);
  printf("\n%zu items in %.1fs%s\n", done, sbu_now_s() - t0, interrupted ? " (interrupted: run again to resume)" : "");
  if (o.summary && sbr_write_json_atomic(o.summary, summary) < 0) fprintf(stderr, "regen: cannot write %s\n", o.summary);
  json_object_put(summary);
  for (size_t k = 0; k < total; k++) {
    for (int r = 0; r < tasks[k].wanted || r < tasks[k].got; r++)
      if (r < o.repeat) free(tasks[k].refs[r]);
    free(tasks[k].refs);
    free(tasks[k].cpu);
    free(tasks[k].wall);
    free(tasks[k].inproc);
    if (tasks[k].toolchain) json_object_put(tasks[k].toolchain);
    if (tasks[k].profile) json_object_put(tasks[k].profile);
    sbr_job_free(&tasks[k].job);
  }
  free(tasks);
  for (size_t s = 0; s < n_subsets; s++) {
    json_object_put(published[s]);
    json_object_put(outs[s]);
    free(mine[s]);
  }
  sbr_env_free(&env);
  return interrupted ? 130 : 0;
}
