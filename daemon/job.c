/* An exec job: its workspace, its steps one after another (a later step runs
 * only when the earlier ones ended "ok"), and its response. Steps come from
 * the request (raw form) or from a toolchain plan (toolchain form); a
 * toolchain's compile step goes through the compile cache. */
#include "clock.h"
#include "internal.h"
#include "json_seconds.h"
#include "sha256.h"
#include "strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


sbd_job *sbd_job_new(sbd_server *srv, sbd_conn *conn, sbp_request *req) {
  sbd_job *job = calloc(1, sizeof *job);
  if (!job) return NULL;
  job->srv = srv;
  job->conn = conn;
  job->req = req;
  job->slot = -1;
  job->t_queued = sbu_now_ns();
  sbd_conn_ref(conn);
  return job;
}

void sbd_job_free(sbd_job *job) {
  if (!job) return;
  sbd_sched_forget_waiter(job->srv, job);
  sbd_cases_free(job);
  if (job->resp) json_object_put(job->resp);
  if (job->cache_leader) sbd_cache_abandon(job->srv->cache, job->cache_key);
  sbd_cache_forget_waiter(job->srv->cache, job);
  if (job->parked) sbd_profile_forget_waiter(job->srv, job);
  sb_workspace_destroy_in_slot(job->ws, job->slot); /* its /app is charged to the slot's cgroup */
  for (size_t i = 0; job->steps && i < job->n_steps; i++) sbd_trace_step_free(&job->steps[i]);
  if (job->untraced) json_object_put(job->untraced);
  free(job->steps);
  if (job->has_plan) sbt_plan_free(&job->plan);
  if (job->profile) json_object_put(job->profile);
  free(job->root);
  sbd_snapshot_free(&job->before);
  sbp_request_free(job->req);
  if (job->conn) sbd_conn_unref(job->conn);
  free(job);
}

/* The steps to run, from the request or the plan. */
/* A warm raw step whose interpreter is named as a warm-capable toolchain is
 * ("python3", "python3.11": no '/', a name its file's "warm" interpreter
 * matches): the daemon puts in its place the path it detected for that
 * toolchain itself (its own registry, never a path the client sent), so that
 * the step can start warm (issue 36); the warm start's vetting
 * (runners/warm.c) still decides. Anything else is left as asked.
 * 0, or -1 out of memory. */
static int resolve_warm_interpreter(sbd_job *job, sbd_jstep *js) {
  const sbt_registry *reg = sbd_profile_registry(job->srv, NULL);
  if (!js->warm || job->root || !js->argv || !js->argv[0] || strchr(js->argv[0], '/') ||
      !sbt_warm_lang_of(&job->srv->warm_langs, js->argv[0]))
    return 0;
  const sbt_toolchain *tc = reg ? sbt_find(reg, js->argv[0]) : NULL;
  if (!tc || !tc->bin || tc->bin[0] != '/') return 0;
  char **v = sbu_strv_copy((const char *const *)js->argv), *bin = strdup(tc->bin);
  if (!v || !bin) {
    sbu_strv_free(v);
    free(bin);
    return -1;
  }
  free(v[0]);
  v[0] = bin;
  js->own_argv = v; /* freed with the step (sbd_trace_step_free) */
  js->argv = v;
  return 0;
}

