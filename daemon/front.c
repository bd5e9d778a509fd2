/* The HTTP front (http/) in the daemon: it is handed {submit, withdraw,
 * cancel, metrics} and their argument, and knows nothing else of the
 * daemon; the daemon knows nothing of HTTP. Every HTTP request is one exec
 * on one socketless connection (conn.c's sink), so it is read and checked
 * exactly as a line of the Unix socket, and the fair queue (sched.c) gives
 * HTTP as a whole one share beside each Unix-socket client: an HTTP flood
 * neither starves them nor runs more jobs than slots. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct sbd_ticket {
  uint64_t id;
  sbh_answer_fn answer;
  void *arg;
  struct sbd_ticket *next;
} sbd_ticket;

static sbd_ticket *ticket_take(sbd_server *srv, uint64_t id) {
  for (sbd_ticket **p = &srv->tickets; *p; p = &(*p)->next)
    if ((*p)->id == id) {
      sbd_ticket *t = *p;
      *p = t->next;
      return t;
    }
  return NULL;
}

static void front_sink(sbd_conn *c, json_object *resp) {
  sbd_server *srv = c->sink_arg;
  json_object *id = NULL;
  json_object_object_get_ex(resp, "id", &id);
  sbd_ticket *t = id && json_object_is_type(id, json_type_int) ? ticket_take(srv, (uint64_t)json_object_get_int64(id)) : NULL;
  if (!t) { /* withdrawn, or an answer to nobody */
    json_object_put(resp);
    return;
  }
  t->answer(t->arg, resp);
  free(t);
}

static uint64_t front_submit(void *arg, json_object *req, sbh_answer_fn answer, void *cb_arg) {
  sbd_server *srv = arg;
  if (!srv->front) { /* closed (sbd_front_stop): the daemon is stopping */
    answer(cb_arg, sbp_error_response(NULL, SBP_E_INTERNAL, "the daemon is shutting down"));
    return 0;
  }
  sbd_ticket *t = calloc(1, sizeof *t);
  if (!t) {
    answer(cb_arg, sbp_error_response(NULL, SBP_E_INTERNAL, "out of memory"));
    return 0;
  }
  t->id = ++srv->next_ticket;
  t->answer = answer;
  t->arg = cb_arg;
  t->next = srv->tickets;
  srv->tickets = t;
  json_object_object_add(req, "id", json_object_new_int64((int64_t)t->id));
  size_t len = 0;
  const char *line = json_object_to_json_string_length(req, JSON_C_TO_STRING_PLAIN, &len);
  sbp_limits lim;
  sbp_limits_default(&lim);
  lim.max_line_bytes = srv->cfg->max_line;
  sbp_request *r = NULL;
  json_object *err = NULL;
  uint64_t id = t->id; /* the send or dispatch below may answer (and free t) at once */
  if (sbp_request_parse(line, len, &lim, &r, &err) < 0) {
    json_object_object_add(err, "id", json_object_new_int64((int64_t)id)); /* a too-long line has none */
    sbd_conn_send(srv->front, err);
    return id;
  }
  sbd_dispatch(srv->front, r);
  return id;
}

/* The front's job of a ticket (NULL: none); *running whether it started. */
static sbd_job *ticket_job(sbd_server *srv, uint64_t ticket, bool *running) {
  char key[32];
  snprintf(key, sizeof key, "%llu", (unsigned long long)ticket);
  *running = false;
  return srv->front ? sbd_conn_find(srv->front, key, running) : NULL;
}

static bool front_withdraw(void *arg, uint64_t ticket) {
  sbd_server *srv = arg;
  bool running;
  sbd_job *job = ticket_job(srv, ticket, &running);
  if (!job || running) return false;
  sbd_job_unqueue(job);
  free(ticket_take(srv, ticket));
  sbd_log_job(srv, job, "withdrawn (not started within its budget)");
  sbd_job_free(job);
  return true;
}

static void front_cancel(void *arg, uint64_t ticket) {
  bool running;
  sbd_job *job = ticket_job(arg, ticket, &running);
  if (!job) return;
  if (running) {
    sbd_job_cancel_running(job, "cancelled: the HTTP client went away");
  } else {
    sbd_job_unqueue(job);
    sbd_job_finish_unrun(job, SBP_STATUS_CANCELLED, "the HTTP client went away before it started");
  }
}

static char *front_metrics(void *arg) { return sbd_metrics_text(arg); }

/* The front's metric families, for metrics.c (srv->http_metrics). */
static int front_families(sbd_server *srv, char **buf, size_t *len) { return sbh_metrics_append(srv->http, buf, len); }

int sbd_front_start(sbd_server *srv) {
  if (!srv->cfg->http.n_listen) return 0;
  sbd_conn *c = calloc(1, sizeof *c);
  if (!c) return -1;
  c->srv = srv;
  c->refs = 1;
  c->serial = ++srv->conn_serial;
  c->uid = sb_host_euid();
  c->gid = getegid();
  c->sink = front_sink;
  c->sink_arg = srv;
  c->next = srv->conns;
  if (srv->conns) srv->conns->prev = c;
  srv->conns = c;
  srv->front = c;
  srv->http_metrics = front_families;
  sbh_daemon d = {.arg = srv, .submit = front_submit, .withdraw = front_withdraw, .cancel = front_cancel,
                  .metrics = front_metrics};
  char err[SBH_ERR_MAX];
  if (sbh_start(&srv->http, &srv->loop, &srv->cfg->http, &d, err, sizeof err) < 0) {
    fprintf(stderr, "surgeboxd: %s\n", err);
    return -1;
  }
  sbd_log(srv, "info", "HTTP on %s (languages from %s%s)", sbh_bound(srv->http),
          srv->cfg->http.languages_file ? srv->cfg->http.languages_file : "the default languages.json",
          srv->cfg->http.token_file ? ", bearer token required" : "");
  return 0;
}

void sbd_front_drain(sbd_server *srv) { sbh_drain(srv->http); }

/* Its HTTP connections closed (their requests cancelled), then its
 * socketless connection: srv->front is NULL from here on, so nothing
 * reaches the connection after it is freed (it goes with its last job). */
void sbd_front_stop(sbd_server *srv) {
  sbh_stop(srv->http);
  sbd_conn *c = srv->front;
  srv->front = NULL;
  if (c) sbd_conn_close(c);
}

void sbd_front_free(sbd_server *srv) {
  sbh_free(srv->http);
  srv->http = NULL;
  while (srv->tickets) free(ticket_take(srv, srv->tickets->id));
}
