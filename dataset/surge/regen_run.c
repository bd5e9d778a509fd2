/* surgebox regen's run on the benchmark driver: the published data and
 * what --out already holds (resume), this shard's items, the tasks through
 * the pump, --out rewritten as items finish, the fidelity table. */
#include "adapt_internal.h"
#include "failure.h"
#include "fidelity.h"
#include "fs_tree.h"
#include "protocol.h"
#include "regen_shard.h"
#include "regen_task.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const sbs_regen_opts *o;
  sbr_driver *d;
  sbs_env env;
  json_object *published[SBS_N_SUBSETS], *outs[SBS_N_SUBSETS];
  bool *mine[SBS_N_SUBSETS]; /* --shard: this shard's items */
  sbs_regen_task *tasks;
  size_t total;
} regen_state;

/* The published data, and what an earlier run left in --out: 0, 1 (an
 * --only index no subset has), or 2. */
static int load(regen_state *rs) {
  const sbs_regen_opts *o = rs->o;
  for (size_t s = 0; s < o->n_subsets; s++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", o->data, sbs_subset_name(o->subsets[s]));
    char why[600] = "not a list of SURGE items";
    rs->published[s] = sbp_json_file(path, why, sizeof why);
    if (!rs->published[s] || !json_object_is_type(rs->published[s], json_type_array)) {
      fprintf(stderr, "regen: %s: %s\n", path, why);
      return 2;
    }
    json_object *prev = NULL;
    if (o->only) { /* an index no subset has: nothing would run, without a word */
      size_t len = json_object_array_length(rs->published[s]);
      for (const char *q = o->only; *q;) {
        char *end;
        unsigned long i = strtoul(q, &end, 10);
        bool in_some = false;
        for (size_t k = 0; k < o->n_subsets && rs->published[k]; k++)
          in_some |= i < json_object_array_length(rs->published[k]);
        if (s + 1 == o->n_subsets && !in_some) {
          fprintf(stderr, "regen: --only %lu: %s has %zu items (0 to %zu); nothing ran\n", i,
                  sbs_subset_name(o->subsets[s]), len, len ? len - 1 : 0);
          return 1;
        }
        q = *end ? end + 1 : end;
      }
    }
    if (o->out) {
      snprintf(path, sizeof path, "%s/%s.json", o->out, sbs_subset_name(o->subsets[s]));
      prev = json_object_from_file(path);
    }
    if (prev && json_object_is_type(prev, json_type_array) &&
        json_object_array_length(prev) == json_object_array_length(rs->published[s]))
      rs->outs[s] = prev;
    else { /* a deep copy of the published items */
      json_object_put(prev);
      rs->outs[s] = json_tokener_parse(json_object_to_json_string_ext(rs->published[s], JSON_C_TO_STRING_PLAIN));
    }
  }
  return 0;
}

/* The toolchains of SBS_BEST_PROFILE, when the daemon has that profile and
 * the run names none: each group whose version shows in the references runs
 * where it is closer to SURGE's (adapt_env.c). A run that names a profile
 * (`--profile host` included) runs everything there, as asked. */
static void best_profile(regen_state *rs) {
  if (rs->d->ctx.profile) return;
  bool groups = false; /* a run that touches no such group (CL alone) needs no profile's word */
  for (int k = 0; k < SBS_N_ENV; k++) groups |= sbs_env_role_in(k, rs->o->subsets, rs->o->n_subsets);
  if (!groups) return;
  json_object *req = json_tokener_parse("{\"id\":\"regen-best-profile\",\"type\":\"toolchains\"}");
  json_object_object_add(req, "profile", json_object_new_string(SBS_BEST_PROFILE));
  json_object *resp = sbr_driver_ask(rs->d, req);
  json_object_put(req);
  if (resp && !sbp_response_error_code(resp))
    sbs_env_set_best(&rs->env, SBS_BEST_PROFILE, json_object_object_get(resp, "toolchains"));
  else
    fprintf(stderr, "regen: profile %s not available (%s): every group runs here (`surgebox profile create %s` "
                    "gives GCC 9, JDK 11, Python 3.9 and Julia 1.5)\n",
            SBS_BEST_PROFILE,
            resp ? json_object_get_string(json_object_object_get(json_object_object_get(resp, "error"), "message"))
                 : "no answer",
            SBS_BEST_PROFILE);
  json_object_put(resp);
}