static int build_steps(sbd_job *job) {
  const sbp_exec *ex = &job->req->exec;
  if (!job->has_plan) {
    job->n_steps = ex->n_steps;
    job->steps = calloc(ex->n_steps, sizeof *job->steps);
    if (!job->steps) return -1;
    for (size_t i = 0; i < ex->n_steps; i++) {
      const sbp_step *s = &ex->steps[i];
      sbd_jstep *js = &job->steps[i];
      js->name = s->name;
      js->argv = s->argv;
      js->env = s->env;
      js->stdin_data = s->has_stdin ? s->stdin_data : NULL;
      js->stdin_len = s->stdin_len;
      js->merge_output = s->merge_output;
      js->output_base64 = s->output_base64 || ex->output_base64;
      js->cacheable = s->cache;
      js->warm = ex->warm;
      js->outputs = s->outputs;
      js->n_outputs = s->n_outputs;
      js->cases = s->cases.v ? &s->cases : NULL;
      sbt_limits_resolve(&js->limits, NULL, &s->limits); /* no toolchain: defaults < request */
      if (s->trace.on && sbd_trace_step(js, &s->trace, NULL, 0, NULL) < 0) return -1; /* checked at dispatch */
      if (!s->trace.on && resolve_warm_interpreter(job, js) < 0) return -1;
    }
    return 0;
  }
  job->n_steps = job->plan.n_steps;
  job->steps = calloc(job->n_steps, sizeof *job->steps);
  if (!job->steps) return -1;
  for (size_t i = 0; i < job->n_steps; i++) {
    const sbt_step *s = &job->plan.steps[i];
    sbd_jstep *js = &job->steps[i];
    js->name = s->name;
    js->argv = s->argv;
    js->env = job->plan.env;
    js->limits = s->limits;
    js->cacheable = s->is_compile;
    js->output_base64 = ex->output_base64;
    if (!s->is_compile) { /* stdin and the program's arguments belong to the run */
      js->stdin_data = ex->has_stdin ? ex->stdin_data : NULL;
      js->stdin_len = ex->stdin_len;
    }
    if (i + 1 == job->n_steps) { /* files back after the run */
      js->warm = ex->warm;
      js->cases = ex->cases.v ? &ex->cases : NULL;
      js->outputs = ex->outputs;
      js->n_outputs = ex->n_outputs;
      char *const *build = job->plan.n_steps > 1 && job->plan.steps[0].is_compile ? job->plan.steps[0].argv : NULL;
      if (ex->trace.on && sbd_trace_step(js, &ex->trace, job->plan.mounts, job->plan.n_mounts, build) < 0) return -1;
    }
  }
  return 0;
}

/* A slot that was not empty after a run was rebuilt (runners/namespaces.c,
 * pool.c): said once per job that saw it happen. */
static void log_slot_rebuilds(sbd_server *srv, const sbd_job *job) {
  uint64_t netns, templates;
  uint32_t held;
  sb_runtime_slot_rebuilds(srv->rt, &netns, &templates, &held);
  if (netns == srv->logged_netns_rebuilds && templates == srv->logged_template_rebuilds) return;
  sbd_log(srv, "warn",
          "slot %d not empty after a run (descriptors left in flight): rebuilt (%llu network namespaces, %llu "
          "templates so far; job %s)",
          job->slot, (unsigned long long)netns, (unsigned long long)templates, job->req->id_key);
  srv->logged_netns_rebuilds = netns;
  srv->logged_template_rebuilds = templates;
}

static void send_and_end(sbd_job *job, const char *status) {
  sbd_server *srv = job->srv;
  const char *final = SBP_STATUS_INTERNAL_ERROR;
  if (job->resp) {
    if (status) sbp_exec_response_set_status(job->resp, status);
    else sbp_exec_response_finish(job->resp);
    json_object *st = NULL;
    json_object_object_get_ex(job->resp, "status", &st);
    if (st) final = json_object_get_string(st);
    json_object_object_add(job->resp, "queue_time_s",
                           sbu_json_seconds((double)(job->t_started - job->t_queued) / 1e9));
  }
  sbd_count_status(srv, final);
  sbd_log_job(srv, job, final);
  log_slot_rebuilds(srv, job);
  sbd_conn_unlink_running(job->conn, job);
  if (job->resp) sbd_conn_send(job->conn, job->resp);
  job->resp = NULL;
  sbd_conn *conn = job->conn;
  sbd_conn_ref(conn);
  sbd_sched_release(srv, job->slot);
  sbd_job_free(job);
  sbd_conn_maybe_finish(conn);
  sbd_conn_unref(conn);
  sbd_sched_pump(srv);
  srv->job_ended.fn(srv->job_ended.arg);
}

static void run_step(sbd_job *job);
static void start_sandbox(sbd_job *job);
static void step_finished(sbd_job *job, json_object *doc, bool ok, double cpu_s, double wall_s);
static void job_spec(sbd_job *job, sb_spec *spec);
/* What a cases step (cases.c) calls back: its sandboxes, its document. */
static const sbd_cases_calls cases_calls = {
    .start_sandbox = start_sandbox, .finished = step_finished, .job_spec = job_spec};

