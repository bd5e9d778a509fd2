/* What each request type does. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reply(sbd_conn *c, json_object *resp) { sbd_conn_send(c, resp); }

static void do_cancel(sbd_conn *c, sbp_request *req) {
  bool running = false;
  sbd_job *job = sbd_conn_find(c, req->cancel_target_key, &running);
  if (!job) {
    reply(c, sbp_error_response(req->id, SBP_E_NOT_FOUND, "no queued or running exec with id %s on this connection",
                                req->cancel_target_key));
    return;
  }
  json_object *resp = sbp_response_new(req->id, "cancel");
  if (resp) {
    json_object_object_add(resp, "target", json_object_get(req->cancel_target));
    json_object_object_add(resp, "was", json_object_new_string(running ? "running" : "queued"));
  }
  reply(c, resp);
  if (running) {
    char why[128];
    snprintf(why, sizeof why, "cancelled by request %s", req->id_key);
    sbd_job_cancel_running(job, why); /* its exec response follows when the sandbox is gone */
  } else {
    sbd_job_unqueue(job); /* queued, or parked waiting for its profile's load */
    sbd_job_finish_unrun(job, SBP_STATUS_CANCELLED, "cancelled before it started");
  }
}

/* An answer decided before anything ran (toolchain_missing, unsupported). */
static void reply_unrun(sbd_conn *c, sbp_request *req, const char *status, const char *msg) {
  json_object *resp = sbp_exec_response_new(req->id);
  if (resp) {
    sbp_exec_response_set_status(resp, status);
    json_object_object_add(resp, "error", json_object_new_string(msg));
  }
  sbd_count_status(c->srv, status);
  reply(c, resp);
}

/* Toolchain form: expand into steps. -1 when the job was answered (and freed). */
/* The request's compile_args after the compile step's own arguments (they
 * are part of its argv, so of its cache key). -1: no compile step (or no
 * memory). */
static int add_compile_args(sbt_plan *plan, char *const *extra) {
  sbt_step *st = &plan->steps[0];
  if (!plan->n_steps || !st->is_compile) return -1;
  size_t n = 0, k = 0;
  while (st->argv[n]) n++;
  while (extra[k]) k++;
  char **v = realloc(st->argv, (n + k + 1) * sizeof *v);
  if (!v) return -1;
  st->argv = v;
  bool ok = true;
  for (size_t i = 0; i < k; i++) ok &= (v[n + i] = strdup(extra[i])) != NULL;
  v[n + k] = NULL;
  if (!ok) {
    for (size_t i = 0; i < k; i++) free(v[n + i]);
    v[n] = NULL;
  }
  return ok ? 0 : -1;
}

/* Where a person finds the names, and a program too. */
#define SBD_TOOLCHAINS_HINT "run surgebox toolchains for the installed ones; protocol: a toolchains request"

