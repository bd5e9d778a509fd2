/* A request handed to the daemon, and its answer coming back. The front
 * bounds what it hands over (max_queue unanswered, else 503 with
 * Retry-After), and a /run_code job that has not started within its budget
 * (compile + run timeouts + start_margin) is withdrawn with 504: verl
 * retries both, and neither is ever a verdict. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static void req_free_closed(uv_handle_t *h) {
  sbh_req *r = h->data;
  if (r->ctx) json_object_put(r->ctx);
  if (r->answer) json_object_put(r->answer);
  free(r);
}

static void req_free(sbh_req *r) {
  r->srv->in_flight--;
  uv_close((uv_handle_t *)&r->start_timer, req_free_closed);
}

/* The native answer to the client, in the endpoint's words. */
static void deliver(sbh_req *r, json_object *native) {
  sbh_conn *c = r->conn;
  if (r->timer_on) uv_timer_stop(&r->start_timer);
  r->answered = true;
  if (c) {
    c->req = NULL;
    int status = 200;
    json_object *a = r->make(r->srv, native, r->ctx, &status);
    if (status == 503 && native) r->srv->counters[SBH_C_QUEUE_FULL]++; /* the daemon busy */
    sbh_send_json(c, status, a, status == 503 ? "Retry-After: 1\r\n" : NULL);
  }
  req_free(r);
}

static void on_answer(void *arg, json_object *native) {
  sbh_req *r = arg;
  if (r->in_submit) { /* answered at once: delivered when submit returns */
    r->answer = native;
    r->answered = true;
    return;
  }
  deliver(r, native);
  if (native) json_object_put(native);
}

static void on_start_timeout(uv_timer_t *t) {
  sbh_req *r = t->data;
  r->timer_on = false;
  if (r->answered || !r->srv->d.withdraw(r->srv->d.arg, r->ticket)) return; /* it started: its limits apply */
  r->srv->counters[SBH_C_START_TIMEOUT]++;
  sbh_conn *c = r->conn;
  if (c) {
    c->req = NULL;
    sbh_send_error(c, 504, "the job could not start within its budget (compile_timeout + run_timeout + %gs): retry",
                   r->srv->opt.limits.start_margin_s);
  }
  r->answered = true;
  req_free(r);
}

void sbh_req_submit(sbh_conn *c, json_object *native, sbh_answer_make make, json_object *ctx, double budget_s) {
  sbh_server *s = c->srv;
  if (s->in_flight >= s->opt.limits.max_queue) {
    s->counters[SBH_C_QUEUE_FULL]++;
    if (ctx) json_object_put(ctx);
    sbh_send_error(c, 503, "%zu requests are waiting for a sandbox (the front's max_queue): retry later",
                   s->in_flight);
    return;
  }
  sbh_req *r = calloc(1, sizeof *r);
  if (!r) {
    if (ctx) json_object_put(ctx);
    sbh_send_error(c, 500, "out of memory");
    return;
  }
  r->srv = s;
  r->conn = c;
  r->make = make;
  r->ctx = ctx;
  uv_timer_init(s->loop, &r->start_timer);
  r->start_timer.data = r;
  s->in_flight++;
  c->req = r;
  r->in_submit = true;
  r->ticket = s->d.submit(s->d.arg, native, on_answer, r);
  r->in_submit = false;
  if (r->answered) {
    json_object *a = r->answer;
    r->answer = NULL;
    r->answered = false;
    deliver(r, a);
    if (a) json_object_put(a);
    return;
  }
  if (budget_s > 0) {
    r->timer_on = true;
    uv_timer_start(&r->start_timer, on_start_timeout, (uint64_t)(budget_s * 1000) + 1, 0);
  }
}

void sbh_req_orphan(sbh_req *r) {
  r->conn = NULL;
  if (!r->answered) r->srv->d.cancel(r->srv->d.arg, r->ticket); /* its answer comes, to nobody */
}