/* Files back: each named file, read link-safely from the workspace after the
 * step (a symlink, a directory, a FIFO or a missing file is that entry's
 * error, never followed or waited on), within the job's byte budget. */
static void add_outputs(sbd_job *job, const sbd_jstep *js, json_object *doc) {
  if (!js->n_outputs || !doc) return;
  json_object *arr = json_object_new_array();
  for (size_t i = 0; arr && i < js->n_outputs; i++) {
    json_object *o = json_object_new_object();
    if (!o) break;
    json_object_object_add(o, "path", json_object_new_string(js->outputs[i]));
    unsigned char *data = NULL;
    size_t len = 0;
    char err[SB_ERR_MAX] = "";
    int rc = sb_workspace_read(job->ws, js->outputs[i], job->outputs_left, &data, &len, NULL, err);
    if (rc == -EFBIG)
      snprintf(err, sizeof err, "%s: larger than the %llu bytes left of outputs_max_bytes", js->outputs[i],
               (unsigned long long)job->outputs_left);
    size_t b64_len = 0;
    char *b64 = rc == 0 ? sbu_base64_encode(data, len, &b64_len) : NULL;
    if (rc == 0 && b64) {
      char hex[SBU_SHA256_HEX];
      sbu_sha256_hex(data, len, hex);
      json_object_object_add(o, "size", json_object_new_int64((int64_t)len));
      json_object_object_add(o, "sha256", json_object_new_string(hex));
      json_object_object_add(o, "content_b64", json_object_new_string_len(b64, (int)b64_len));
      job->outputs_left -= len;
    } else {
      json_object_object_add(o, "error", json_object_new_string(rc == 0 ? "out of memory" : err));
    }
    free(b64);
    free(data);
    json_object_array_add(arr, o);
  }
  if (arr) json_object_object_add(doc, "outputs", arr);
}

/* A step's result document is in: record it and go on (or stop). */
static void step_finished(sbd_job *job, json_object *doc, bool ok, double cpu_s, double wall_s) {
  const sbd_jstep *js = &job->steps[job->step];
  job->warm_refused[0] = '\0'; /* the next step may start warm */
  job->cpu_s += cpu_s;
  job->wall_s += wall_s;
  json_object *w, *ww, *ws;
  if (doc && json_object_object_get_ex(doc, "wall_waiting", &w) && json_object_object_get_ex(w, "process", &ww) &&
      json_object_object_get_ex(w, "state", &ws)) { /* for the log: where the wall limit caught it */
    json_object *wc = json_object_object_get(w, "wchan");
    snprintf(job->wall_waiting, sizeof job->wall_waiting, "%s:%s:%s", json_object_get_string(ww),
             json_object_get_string(ws), wc ? json_object_get_string(wc) : "-");
  }
  /* what ran (a toolchain's compile and run steps included): the step as
   * planned, not the tracer's rewrite of it (issue 36) */
  char *const *argv = js->traced && js->plain_argv ? js->plain_argv : js->argv;
  if (doc && argv && !json_object_object_get_ex(doc, "argv", NULL)) {
    json_object *a = json_object_new_array();
    for (size_t i = 0; argv[i]; i++) json_object_array_add(a, json_object_new_string(argv[i]));
    json_object_object_add(doc, "argv", a);
  }
  sbp_exec_response_add_step(job->resp, js->name, doc);
  job->step++;
  if (ok && !job->cancelled && job->step < job->n_steps) {
    run_step(job);
    return;
  }
  /* Steps with cases that will not run answer each case all the same: a
   * failed build makes every case compile_error, anything else skipped.
   * Beside the steps, which stop at the first failure. */
  bool build_failed = !ok && js->name && strcmp(js->name, "compile") == 0;
  json_object *not_run = NULL;
  for (size_t k = job->step; k < job->n_steps; k++)
    if (job->steps[k].cases && (not_run || (not_run = json_object_new_array())))
      json_object_array_add(not_run, sbd_cases_unrun_doc(job->steps[k].name, job->steps[k].cases,
                                                         build_failed && !job->cancelled));
  if (not_run) json_object_object_add(job->resp, "cases_not_run", not_run);
  send_and_end(job, job->cancelled ? SBP_STATUS_CANCELLED : NULL);
}