static int plan_toolchain_job(sbd_conn *c, sbd_job *job, const sbt_registry *reg) {
  sbd_server *srv = c->srv;
  sbp_request *req = job->req;
  const sbp_exec *ex = &req->exec;
  char msg[SBT_ERR_MAX];
  const sbt_toolchain *tc = reg ? sbt_find(reg, ex->toolchain) : NULL;
  if (!tc) {
    const sbt_def *fam = reg ? sbt_family_of(reg, ex->toolchain) : NULL;
    char prof[SBF_NAME_MAX + 1];
    if (fam && sbd_profile_offering(srv, ex->toolchain, ex->profile, prof, sizeof prof) == 0) {
      /* installed in a profile here: using it beats installing (or creating it again) */
      snprintf(msg, sizeof msg, "%s is not installed %s but profile %s has it: add --profile %s", ex->toolchain,
               job->root ? "in this profile" : "on the host", prof, prof);
      reply_unrun(c, req, SBP_STATUS_TOOLCHAIN_MISSING, msg);
    } else if (fam) {
      snprintf(msg, sizeof msg, "%s is not installed here; install: %s", ex->toolchain,
               fam->install ? fam->install : "(no hint in its toolchain file)");
      reply_unrun(c, req, SBP_STATUS_TOOLCHAIN_MISSING, msg);
    } else if (!reg) {
      reply(c, sbp_error_response(req->id, SBP_E_UNKNOWN_TOOLCHAIN, "no toolchains loaded: %s", srv->toolchain_error));
    } else {
      const char *near = sbt_nearest_name(reg, ex->toolchain);
      if (near)
        reply(c, sbp_error_response(req->id, SBP_E_UNKNOWN_TOOLCHAIN,
                                    "no toolchain named \"%s\": did you mean \"%s\"? (" SBD_TOOLCHAINS_HINT ")",
                                    ex->toolchain, near));
      else
        reply(c, sbp_error_response(req->id, SBP_E_UNKNOWN_TOOLCHAIN, "no toolchain named \"%s\" (" SBD_TOOLCHAINS_HINT ")",
                                    ex->toolchain));
    }
    sbd_job_free(job);
    return -1;
  }
  sbt_file *files = calloc(ex->n_files + 1, sizeof *files);
  for (size_t i = 0; files && i < ex->n_files; i++)
    files[i] = (sbt_file){ex->files[i].path, ex->files[i].data, ex->files[i].len};
  sbt_plan_result pr = files ? sbt_plan_make(tc, ex->options, files, ex->n_files, (const char *const *)ex->args,
                                              &ex->limits, &job->plan, msg)
                             : SBT_NOMEM;
  free(files);
  switch (pr) {
  case SBT_OK:
    job->has_plan = true;
    if (sbd_trace_check(ex, reg, tc, msg, sizeof msg) < 0) {
      reply(c, sbp_error_response(req->id, SBP_E_BAD_REQUEST, "%s", msg));
      break;
    }
    if (job->plan.n_steps && job->plan.steps[0].is_compile) /* compile_limits over the toolchain's own */
      sbt_limits_resolve(&job->plan.steps[0].limits, &tc->def->compile_limits, &ex->compile_limits);
    if (ex->n_compile_args && add_compile_args(&job->plan, ex->compile_args) < 0) {
      reply(c, sbp_error_response(req->id, SBP_E_BAD_REQUEST, "compile_args: %s has no compile step", tc->name));
      break;
    }
    if (ex->trace.on && sbt_trace_gdb_language(tc) && sbt_trace_plan_debug(&job->plan) < 0) {
      reply(c, sbp_error_response(req->id, SBP_E_INTERNAL, "out of memory"));
      break;
    }
    job->tc_mtime_ns = tc->bin_mtime_ns;
    job->tc_size = tc->bin_size;
    if (job->root) /* a profile's mounts name paths inside its root */
      for (size_t m = 0; m < job->plan.n_mounts; m++) {
        char *src = malloc(strlen(job->root) + strlen(job->plan.mounts[m].source) + 1);
        if (!src) continue;
        strcpy(src, job->root);
        strcat(src, job->plan.mounts[m].source);
        free((char *)job->plan.mounts[m].source);
        job->plan.mounts[m].source = src;
      }
    return 0;
  case SBT_UNSUPPORTED:
    reply_unrun(c, req, SBP_STATUS_UNSUPPORTED, msg);
    break;
  case SBT_BAD_OPTION:
  case SBT_NO_SOURCE:
    reply(c, sbp_error_response(req->id, SBP_E_BAD_REQUEST, "%s", msg));
    break;
  case SBT_NOMEM:
    reply(c, sbp_error_response(req->id, SBP_E_INTERNAL, "out of memory"));
    break;
  }
  sbd_job_free(job);
  return -1;
}

/* The job with its profile known (prof NULL: the host; perr: the load's
 * error): planned, checked and queued, or answered. */
static void exec_in_profile(sbd_conn *c, sbd_job *job, sbd_profile *prof, const char *perr) {
  sbd_server *srv = c->srv;
  sbp_request *req = job->req;
  if (perr) {
    reply(c, sbp_error_response(req->id, SBP_E_BAD_REQUEST, "%s", perr));
    sbd_job_free(job);
    return;
  }
  job->profile = sbd_profile_identity(prof);
  if (sbd_profile_root(prof)) job->root = strdup(sbd_profile_root(prof));
  if (req->exec.toolchain && plan_toolchain_job(c, job, sbd_profile_registry(srv, prof)) < 0) return;
  char tmsg[SBT_ERR_MAX];
  if (!req->exec.toolchain && sbd_trace_check(&req->exec, sbd_profile_registry(srv, prof), NULL, tmsg, sizeof tmsg) < 0) {
    reply(c, sbp_error_response(req->id, SBP_E_BAD_REQUEST, "%s", tmsg));
    sbd_job_free(job);
    return;
  }
  if (sbd_sched_submit(srv, job) < 0) {
    srv->rejected_busy++;
    reply(c, sbp_error_response(req->id, SBP_E_BUSY, "queue full (%zu queued, %d running): retry later",
                                srv->queued, srv->running));
    sbd_job_free(job);
    return;
  }
  sbd_sched_pump(srv);
}

/* A parked job's profile load ended (or the daemon is shutting down): it
 * goes on as if the profile had been there, or gets the load's error. */
static void exec_resume(void *arg, sbd_profile *prof, const char *perr) {
  sbd_job *job = arg;
  sbd_conn *c = job->conn;
  sbd_conn_unlink_parked(c, job);
  c->n_parked--;
  job->parked = false; /* profiles.c already took it off the load's waiters */
  sbd_conn_ref(c);     /* an answer may end the job and, after EOF, the connection */
  if (c->srv->draining) sbd_job_finish_unrun(job, SBP_STATUS_CANCELLED, "the daemon is shutting down");
  else exec_in_profile(c, job, prof, perr);
  sbd_conn_maybe_finish(c);
  sbd_conn_unref(c);
}