/* The environment of this run, from the daemon (connected, its profile checked): 0 or 2. */
static int environment(regen_state *rs) {
  int rc = sbr_driver_connect(rs->d);
  if (rc) return rc;
  char err[256];
  const char *profile = rs->d->ctx.profile;
  sbs_env_init(&rs->env, rs->d->toolchains, err, sizeof err);
  snprintf(rs->env.run_profile, sizeof rs->env.run_profile, "%s", profile ? profile : "");
  best_profile(rs);
  sbs_env_options(&rs->env, rs->o->inproc, rs->o->mimic);
  const sbs_env *e = &rs->env;
  if (rs->o->quiet_environment) return 0;
  bool groups = false;
  for (int k = 0; k < SBS_N_ENV; k++) groups |= sbs_env_role_in(k, rs->o->subsets, rs->o->n_subsets);
  fprintf(stderr, "regen: environment %s (python %s)%s%s%s\n", profile ? profile : "host", e->python,
          groups && e->alt ? ", closer groups in profile " : "", groups && e->alt ? e->best_profile : "",
          groups ? "; per group whose version shows in the references:" : "");
  sbs_env_say_choices(e, "regen", rs->o->subsets, rs->o->n_subsets, stderr);
  return 0;
}

/* --shard: this shard's items, and its manifest before anything runs: 0 or 2. */
static int shard_begin(regen_state *rs) {
  const sbs_regen_opts *o = rs->o;
  json_object *owned;
  double share;
  sbs_regen_shard_plan(&o->shard, rs->published, o->subsets, o->n_subsets, o->only, rs->mine, &owned, &share);
  sbs_regen_manifest_opts mo = {o->only, rs->d->ctx.profile, o->repeat, o->inproc, o->mimic};
  json_object *man = sbs_regen_manifest(&o->shard, o->data, o->subsets, o->n_subsets, &mo, rs->env.toolchains, owned, share);
  char path[4200];
  snprintf(path, sizeof path, "%s/shard.json", o->out ? o->out : ".");
  int rc = 0;
  if (o->out && sbs_regen_shard_check_resume(path, man) < 0) rc = 2;
  else if (o->out && sbr_write_json_atomic(path, man) < 0) fprintf(stderr, "regen: cannot write %s\n", path);
  if (!rc) fprintf(stderr, "regen: shard %u/%u, %.1f%% of the expected cost\n", o->shard.index, o->shard.count, share * 100);
  json_object_put(man);
  json_object_put(owned);
  return rc;
}

/* finished by an earlier run; --retry-failed runs again what did not finish
 * (timeout, memory_limit; host_killed and failures are never complete) */
static bool finished(const sbs_regen_opts *o, json_object *prev) {
  json_object *exec, *complete;
  if (!json_object_object_get_ex(prev, "exec", &exec) || !json_object_object_get_ex(exec, "complete", &complete) ||
      !json_object_get_boolean(complete))
    return false;
  const char *cls = json_object_get_string(json_object_object_get(exec, "class"));
  const char *st = json_object_get_string(json_object_object_get(exec, "status"));
  bool failed = sbr_unfinished_status(cls) || sbr_unfinished_status(st) ||
                (st && (!strcmp(st, "internal_error") || !strcmp(st, "error")));
  return !(o->retry_failed && failed);
}

static json_object *out_item(const regen_state *rs, const sbs_regen_task *t) {
  size_t s = 0;
  while (rs->o->subsets[s] != t->subset) s++;
  return json_object_array_get_idx(rs->outs[s], t->index);
}

/* The items to run: 0, or 2 (out of memory). Says first how many of the
 * items asked for an earlier run already finished in --out. */
static int make_tasks(regen_state *rs) {
  const sbs_regen_opts *o = rs->o;
  size_t cap = 0, asked = 0, resumed = 0;
  for (size_t s = 0; s < o->n_subsets; s++)
    for (size_t i = 0; i < json_object_array_length(rs->published[s]); i++) {
      if (!sbs_in_only(o->only, i) || (o->shard.count && !rs->mine[s][i])) continue;
      asked++;
      if (finished(o, json_object_array_get_idx(rs->outs[s], i))) {
        resumed++;
        continue;
      }
      if (rs->total == cap && !(rs->tasks = realloc(rs->tasks, (cap = cap ? cap * 2 : 64) * sizeof *rs->tasks))) return 2;
      sbs_regen_task *t = &rs->tasks[rs->total++];
      if (sbs_regen_task_init(t, o->subsets[s], i, json_object_array_get_idx(rs->published[s], i), &rs->env, o->repeat) < 0)
        return 2;
      if (t->wanted == 0) sbs_regen_task_record(t, out_item(rs, t)); /* nothing to run: recorded right away */
    }
  if (resumed)
    fprintf(stderr, "regen: resuming: %zu of %zu already in %s (%zu to run%s)\n", resumed, asked, o->out,
            asked - resumed, o->retry_failed ? "" : "; --retry-failed runs again what timed out, hit its memory limit or failed");
  return 0;
}

/* request i: task i % total, repeat i / total */
static json_object *make_request(size_t i, void *ctx) {
  regen_state *rs = ctx;
  sbs_regen_task *t = &rs->tasks[i % rs->total];
  if ((int)(i / rs->total) >= t->wanted) return NULL;
  json_object *req = json_tokener_parse(json_object_to_json_string_ext(t->job.request, JSON_C_TO_STRING_PLAIN));
  if (!t->job.profile[0]) sbr_driver_profile(rs->d, req);
  return req;
}

