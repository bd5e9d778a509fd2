/* What each request type does. */
#include "internal.h"

#include <stdio.h>
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
    sbd_conn_unlink_queued(c, job);
    c->srv->queued--;
    sbd_job_finish_unrun(job, SBP_STATUS_CANCELLED, "cancelled before it started");
  }
}

static void do_exec(sbd_conn *c, sbp_request *req) {
  sbd_server *srv = c->srv;
  if (req->exec.toolchain) {
    reply(c, sbp_error_response(req->id, SBP_E_UNKNOWN_TOOLCHAIN,
                                "no toolchain named \"%s\" (this daemon has no toolchain registry yet: send steps)",
                                req->exec.toolchain));
    sbp_request_free(req);
    return;
  }
  /* Profiles (other root file systems) are not built yet: only the host. */
  if (req->exec.profile && strcmp(req->exec.profile, "host") != 0) {
    reply(c, sbp_error_response(req->id, SBP_E_BAD_REQUEST, "unknown profile \"%s\" (this daemon has: host)",
                                req->exec.profile));
    sbp_request_free(req);
    return;
  }
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
  if (sbd_sched_submit(srv, job) < 0) {
    srv->rejected_busy++;
    reply(c, sbp_error_response(req->id, SBP_E_BUSY, "queue full (%zu queued, %d running): retry later",
                                srv->queued, srv->running));
    sbd_job_free(job);
    return;
  }
  sbd_sched_pump(srv);
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
  case SBP_REQ_TOOLCHAINS:
    resp = sbp_response_new(req->id, "toolchains");
    if (resp) json_object_object_add(resp, "toolchains", json_object_new_array());
    reply(c, resp);
    break;
  default:
    reply(c, sbp_error_response(req->id, SBP_E_UNKNOWN_TYPE, "unknown request type"));
  }
  sbp_request_free(req);
}
