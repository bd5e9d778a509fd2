/* A client connection: peer check, reading request lines, writing
 * responses, and what happens to its jobs when it goes away. What a request
 * line becomes and what ending a job means are the server's
 * (srv->conn_calls): this file names nothing of dispatch.c or job.c. */
#include "internal.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef struct {
  uv_write_t req;
  char *line;
} write_req;

void sbd_conn_ref(sbd_conn *c) { c->refs++; }

void sbd_conn_unref(sbd_conn *c) {
  if (--c->refs > 0) return;
  sbd_server *srv = c->srv;
  if (c->prev) c->prev->next = c->next;
  else srv->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  if (srv->rr_last == c) srv->rr_last = c->prev;
  sbp_linesplit_free(&c->lines);
  free(c);
}

static void on_closed(uv_handle_t *h) { sbd_conn_unref(h->data); }

static void on_shutdown(uv_shutdown_t *req, int status) {
  (void)status;
  sbd_conn *c = req->data;
  uv_close((uv_handle_t *)&c->pipe, on_closed);
}

/* Close after every queued response is written. */
static void close_gracefully(sbd_conn *c) {
  if (c->closing) return;
  c->closing = true;
  uv_read_stop((uv_stream_t *)&c->pipe);
  c->shutdown.data = c;
  if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->pipe, on_shutdown) < 0)
    uv_close((uv_handle_t *)&c->pipe, on_closed);
}

void sbd_conn_maybe_finish(sbd_conn *c) {
  if (c->read_eof && !c->queued_head && !c->running && !c->n_parked) close_gracefully(c);
}

/* A client that shut down only its sending side (`socat`, `nc -N`) still
 * waits for answers; one that closed the socket is gone. The difference is
 * POLLHUP, which the server's timer checks for connections with work left. */
bool sbd_conn_hung_up(sbd_conn *c) {
  uv_os_fd_t fd;
  if (c->sink || c->closing || uv_fileno((uv_handle_t *)&c->pipe, &fd) < 0) return false;
  struct pollfd p = {.fd = fd, .events = 0};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

void sbd_conn_close(sbd_conn *c) {
  if (c->closing) return;
  c->closing = true;
  /* Queued jobs are dropped, running ones killed: nobody will read them. */
  while (c->queued_head) {
    sbd_job *j = c->queued_head;
    sbd_conn_unlink_queued(c, j);
    c->srv->queued--;
    sbd_count_status(c->srv, SBP_STATUS_CANCELLED);
    sbd_log_job(c->srv, j, "dropped (client gone)");
    c->srv->conn_calls.free_job(j);
  }
  while (c->parked) { /* waiting for a profile's load: out of its waiters too (free_job) */
    sbd_job *j = c->parked;
    sbd_conn_unlink_parked(c, j);
    c->n_parked--;
    sbd_count_status(c->srv, SBP_STATUS_CANCELLED);
    sbd_log_job(c->srv, j, "dropped (client gone)");
    c->srv->conn_calls.free_job(j);
  }
  for (sbd_job *j = c->running, *next; j; j = next) {
    next = j->next; /* read before the cancel, in case it ends the job */
    c->srv->conn_calls.cancel_job(j, "cancelled: the client disconnected");
  }
  if (c->sink) { /* no socket: the last reference goes with the server */
    sbd_conn_unref(c);
    return;
  }
  uv_read_stop((uv_stream_t *)&c->pipe);
  uv_close((uv_handle_t *)&c->pipe, on_closed);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);
static void alloc_buf(uv_handle_t *h, size_t suggested, uv_buf_t *buf);

/* A client that sends work but does not read its answers would make the
 * daemon hold every answer in memory (each up to two 8 MiB streams, JSON
 * escaped). Above SBD_BACKLOG_HIGH unwritten bytes it gets no more reading
 * and none of its queued jobs start (sched.c); below SBD_BACKLOG_LOW both
 * resume. Other clients are not affected. */
static void update_backlog(sbd_conn *c) {
  size_t pending = c->pipe.write_queue_size;
  if (!c->backlogged && pending > SBD_BACKLOG_HIGH && !c->closing) {
    c->backlogged = true;
    if (!c->read_eof) uv_read_stop((uv_stream_t *)&c->pipe);
    sbd_log(c->srv, "warn", "connection %llu: %zu bytes of answers unread; pausing it",
            (unsigned long long)c->serial, pending);
  } else if (c->backlogged && pending < SBD_BACKLOG_LOW) {
    c->backlogged = false;
    if (c->closing) return;
    if (!c->read_eof) uv_read_start((uv_stream_t *)&c->pipe, alloc_buf, on_read);
    sbd_sched_pump(c->srv);
  }
}

static void on_written(uv_write_t *req, int status) {
  write_req *w = (write_req *)req;
  sbd_conn *c = req->data;
  free(w->line);
  free(w);
  if (status < 0) sbd_conn_close(c); /* client vanished: its jobs go too */
  else update_backlog(c);
  sbd_conn_unref(c);
}

void sbd_conn_send(sbd_conn *c, json_object *resp) {
  if (!resp) return;
  if (c->sink) {
    c->sink(c, resp);
    return;
  }
  size_t len = 0;
  char *line = c->closing ? NULL : sbp_encode_line(resp, &len);
  json_object_put(resp);
  if (!line) return;
  write_req *w = calloc(1, sizeof *w);
  if (!w) {
    free(line);
    return;
  }
  w->line = line;
  w->req.data = c;
  uv_buf_t buf = uv_buf_init(line, (unsigned)len);
  sbd_conn_ref(c);
  if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &buf, 1, on_written) < 0) {
    free(line);
    free(w);
    sbd_conn_unref(c);
    sbd_conn_close(c);
    return;
  }
  update_backlog(c);
}