static void step_done(sbd_job *job, sb_result *r) {
  if (r->warm_lost && !job->cancelled && !job->warm_refused[0]) {
    /* Nothing of the program ran (the init's word): not a result. The step
     * again, cold, its enforced.start saying why; once. */
    snprintf(job->warm_refused, sizeof job->warm_refused, "the slot's zygote ended before it started the program");
    sbd_log(job->srv, "warn", "job %s: %s; run again cold", job->req->id_key, r->error);
    sb_result_free(r);
    start_sandbox(job);
    return;
  }
  if (sbd_cases_result(job, r)) return;
  json_object *doc = sb_result_to_json(r, job->srv->rt);
  const sbd_jstep *cur = &job->steps[job->step];
  if (cur->traced && cur->check && !job->untraced && !job->cancelled) {
    /* the untraced run of a checked trace: kept, then the traced run */
    job->untraced = sbd_trace_untraced_summary(doc);
    json_object_put(doc);
    sbd_metrics_step(job->srv, r->cpu_time_s, r->wall_time_s);
    sb_result_free(r);
    start_sandbox(job);
    return;
  }
  if (job->untraced) {
    sbd_trace_add_check(doc, job->untraced);
    job->untraced = NULL;
  }
  if (job->cancelled && r->limit_hit && strcmp(r->limit_hit, "cancel") == 0)
    json_object_object_add(doc, "error", json_object_new_string(job->cancel_why));
  bool ok = r->status == SB_OK;
  /* A compile that ended on its own (ok, or a compile error) is a fact
   * about the sources and the compiler: cache it. Timeouts, memory limits,
   * kills and internal errors are not. */
  if (job->cache_leader) {
    bool deterministic = (r->status == SB_OK || r->status == SB_RUNTIME_ERROR) && !job->cancelled;
    if (deterministic) sbd_cache_store(job->srv->cache, job->cache_key, doc, job->ws, &job->before);
    else sbd_cache_abandon(job->srv->cache, job->cache_key);
    job->cache_leader = false;
  }
  add_outputs(job, &job->steps[job->step], doc); /* after the store: never cached */
  double cpu = r->cpu_time_s, wall = r->wall_time_s;
  sb_result_free(r);
  sbd_metrics_step(job->srv, cpu, wall); /* a step that ran (not a cache hit) */
  step_finished(job, doc, ok, cpu, wall);
}

/* The step's run ended (step.c's done): it is no more running. */
static void on_step_done(void *arg, sb_result *r) {
  sbd_job *job = arg;
  job->run = NULL;
  step_done(job, r);
}

/* The current step's spec on the job's slot, untraced; warm_lang from its argv[0]. */
static void job_spec(sbd_job *job, sb_spec *spec_out) {
  const sbd_jstep *js = &job->steps[job->step];
  sb_spec spec = *spec_out;
  spec.argv = (const char *const *)js->argv;
  spec.envp = (const char *const *)js->env;
  spec.workspace = job->ws;
  spec.stdin_data = js->stdin_data;
  spec.stdin_len = js->stdin_len;
  spec.merge_output = js->merge_output;
  spec.output_base64 = js->output_base64;
  spec.netns_slot = job->slot;
  spec.limits = js->limits;
  spec.root = job->root;
  spec.warm = js->warm && !job->warm_refused[0];
  spec.warm_refused = job->warm_refused[0] ? job->warm_refused : NULL;
  spec.client = job->conn->uid;
  if (job->has_plan) {
    spec.cwd = job->plan.cwd;
    spec.extra_mounts = job->plan.mounts;
    spec.n_extra_mounts = job->plan.n_mounts;
    spec.seccomp_extra_deny = (const char *const *)job->plan.seccomp_deny;
  }
  /* the language argv[0] is, as the daemon's own files say (never the client) */
  if (spec.warm) spec.warm_lang = sbt_warm_lang_of(&job->srv->warm_langs, spec.argv[0]);
  *spec_out = spec;
}