/* request i's expected seconds: the plan's (regen_shard.c), for the ETA */
static double request_cost(size_t i, void *ctx) {
  regen_state *rs = ctx;
  const sbs_regen_task *t = &rs->tasks[i % rs->total];
  size_t s = 0;
  while (rs->o->subsets[s] != t->subset) s++;
  return sbs_surge_item_cost(t->subset, json_object_array_get_idx(rs->published[s], t->index));
}

static bool on_response(size_t i, const sbc_result *r, json_object *resp, void *ctx) {
  (void)resp;
  regen_state *rs = ctx;
  sbs_regen_task *t = &rs->tasks[i % rs->total];
  sbs_regen_task_answer(t, r, &rs->env);
  if (t->got >= t->wanted) sbs_regen_task_record(t, out_item(rs, t));
  return t->failed; /* failures of the machinery, not of the programs (BG's are meant to fail) */
}

static void save_outputs(void *ctx) {
  regen_state *rs = ctx;
  for (size_t s = 0; rs->o->out && s < rs->o->n_subsets; s++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", rs->o->out, sbs_subset_name(rs->o->subsets[s]));
    if (sbr_write_json_atomic(path, rs->outs[s]) < 0) fprintf(stderr, "regen: cannot write %s\n", path);
  }
}

/* The fidelity table (and --summary), failures of surgebox in a class of their own. */
static void report(const regen_state *rs, double t0) {
  const sbs_regen_opts *o = rs->o;
  FILE *f = o->report ? o->report : stdout;
  size_t done = 0;
  for (size_t k = 0; k < rs->total; k++) done += rs->tasks[k].got >= rs->tasks[k].wanted;
  size_t failed;
  json_object *summary = sbs_regen_summary(rs->outs, o->subsets, o->n_subsets, &failed);
  sbs_print_table(summary, f);
  if (failed)
    fprintf(f, "\n%zu item(s) not regenerated: a failure of surgebox (class %s), the published reference kept\n", failed,
            SBR_FAILURE_CLASS);
  fprintf(f, "\n%zu items in %.1fs%s\n", done, sbu_now_s() - t0,
          sbr_driver_interrupted() ? " (interrupted: run again to resume)" : "");
  if (o->summary && sbr_write_json_atomic(o->summary, summary) < 0) fprintf(stderr, "regen: cannot write %s\n", o->summary);
  json_object_put(summary);
}

static void state_free(regen_state *rs) {
  for (size_t k = 0; k < rs->total; k++) sbs_regen_task_free(&rs->tasks[k]);
  free(rs->tasks);
  for (size_t s = 0; s < SBS_N_SUBSETS; s++) {
    json_object_put(rs->published[s]);
    json_object_put(rs->outs[s]);
    free(rs->mine[s]);
  }
  sbs_env_free(&rs->env);
}

int sbs_regen_on(sbr_driver *d, const sbs_regen_opts *o) {
  regen_state rs = {.o = o, .d = d};
  int rc = load(&rs);
  if (!rc && o->plan)
    rc = sbs_regen_shard_print_plan(o->shard.count, rs.published, o->subsets, o->n_subsets, o->only, o->plan_json, stdout);
  if (rc || o->plan) goto out;
  /* --out is made once the daemon answered and took the profile: a refused
   * run (no daemon, an unknown profile, --no-autostart) leaves nothing behind */
  if ((rc = environment(&rs))) goto out;
  if (o->out && sb_mkdir_p(o->out, 0755) < 0) {
    fprintf(stderr, "regen: cannot create %s: %s\n", o->out, strerror(errno));
    rc = 2;
    goto out;
  }
  if ((o->shard.count && (rc = shard_begin(&rs))) || (rc = make_tasks(&rs))) goto out;
  if (sbs_env_say_substitutions(&rs.env, "regen", o->strict, stderr) < 0) { /* --strict: nothing runs */
    rc = 2;
    goto out;
  }
  sbr_pump pump = {.total = rs.total * (size_t)o->repeat, .make = make_request, .done = on_response, .cost = request_cost,
                   .checkpoint = o->out ? save_outputs : NULL, .ctx = &rs};
  if (o->dump) {
    rc = sbr_driver_dump(d, &pump, o->dump);
    goto out;
  }
  double t0 = sbu_now_s();
  rc = sbr_driver_pump(d, &pump);
  report(&rs, t0);
out:
  state_free(&rs);
  return rc;
}

int sbs_regen_run(const sbc_ctx *ctx, const sbs_regen_opts *o) {
  sbr_driver d;
  sbr_driver_init(&d, "regen", ctx, o->jobs);
  return sbr_driver_finish(&d, sbs_regen_on(&d, o));
}