static int on_line(void *ctx, sbp_line_event ev, const char *line, size_t len) {
  sbd_conn *c = ctx;
  if (c->closing) return 1;
  if (ev == SBP_LINE_TOO_LARGE) {
    sbd_conn_send(c, sbp_too_large_response(c->srv->cfg->max_line));
    return 0;
  }
  sbp_limits lim;
  sbp_limits_default(&lim);
  lim.max_line_bytes = c->srv->cfg->max_line;
  sbp_request *req = NULL;
  json_object *err = NULL;
  if (sbp_request_parse(line, len, &lim, &req, &err) < 0) {
    sbd_conn_send(c, err);
    return 0;
  }
  c->srv->conn_calls.request(c, req);
  return c->closing ? 1 : 0;
}

static void alloc_buf(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)h;
  (void)suggested;
  static char chunk[65536]; /* one loop thread; the splitter copies what it keeps */
  *buf = uv_buf_init(chunk, sizeof chunk);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  sbd_conn *c = s->data;
  if (n > 0) {
    if (sbp_linesplit_feed(&c->lines, buf->base, (size_t)n, on_line, c) == -ENOMEM)
      sbd_conn_send(c, sbp_error_response(NULL, SBP_E_INTERNAL, "out of memory reading a request"));
    return;
  }
  if (n == UV_EOF) { /* a last line without "\n" still counts */
    sbp_linesplit_finish(&c->lines, on_line, c);
    c->read_eof = true;
    uv_read_stop(s);
    if (sbd_conn_hung_up(c)) sbd_conn_close(c);
    else sbd_conn_maybe_finish(c);
  } else if (n < 0) {
    sbd_conn_close(c);
  }
}

void sbd_conn_accept(sbd_server *srv) {
  sbd_conn *c = calloc(1, sizeof *c);
  if (!c) return;
  c->srv = srv;
  c->refs = 1;
  c->serial = ++srv->conn_serial;
  sbp_linesplit_init(&c->lines, srv->cfg->max_line);
  uv_pipe_init(&srv->loop, &c->pipe, 0);
  c->pipe.data = c;
  c->next = srv->conns;
  if (srv->conns) srv->conns->prev = c;
  srv->conns = c;
  srv->connections_total++;
  if (uv_accept((uv_stream_t *)&srv->listener, (uv_stream_t *)&c->pipe) < 0) {
    sbd_conn_close(c);
    return;
  }
  uv_os_fd_t fd;
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (uv_fileno((uv_handle_t *)&c->pipe, &fd) < 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
    sbd_conn_close(c);
    return;
  }
  /* Unprivileged, the daemon is uid 0 of a user namespace of its own and the
   * kernel reports peers relative to it: our own user as 0, everyone else
   * as the overflow uid. Judge (and name) the host's ids; an unmapped one
   * is never allowed, whatever the allow lists say about 65534. */
  bool uid_known = sb_runtime_host_uid(srv->rt, cred.uid, &c->uid);
  bool gid_known = sb_runtime_host_gid(srv->rt, cred.gid, &c->gid);
  c->pid = cred.pid;
  if (!uid_known || !sbd_peer_allowed(srv, c->uid, gid_known ? c->gid : (gid_t)-1, fd)) {
    char who[64], why[320];
    if (uid_known) snprintf(who, sizeof who, "uid %u", (unsigned)c->uid);
    else snprintf(who, sizeof who, "a uid other than the daemon's own");
    sbd_log(srv, "warn", "refused connection from %s (pid %d)", who, (int)cred.pid);
    sbd_peer_refusal(srv, uid_known, c->uid, why, sizeof why);
    sbd_conn_send(c, sbp_error_response(NULL, SBP_E_UNAUTHORIZED, "%s", why));
    close_gracefully(c);
    return;
  }
  uv_read_start((uv_stream_t *)&c->pipe, alloc_buf, on_read);
}

sbd_job *sbd_conn_find(sbd_conn *c, const char *id_key, bool *running) {
  for (sbd_job *j = c->running; j; j = j->next)
    if (strcmp(j->req->id_key, id_key) == 0) {
      *running = true;
      return j;
    }
  for (sbd_job *j = c->queued_head; j; j = j->next)
    if (strcmp(j->req->id_key, id_key) == 0) {
      *running = false;
      return j;
    }
  for (sbd_job *j = c->parked; j; j = j->next)
    if (strcmp(j->req->id_key, id_key) == 0) {
      *running = false;
      return j;
    }
  return NULL;
}

/* A connection's parked and running jobs are doubly linked lists, a job
 * at the head of one at a time. */
static void list_push(sbd_job **head, sbd_job *j) {
  j->prev = NULL;
  j->next = *head;
  if (*head) (*head)->prev = j;
  *head = j;
}

static void list_remove(sbd_job **head, sbd_job *j) {
  if (j->prev) j->prev->next = j->next;
  else *head = j->next;
  if (j->next) j->next->prev = j->prev;
  j->prev = j->next = NULL;
}

void sbd_conn_link_parked(sbd_conn *c, sbd_job *j) { list_push(&c->parked, j); }
void sbd_conn_unlink_parked(sbd_conn *c, sbd_job *j) { list_remove(&c->parked, j); }
void sbd_conn_link_running(sbd_conn *c, sbd_job *j) { list_push(&c->running, j); }
void sbd_conn_unlink_running(sbd_conn *c, sbd_job *j) { list_remove(&c->running, j); }