static void start_sandbox(sbd_job *job) {
  if (!sbd_sched_slot_wait(job->srv, job)) return; /* the slot's previous run is still being cleaned */
  const sbd_jstep *js = &job->steps[job->step];
  sb_spec spec;
  sb_spec_init(&spec);
  job_spec(job, &spec);
  if (job->cases) sbd_cases_spec(job, &spec);
  if (js->traced && js->check && !job->untraced) { /* its untraced run first */
    spec.argv = (const char *const *)js->plain_argv;
    spec.envp = (const char *const *)js->plain_env;
    spec.extra_mounts = js->plain_mounts;
    spec.n_extra_mounts = js->n_plain_mounts;
  } else if (js->traced) {
    spec.trace = true;
    spec.trace_bytes = js->trace_bytes;
    spec.trace_seal = js->trace_seal;
    spec.extra_mounts = js->own_mounts;
    spec.n_extra_mounts = js->n_own_mounts;
    spec.seccomp_extra_allow = js->seccomp_allow;
  }
  /* the language argv[0] is, as the daemon's own files say (never the client) */
  if (spec.warm) spec.warm_lang = sbt_warm_lang_of(&job->srv->warm_langs, spec.argv[0]);
  char err[SB_ERR_MAX] = "";
  job->ran_program = true; /* from now on the workspace may hold anything */
  int rc = sbd_step_start(job->srv, &spec, (sbd_step_done){on_step_done, job}, &job->run, err);
  sbd_spawner_check(job->srv);
  if (rc < 0) {
    /* The sandbox could not start: a result document that says why. */
    sb_result r;
    sbd_step_start_failed(job->srv, &spec, err, &r);
    sbd_log(job->srv, "error", "job %s: %s", job->req->id_key, err);
    step_done(job, &r);
  }
}

static void resume(void *arg);

static void run_step(sbd_job *job) {
  const sbd_jstep *js = &job->steps[job->step];
  if (js->cases) {
    sbd_cases_start(job, js, cases_calls);
    return;
  }
  sbd_cache *cache = job->srv->cache;
  if (js->cacheable && cache && sbd_cache_key(job, job->cache_key) == 0) { /* per step: keys differ */
    json_object *doc = NULL;
    switch (sbd_cache_lookup(cache, job->cache_key, (sbd_call){resume, job}, job->ws, &doc)) {
    case SBD_CACHE_HIT: {
      json_object *st = NULL;
      json_object_object_get_ex(doc, "status", &st);
      bool ok = st && strcmp(json_object_get_string(st), "ok") == 0;
      add_outputs(job, js, doc);
      step_finished(job, doc, ok, 0, 0);
      return;
    }
    case SBD_CACHE_WAIT:
      return; /* an identical compile is running: resume() later */
    case SBD_CACHE_LEAD:
      job->cache_leader = true;
      sbd_snapshot_take(job->ws, &job->before);
      break;
    case SBD_CACHE_OFF:
      break;
    }
  }
  start_sandbox(job);
}

void sbd_job_slot_ready(sbd_job *job) {
  if (job->cancelled && job->cases) { /* the cases step ends, once its lent cases did */
    sbd_cases_unstarted(job);
    return;
  }
  if (job->cancelled) {
    send_and_end(job, SBP_STATUS_CANCELLED);
    return;
  }
  start_sandbox(job);
}

/* The identical compile this job waited for ended (the cache's wake). */
static void resume(void *arg) {
  sbd_job *job = arg;
  if (job->cancelled) {
    send_and_end(job, SBP_STATUS_CANCELLED);
    return;
  }
  run_step(job);
}