static void do_exec(sbd_conn *c, sbp_request *req) {
  sbd_server *srv = c->srv;
  bool running;
  if (sbd_conn_find(c, req->id_key, &running)) {
    reply(c, sbp_error_response(req->id, SBP_E_BAD_REQUEST, "id %s is already in flight on this connection",
                                req->id_key));
    sbp_request_free(req);
    return;
  }
  if (srv->draining) {
    reply(c, sbp_error_response(req->id, SBP_E_BUSY, "the daemon is shutting down"));
    sbp_request_free(req);
    return;
  }
  sbd_job *job = sbd_job_new(srv, c, req);
  if (!job) {
    reply(c, sbp_error_response(req->id, SBP_E_INTERNAL, "out of memory"));
    sbp_request_free(req);
    return;
  }
  /* the root file system: the request's profile, else the daemon's default.
   * One not loaded yet is loaded on the thread pool while this job alone
   * waits (parked); the connection's other requests go on. */
  const char *pname = req->exec.profile ? req->exec.profile : srv->cfg->profile;
  char perr[512] = "";
  sbd_profile *prof = NULL;
  sbd_profile_state st = sbd_profile_want(srv, pname, (sbd_profile_wait){exec_resume, job}, &prof, perr, sizeof perr);
  if (st == SBD_PROFILE_LOADING) {
    job->parked = true;
    sbd_conn_link_parked(c, job);
    c->n_parked++;
    return;
  }
  exec_in_profile(c, job, prof, st == SBD_PROFILE_ERROR ? perr : NULL); /* prof NULL on an error */
}

/* The toolchains of a profile (NULL: the host's), or the load's error. */
static void toolchains_answer(sbd_conn *c, sbp_request *req, sbd_profile *prof, const char *perr) {
  if (perr) {
    reply(c, sbp_error_response(req->id, SBP_E_BAD_REQUEST, "%s", perr));
    return;
  }
  const sbt_registry *reg = sbd_profile_registry(c->srv, prof);
  json_object *resp = sbp_response_new(req->id, "toolchains");
  if (resp) {
    json_object_object_add(resp, "toolchains", reg ? sbt_list_json(reg) : json_object_new_array());
    json_object_object_add(resp, "profile", sbd_profile_identity(prof));
  }
  reply(c, resp);
}

/* A toolchains request waiting for its profile's load: it holds its
 * connection (a closed one drops the answer, conn.c). */
typedef struct {
  sbd_conn *c;
  sbp_request *req;
} toolchains_wait;

static void toolchains_resume(void *arg, sbd_profile *prof, const char *perr) {
  toolchains_wait *w = arg;
  sbd_conn *c = w->c;
  c->n_parked--;
  if (c->srv->draining) reply(c, sbp_error_response(w->req->id, SBP_E_BUSY, "the daemon is shutting down"));
  else toolchains_answer(c, w->req, prof, perr);
  sbp_request_free(w->req);
  free(w);
  sbd_conn_maybe_finish(c);
  sbd_conn_unref(c);
}

/* 0: answered (or parked); req is the caller's to free unless parked (1). */
static int do_toolchains(sbd_conn *c, sbp_request *req) {
  char perr[512] = "";
  sbd_profile *prof = NULL;
  toolchains_wait *w = calloc(1, sizeof *w);
  if (!w) {
    reply(c, sbp_error_response(req->id, SBP_E_INTERNAL, "out of memory"));
    return 0;
  }
  *w = (toolchains_wait){c, req};
  sbd_profile_state st =
      sbd_profile_want(c->srv, req->exec.profile, (sbd_profile_wait){toolchains_resume, w}, &prof, perr, sizeof perr);
  if (st == SBD_PROFILE_LOADING) {
    sbd_conn_ref(c);
    c->n_parked++;
    return 1;
  }
  toolchains_answer(c, req, prof, st == SBD_PROFILE_ERROR ? perr : NULL); /* prof NULL on an error */
  free(w);
  return 0;
}

void sbd_dispatch(sbd_conn *c, sbp_request *req) {
  json_object *resp;
  switch (req->type) {
  case SBP_REQ_EXEC:
    do_exec(c, req);
    return; /* the job owns req now (or it was freed) */
  case SBP_REQ_CANCEL:
    do_cancel(c, req);
    break;
  case SBP_REQ_PING:
    resp = sbp_response_new(req->id, "ping");
    if (resp) json_object_object_add(resp, "version", json_object_new_string(SURGEBOX_VERSION));
    reply(c, resp);
    break;
  case SBP_REQ_STATUS:
    reply(c, sbd_status_json(c->srv, req->id));
    break;
  case SBP_REQ_METRICS: {
    char *text = sbd_metrics_text(c->srv);
    resp = text ? sbp_response_new(req->id, "metrics") : sbp_error_response(req->id, SBP_E_INTERNAL, "out of memory");
    if (resp && text) json_object_object_add(resp, "text", json_object_new_string(text));
    free(text);
    reply(c, resp);
    break;
  }
  case SBP_REQ_TOOLCHAINS: /* of a profile, when the request names one */
    if (do_toolchains(c, req)) return; /* waits for the profile's load: owns req */
    break;
  default:
    reply(c, sbp_error_response(req->id, SBP_E_UNKNOWN_TYPE, "unknown request type"));
  }
  sbp_request_free(req);
}
