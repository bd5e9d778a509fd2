/* An exec job: its workspace, its steps one after another (a later step runs
 * only when the earlier ones ended "ok"), and its response. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t now_ns(void) { return uv_hrtime(); }

sbd_job *sbd_job_new(sbd_server *srv, sbd_conn *conn, sbp_request *req) {
  sbd_job *job = calloc(1, sizeof *job);
  if (!job) return NULL;
  job->srv = srv;
  job->conn = conn;
  job->req = req;
  job->slot = -1;
  job->t_queued = now_ns();
  sbd_conn_ref(conn);
  return job;
}

void sbd_job_free(sbd_job *job) {
  if (!job) return;
  if (job->resp) json_object_put(job->resp);
  sb_workspace_destroy(job->ws);
  sbp_request_free(job->req);
  if (job->conn) sbd_conn_unref(job->conn);
  free(job);
}

/* The daemon's defaults, overridden by what the step asked for. A wall
 * limit alone also raises the CPU limit: "time_s: 120" means the program may
 * compute for two minutes. */
static void step_limits(const sbp_step_limits *in, sb_limits *out) {
  sb_limits_default(out);
  if (in->has_time_s) {
    out->wall_time_s = in->time_s;
    out->cpu_time_s = in->time_s;
  }
  if (in->has_cpu_time_s) out->cpu_time_s = in->cpu_time_s;
  if (in->has_memory_mib) out->memory_mib = in->memory_mib;
  if (in->has_pids) out->pids = in->pids;
  if (in->has_output_bytes) out->output_bytes = in->output_bytes;
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
                           json_object_new_double((double)(job->t_started - job->t_queued) / 1e9));
  }
  sbd_count_status(srv, final);
  sbd_log_job(srv, job, final);
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
  sbd_server_job_ended(srv);
}

static void run_step(sbd_job *job);

void sbd_job_step_done(sbd_job *job, sb_result *r);
void sbd_job_step_done(sbd_job *job, sb_result *r) {
  const sbp_step *st = &job->req->exec.steps[job->step];
  json_object *doc = sb_result_to_json(r, job->srv->rt);
  if (job->cancelled && r->limit_hit && strcmp(r->limit_hit, "cancel") == 0)
    json_object_object_add(doc, "error", json_object_new_string(job->cancel_why));
  job->cpu_s += r->cpu_time_s;
  job->wall_s += r->wall_time_s;
  bool ok = r->status == SB_OK;
  sb_result_free(r);
  sbp_exec_response_add_step(job->resp, st->name, doc);
  job->step++;
  if (job->cancelled) {
    send_and_end(job, SBP_STATUS_CANCELLED);
    return;
  }
  if (ok && job->step < job->req->exec.n_steps) {
    run_step(job);
    return;
  }
  send_and_end(job, NULL);
}

static void run_step(sbd_job *job) {
  const sbp_step *st = &job->req->exec.steps[job->step];
  sb_spec spec;
  sb_spec_init(&spec);
  spec.argv = (const char *const *)st->argv;
  spec.envp = (const char *const *)st->env;
  spec.workspace = job->ws;
  if (st->has_stdin) {
    spec.stdin_data = st->stdin_data;
    spec.stdin_len = st->stdin_len;
  }
  spec.merge_output = st->merge_output;
  spec.netns_slot = job->slot;
  step_limits(&st->limits, &spec.limits);
  char err[SB_ERR_MAX] = "";
  if (sbd_step_start(job, &spec, err) < 0) {
    /* The sandbox could not start: a result document that says why. */
    sb_result r;
    memset(&r, 0, sizeof r);
    r.status = SB_INTERNAL_ERROR;
    r.exit_code = -1;
    r.limits = spec.limits;
    r.cgroup = sb_runtime_cgroup(job->srv->rt);
    snprintf(r.error, sizeof r.error, "%s", err);
    sbd_log(job->srv, "error", "job %s: %s", job->req->id_key, err);
    sbd_job_step_done(job, &r);
  }
}

void sbd_job_start(sbd_job *job, int slot) {
  sbd_server *srv = job->srv;
  job->slot = slot;
  job->t_started = now_ns();
  sbd_conn_link_running(job->conn, job);
  job->resp = sbp_exec_response_new(job->req->id);
  char err[SB_ERR_MAX] = "";
  int rc = job->resp ? sb_workspace_create(srv->rt, 512, &job->ws, err) : -1;
  const sbp_exec *ex = &job->req->exec;
  for (size_t i = 0; rc == 0 && i < ex->n_files; i++)
    rc = sb_workspace_write(job->ws, ex->files[i].path, ex->files[i].data, ex->files[i].len,
                            ex->files[i].has_mode ? ex->files[i].mode : 0644, err);
  if (rc < 0) {
    if (!job->resp) job->resp = sbp_exec_response_new(job->req->id);
    if (job->resp) json_object_object_add(job->resp, "error", json_object_new_string(err[0] ? err : "out of memory"));
    sbd_log(srv, "error", "job %s: %s", job->req->id_key, err);
    send_and_end(job, SBP_STATUS_INTERNAL_ERROR);
    return;
  }
  run_step(job);
}

void sbd_job_cancel_running(sbd_job *job, const char *why) {
  if (!job->cancelled) snprintf(job->cancel_why, sizeof job->cancel_why, "%s", why);
  job->cancelled = true;
  sbd_step_kill(job->run, "cancel");
}

void sbd_job_finish_unrun(sbd_job *job, const char *status, const char *why) {
  sbd_server *srv = job->srv;
  job->t_started = now_ns();
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