void sbd_job_start(sbd_job *job, int slot) {
  sbd_server *srv = job->srv;
  job->slot = slot;
  job->t_started = sbu_now_ns();
  sbd_queuetime_add(&srv->queue_time, job->t_started, job->t_started - job->t_queued);
  sbd_conn_link_running(job->conn, job);
  job->resp = sbp_exec_response_new(job->req->id);
  uint64_t want = job->req->exec.outputs_max_bytes ? job->req->exec.outputs_max_bytes : SBP_DEFAULT_OUTPUTS_BYTES;
  job->outputs_left = want < SBD_OUTPUTS_MAX_BYTES ? want : SBD_OUTPUTS_MAX_BYTES;
  char err[SB_ERR_MAX] = "";
  int rc = job->resp && build_steps(job) == 0 ? sb_workspace_create(srv->rt, 512, &job->ws, err) : -1;
  const sbp_exec *ex = &job->req->exec;
  for (size_t i = 0; rc == 0 && i < ex->n_files; i++) {
    /* the plan may rename the main source (Java: its public class) */
    const char *path = job->has_plan && i == job->plan.main_index ? job->plan.main_path : ex->files[i].path;
    rc = sb_workspace_write(job->ws, path, ex->files[i].data, ex->files[i].len,
                            ex->files[i].has_mode ? ex->files[i].mode : 0644, err);
  }
  if (rc == 0 && job->has_plan && job->resp)
    json_object_object_add(job->resp, "toolchain", json_object_get(job->plan.identity));
  if (job->resp && job->profile) json_object_object_add(job->resp, "profile", json_object_get(job->profile));
  if (rc < 0) {
    if (!job->resp) job->resp = sbp_exec_response_new(job->req->id);
    if (job->resp) json_object_object_add(job->resp, "error", json_object_new_string(err[0] ? err : "out of memory"));
    sbd_log(srv, "error", "job %s: %s", job->req->id_key, err);
    send_and_end(job, SBP_STATUS_INTERNAL_ERROR);
    return;
  }
  run_step(job);
}

/* A cancelled job that was waiting for an identical compile ends on the next
 * loop turn, never inside the cancel: its caller may be walking a list the
 * job is on (a connection's running jobs), and ending it frees it. */
typedef struct {
  uv_timer_t timer;
  sbd_job *job;
} deferred_end;

static void on_deferred_closed(uv_handle_t *h) { free(h->data); }

static void on_deferred_end(uv_timer_t *t) {
  deferred_end *d = t->data;
  send_and_end(d->job, SBP_STATUS_CANCELLED);
  uv_close((uv_handle_t *)&d->timer, on_deferred_closed);
}

void sbd_job_cancel_running(sbd_job *job, const char *why) {
  if (!job->cancelled) snprintf(job->cancel_why, sizeof job->cancel_why, "%s", why);
  job->cancelled = true;
  bool lent_running = sbd_cases_cancel(job); /* a cases step's cases on lent slots: killed */
  if (job->run) {
    sbd_step_kill(job->run, "cancel");
    return;
  }
  if (lent_running) return; /* they end the step (and a slot wait ends in sbd_cases_unstarted) */
  /* Waiting for a compile or for its slot: without memory for the timer it
   * stays a waiter and ends (cancelled) when that compile does, through
   * resume(), or its slot is ready, through sbd_job_slot_ready. */
  deferred_end *d = calloc(1, sizeof *d);
  if (!d) return;
  if (!sbd_sched_forget_waiter(job->srv, job) && !sbd_cache_forget_waiter(job->srv->cache, job)) {
    /* not waiting: already on its way */
    free(d);
    return;
  }
  d->job = job;
  uv_timer_init(&job->srv->loop, &d->timer);
  d->timer.data = d;
  uv_timer_start(&d->timer, on_deferred_end, 0, 0);
}

void sbd_job_unqueue(sbd_job *job) {
  if (job->parked) {
    sbd_conn_unlink_parked(job->conn, job);
    job->conn->n_parked--;
    sbd_profile_forget_waiter(job->srv, job);
    job->parked = false;
    return;
  }
  sbd_conn_unlink_queued(job->conn, job);
  job->srv->queued--;
}

void sbd_job_finish_unrun(sbd_job *job, const char *status, const char *why) {
  sbd_server *srv = job->srv;
  job->t_started = sbu_now_ns();
  json_object *resp = sbp_exec_response_new(job->req->id);
  if (resp) {
    sbp_exec_response_set_status(resp, status);
    json_object_object_add(resp, "error", json_object_new_string(why));
    sbd_conn_send(job->conn, resp);
  }
  sbd_count_status(srv, status);
  sbd_log_job(srv, job, status);
  sbd_conn *conn = job->conn;
  sbd_conn_ref(conn);
  sbd_job_free(job);
  sbd_conn_maybe_finish(conn);
  sbd_conn_unref(conn);
}
