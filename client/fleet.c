/* A fleet of daemons behind one client: fleet.h. */
#include "fleet.h"
#include "cleanup.h"
#include "answer_trim.h"

#include "client.h"
#include "clock.h"
#include "endpoints.h"
#include "http_transport.h"
#include "protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define BUSY_BACKOFF_S 0.1
#define POOL_MAX 64 /* idle keep-alive connections kept per HTTP daemon */
#define PROBE_MAX 65536 /* a Unix probe's answer (status) read up to this */

typedef struct {
  const sbc_endpoint *spec;
  bool up, refused;
  size_t outstanding, answered, taken_out;
  double queue_p99;  /* s, the daemon's p99 queue time as the latest probe read it */
  int fd;            /* Unix: the jobs' connection, or -1 */
  char *in, *out;    /* Unix: bytes received, bytes still to send */
  size_t in_len, in_cap, out_len, out_cap;
  int idle[POOL_MAX]; /* HTTP: keep-alive connections between requests */
  size_t n_idle;
  /* the probe in progress (pfd >= 0 or phttp), its deadline; the next one's time */
  int pfd;
  sbc_http_call *phttp;
  char *pbuf;        /* PROBE_MAX bytes: a status answer */
  size_t plen;
  double pdeadline, pnext;
} endpoint;

typedef struct {
  json_object *req;
  const char *id;    /* req's */
  int ep;            /* the daemon it was sent to, or -1 while it waits */
  int last_ep;       /* the daemon it last went to: a job sent again avoids it */
  int attempts, busy;
  double not_before, waiting_since;
  double limits_s, sent_at; /* its deadline: sent_at + limits_s + 2 x p99 + margin */
  sbc_http_call *http;
  char why[300];     /* the last failure, for fleet_unavailable */
} job;

struct sbc_fleet {
  sbc_endpoints eps;
  endpoint *e;
  sbc_fleet_opts o;
  job **jobs;
  size_t n_jobs, cap_jobs;
  json_object **done;
  char **done_line;  /* each answer's line as its daemon sent it, the fleet's keys spliced in (owned), or NULL */
  size_t *done_len;
  size_t n_done, cap_done;
  unsigned turn;
  char fatal[600];
  /* reused each turn (a client's CPU per job, bench/fleet_client_cpu.py) */
  bool trim;          /* answers parsed without what sbc_result never reads (answer_trim.h; sbc_fleet_trim) */
  sbc_trimmer parser; /* the answers' tokener and trimmed copy */
  struct pollfd *pfds;
  void **who;
  int *kind;
  size_t cap_poll;
};

static double backoff(int attempt) { /* 0.05 s doubling, at most 1 s, jittered (the Python client's) */
  double b = 0.05;
  for (int i = 0; i < attempt && b < 1; i++) b *= 2;
  if (b > 1) b = 1;
  return b * (0.5 + (double)rand() / RAND_MAX / 2);
}

static int unix_connect(const char *path) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof a.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(a.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) { /* a Unix connect never waits: EAGAIN = backlog full */
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

static int append(char **buf, size_t *len, size_t *cap, const char *data, size_t n) {
  if (*len + n > *cap) {
    size_t c = *cap ? *cap : 65536;
    while (c < *len + n) c *= 2;
    char *b = realloc(*buf, c);
    if (!b) return -1;
    *buf = b;
    *cap = c;
  }
  memcpy(*buf + *len, data, n);
  *len += n;
  return 0;
}

/* ---- HTTP connections kept alive between requests ---- */
static int pool_take(endpoint *e) { return e->n_idle ? e->idle[--e->n_idle] : -1; }

static void pool_put(endpoint *e, int fd) {
  if (fd < 0) return;
  if (e->n_idle < POOL_MAX) e->idle[e->n_idle++] = fd;
  else close(fd);
}

static void pool_close(endpoint *e) {
  while (e->n_idle) close(e->idle[--e->n_idle]);
}

/* ---- answers ---- */
static void push_done(sbc_fleet *f, json_object *resp, char *line, size_t len) {
  if (f->n_done == f->cap_done) {
    f->cap_done = f->cap_done ? f->cap_done * 2 : 64;
    f->done = realloc(f->done, f->cap_done * sizeof *f->done);
    f->done_line = realloc(f->done_line, f->cap_done * sizeof *f->done_line);
    f->done_len = realloc(f->done_len, f->cap_done * sizeof *f->done_len);
  }
  f->done[f->n_done] = resp;
  f->done_line[f->n_done] = line;
  f->done_len[f->n_done++] = len;
}

/* The line resp prints as once deliver added "daemon" and "attempts", made
 * from the bytes its daemon sent (json-c's print of the same object, the
 * same flags: sbp_encode_line) instead of printed again: those bytes without
 * their last "}", then ,"daemon":...,"attempts":N}. NULL when raw is not of
 * that shape ({"id":"<j's id>",...}, neither key there already): resp is
 * printed by whoever needs a line. */
static char *splice_line(const job *j, json_object *resp, const char *raw, size_t raw_len, json_object *daemon,
                         size_t *len) {
  size_t idlen = strlen(j->id);
  if (!raw || raw_len < idlen + 10 || raw[raw_len - 1] != '}' || memcmp(raw, "{\"id\":\"", 7) ||
      memcmp(raw + 7, j->id, idlen) || raw[7 + idlen] != '"' || raw[8 + idlen] != ',' ||
      json_object_object_get_ex(resp, "daemon", NULL) || json_object_object_get_ex(resp, "attempts", NULL))
    return NULL;
  const char *name = daemon ? json_object_to_json_string_ext(daemon, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) : "null";
  char attempts[48];
  int an = snprintf(attempts, sizeof attempts, ",\"attempts\":%d}", j->attempts);
  size_t nlen = strlen(name), total = raw_len - 1 + 10 + nlen + (size_t)an;
  char *line = malloc(total + 1);
  if (!line) return NULL;
  memcpy(line, raw, raw_len - 1);
  memcpy(line + raw_len - 1, ",\"daemon\":", 10);
  memcpy(line + raw_len - 1 + 10, name, nlen);
  memcpy(line + raw_len - 1 + 10 + nlen, attempts, (size_t)an + 1);
  *len = total;
  return line;
}

static void drop_job(sbc_fleet *f, job *j) {
  for (size_t i = 0; i < f->n_jobs; i++)
    if (f->jobs[i] == j) {
      f->jobs[i] = f->jobs[--f->n_jobs];
      break;
    }
  sbc_http_free(j->http);
  json_object_put(j->req);
  free(j);
}

/* The one place an answer leaves the fleet: the job is dropped with it, so
 * it cannot be delivered twice. raw: the answer's bytes as received (a
 * Unix-socket daemon's line), or NULL. */
static void deliver(sbc_fleet *f, job *j, json_object *resp, const char *daemon, const char *raw, size_t raw_len) {
  json_object *name = daemon ? json_object_new_string(daemon) : NULL;
  size_t len = 0;
  char *line = splice_line(j, resp, raw, raw_len, name, &len);
  json_object_object_add(resp, "id", json_object_new_string(j->id));
  json_object_object_add(resp, "daemon", name);
  json_object_object_add(resp, "attempts", json_object_new_int(j->attempts));
  push_done(f, resp, line, len);
  drop_job(f, j);
}

static void give_up(sbc_fleet *f, job *j) {
  char msg[512];
  snprintf(msg, sizeof msg, "no daemon of the fleet ran the job after %d attempt(s) (last: %s)", j->attempts,
           j->why[0] ? j->why : "no daemon was up");
  json_object *resp = json_object_new_object(), *e = json_object_new_object();
  json_object_object_add(resp, "type", json_object_new_string("error"));
  json_object_object_add(e, "code", json_object_new_string("fleet_unavailable"));
  json_object_object_add(e, "message", json_object_new_string(msg));
  json_object_object_add(resp, "error", e);
  deliver(f, j, resp, NULL, NULL, 0);
}

/* j's send failed or its daemon is gone: again elsewhere after a back-off, or given up */
static void requeue(sbc_fleet *f, job *j, const char *why, bool busy) {
  if (j->ep >= 0) f->e[j->ep].outstanding--;
  if (j->ep >= 0) j->last_ep = j->ep;
  snprintf(j->why, sizeof j->why, "%s: %s", j->ep >= 0 ? f->e[j->ep].spec->name : "?", why);
  j->ep = -1;
  sbc_http_free(j->http);
  j->http = NULL;
  double now = sbu_now_s();
  j->waiting_since = now;
  if (busy) { /* a daemon's full queue: alive, so not an attempt; the single-daemon pump's pause */
    j->attempts--;
    j->busy++;
    j->not_before = now + BUSY_BACKOFF_S;
    return;
  }
  if (j->attempts >= f->o.attempts) give_up(f, j);
  else j->not_before = now + backoff(j->attempts - 1);
}

/* ---- health ---- */
static void close_jobs_conn(endpoint *e) {
  if (e->fd >= 0) close(e->fd);
  e->fd = -1;
  e->in_len = e->out_len = 0;
}

static void take_out(sbc_fleet *f, int k, const char *why) {
  endpoint *e = &f->e[k];
  if (e->up) {
    e->up = false;
    e->taken_out++;
    fprintf(stderr, "%s: daemon %s taken out (%s); its jobs in flight run elsewhere, it is probed back in\n",
            f->o.label, e->spec->name, why);
  }
  /* its connections close before its jobs go elsewhere: no late answer from it */
  close_jobs_conn(e);
  pool_close(e);
  for (size_t i = f->n_jobs; i-- > 0;) {
    if (i >= f->n_jobs) continue; /* give_up may have shrunk the list */
    job *j = f->jobs[i];
    if (j->ep == k) requeue(f, j, why, false);
  }
}

static void bring_up(sbc_fleet *f, int k) {
  endpoint *e = &f->e[k];
  if (e->up || e->refused) return;
  e->up = true;
  fprintf(stderr, "%s: daemon %s answers again: back in\n", f->o.label, e->spec->name);
}

static void refused(sbc_fleet *f, int k, int status) {
  endpoint *e = &f->e[k];
  e->refused = true;
  e->up = false;
  snprintf(f->fatal, sizeof f->fatal,
           "daemon %s refused this client's token (HTTP %d): check the endpoint's token or token-file "
           "(the daemon's --http-token-file)", e->spec->name, status);
}

static void probe_end(endpoint *e) {
  if (e->pfd >= 0) close(e->pfd);
  e->pfd = -1;
  sbc_http_free(e->phttp);
  e->phttp = NULL;
  e->plen = 0;
}

static void probe_start(sbc_fleet *f, int k, double now) {
  endpoint *e = &f->e[k];
  e->pnext = now + f->o.probe_interval_s;
  e->pdeadline = now + f->o.probe_timeout_s;
  char err[300];
  if (e->spec->http) {
    if (!(e->phttp = sbc_http_start(e->spec, "GET", "/metrics", NULL, 0, pool_take(e), err, sizeof err)))
      take_out(f, k, err);
    return;
  }
  static const char ping[] = "{\"id\":\"fleet-probe\",\"type\":\"status\"}\n"; /* alive, and its queue time */
  e->pfd = unix_connect(e->spec->name);
  if (e->pfd < 0 || send(e->pfd, ping, sizeof ping - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof ping - 1)) {
    snprintf(err, sizeof err, "connecting: %s", strerror(errno));
    probe_end(e);
    take_out(f, k, err);
  }
}

/* the probe's socket is ready: 1 answered, 0 not yet, -1 failed (why set) */
static int probe_step(sbc_fleet *f, int k, short revents, char *why, size_t why_len) {
  endpoint *e = &f->e[k];
  if (e->phttp) {
    int r = sbc_http_step(e->phttp, revents, why, why_len);
    if (r <= 0) return r;
    int st = sbc_http_status(e->phttp);
    if (st == 401 || st == 403) refused(f, k, st);
    if (st == 200) {
      static const char key[] = "surgebox_queue_time_seconds{quantile=\"0.99\"} ";
      const char *m = strstr(sbc_http_body(e->phttp, NULL), key);
      e->queue_p99 = m ? strtod(m + sizeof key - 1, NULL) : 0; /* none: an empty window, an empty queue */
      return 1;
    }
    snprintf(why, why_len, "HTTP %d to a probe (GET /metrics)", st);
    return -1;
  }
  ssize_t n = recv(e->pfd, e->pbuf + e->plen, PROBE_MAX - 1 - e->plen, 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
  if (n <= 0) {
    snprintf(why, why_len, "a ping: %s", n < 0 ? strerror(errno) : "the connection closed unanswered");
    return -1;
  }
  e->plen += (size_t)n;
  e->pbuf[e->plen] = '\0';
  char *nl = strchr(e->pbuf, '\n');
  if (nl) {
    json_object *st = json_tokener_parse(e->pbuf), *qt, *p99;
    e->queue_p99 = json_object_object_get_ex(st, "queue_time", &qt) && json_object_object_get_ex(qt, "p99_s", &p99)
                       ? json_object_get_double(p99) : 0; /* none: an empty window, an empty queue */
    json_object_put(st);
    return 1;
  }
  if (e->plen >= PROBE_MAX - 1) return 1; /* a long answer is an answer */
  return 0;
}

/* ---- sending ---- */
static int pick(sbc_fleet *f, int avoid) {
  int best = -1, live = 0;
  for (size_t k = 0; k < f->eps.n; k++) live += f->e[k].up;
  for (size_t t = 0; t < f->eps.n; t++) {
    int k = (int)((f->turn + t) % f->eps.n);
    const endpoint *e = &f->e[k];
    if (!e->up || (live > 1 && k == avoid)) continue;
    if (best < 0 || e->outstanding < f->e[best].outstanding) best = k;
  }
  f->turn++;
  return best;
}

static void send_job(sbc_fleet *f, job *j, int k) {
  endpoint *e = &f->e[k];
  j->ep = k;
  j->sent_at = sbu_now_s();
  j->attempts++;
  e->outstanding++;
  size_t len;
  SBU_AUTOFREE char *line = sbp_encode_line(j->req, &len);
  char err[300];
  if (!line) {
    requeue(f, j, "out of memory", false);
    return;
  }
  if (e->spec->http) {
    j->http = sbc_http_start(e->spec, "POST", "/v1/jobs", line, len - 1, pool_take(e), err, sizeof err);
    if (!j->http) take_out(f, k, err);
    return;
  }
  if (e->fd < 0 && (e->fd = unix_connect(e->spec->name)) < 0) {
    snprintf(err, sizeof err, "connecting: %s", strerror(errno));
    take_out(f, k, err);
    return;
  }
  if (append(&e->out, &e->out_len, &e->out_cap, line, len) < 0) requeue(f, j, "out of memory", false);
}

static void dispatch(sbc_fleet *f) {
  double now = sbu_now_s();
  for (size_t i = 0; i < f->n_jobs; i++) {
    job *j = f->jobs[i];
    if (j->ep >= 0 || j->not_before > now) continue;
    int k = pick(f, j->last_ep);
    if (k >= 0) {
      send_job(f, j, k);
    } else if (now - j->waiting_since > f->o.wait_s) {
      give_up(f, j);
      i--; /* the list moved */
    }
  }
}

/* ---- answers arriving ---- */
static job *find_job(sbc_fleet *f, int k, const char *id) {
  for (size_t i = 0; id && i < f->n_jobs; i++)
    if (f->jobs[i]->ep == k && !strcmp(f->jobs[i]->id, id)) return f->jobs[i];
  return NULL;
}

/* an answer for j from daemon k: delivered, or j again elsewhere */
static void answered(sbc_fleet *f, int k, job *j, json_object *resp, const char *raw, size_t raw_len) {
  const char *code = sbp_response_error_code(resp);
  json_object *st = json_object_object_get(resp, "status");
  if (code && !strcmp(code, "busy")) {
    requeue(f, j, "busy", true);
    json_object_put(resp);
    return;
  }
  if (st && !strcmp(json_object_get_string(st), "cancelled")) { /* we cancel nothing: the daemon gave it up */
    requeue(f, j, "cancelled by the daemon (shutting down?)", false);
    json_object_put(resp);
    return;
  }
  f->e[k].outstanding--;
  f->e[k].answered++;
  deliver(f, j, resp, f->e[k].spec->name, raw, raw_len);
}

static void unix_readable(sbc_fleet *f, int k) {
  endpoint *e = &f->e[k];
  char why[200] = "";
  for (;;) {
    if (e->in_cap - e->in_len < 65536) {
      size_t c = e->in_cap ? e->in_cap * 2 : 131072;
      char *b = realloc(e->in, c);
      if (!b) return;
      e->in = b;
      e->in_cap = c;
    }
    size_t room = e->in_cap - e->in_len;
    ssize_t n = recv(e->fd, e->in + e->in_len, room, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      snprintf(why, sizeof why, "%s", n < 0 ? strerror(errno) : "it closed the connection");
      break;
    }
    e->in_len += (size_t)n;
    if ((size_t)n < room) break; /* drained: poll says when more comes (no recv only to read EAGAIN) */
  }
  /* the answers that arrived before the connection ended are answers */
  char *start = e->in, *nl;
  while ((nl = memchr(start, '\n', e->in_len - (size_t)(start - e->in)))) {
    json_object *resp = sbc_trimmer_parse(&f->parser, start, (size_t)(nl - start), f->trim);
    const char *raw = start;
    start = nl + 1;
    json_object *id = resp ? json_object_object_get(resp, "id") : NULL;
    job *j = find_job(f, k, id ? json_object_get_string(id) : NULL);
    if (j) answered(f, k, j, resp, raw, (size_t)(nl - raw));
    else json_object_put(resp); /* an answer to no job of ours (an unreadable line included) */
  }
  size_t left = e->in_len - (size_t)(start - e->in);
  memmove(e->in, start, left);
  e->in_len = left;
  if (why[0]) take_out(f, k, why);
}

static void unix_writable(sbc_fleet *f, int k) {
  endpoint *e = &f->e[k];
  size_t off = 0;
  while (off < e->out_len) {
    ssize_t n = send(e->fd, e->out + off, e->out_len - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      char why[200];
      snprintf(why, sizeof why, "sending: %s", strerror(errno));
      take_out(f, k, why);
      return;
    }
    off += (size_t)n;
  }
  memmove(e->out, e->out + off, e->out_len - off);
  e->out_len -= off;
}

static void http_ready(sbc_fleet *f, job *j, short revents) {
  char why[300];
  int k = j->ep, r = sbc_http_step(j->http, revents, why, sizeof why);
  if (r == 0) return;
  if (r < 0) {
    take_out(f, k, why);
    return;
  }
  int st = sbc_http_status(j->http);
  if (st == 401 || st == 403) {
    refused(f, k, st);
    requeue(f, j, "token refused", false);
    return;
  }
  if (st == 502 || st == 503 || st == 504) {
    snprintf(why, sizeof why, "HTTP %d", st);
    requeue(f, j, why, false);
    return;
  }
  json_object *resp = json_tokener_parse(sbc_http_body(j->http, NULL));
  if (!resp || !json_object_is_type(resp, json_type_object)) {
    json_object_put(resp);
    snprintf(why, sizeof why, "HTTP %d with a body that is not a JSON object", st);
    requeue(f, j, why, false);
    return;
  }
  pool_put(&f->e[k], sbc_http_release(j->http));
  j->http = NULL;
  answered(f, k, j, resp, NULL, 0);
}

/* ---- the loop ---- */
static void probes_due(sbc_fleet *f, double now) {
  char why[300];
  for (size_t k = 0; k < f->eps.n; k++) {
    endpoint *e = &f->e[k];
    if (e->refused) continue;
    if ((e->pfd >= 0 || e->phttp) && now > e->pdeadline) {
      probe_end(e);
      snprintf(why, sizeof why, "no answer to its %s probe within %.0f s", e->spec->http ? "GET /metrics" : "status",
               f->o.probe_timeout_s);
      take_out(f, (int)k, why);
    }
    if (e->pfd < 0 && !e->phttp && now >= e->pnext) probe_start(f, (int)k, now);
  }
}

static double deadline_of(const sbc_fleet *f, const job *j) {
  return j->sent_at + j->limits_s + 2 * f->e[j->ep].queue_p99 + f->o.answer_margin_s;
}

/* a job unanswered past its deadline: its daemon is hung, taken out */
static void deadlines_due(sbc_fleet *f, double now) {
  for (size_t i = 0; i < f->n_jobs; i++) {
    job *j = f->jobs[i];
    if (j->ep < 0 || now < deadline_of(f, j)) continue;
    char why[300];
    snprintf(why, sizeof why,
             "no answer within a job's deadline, %.1f s: its limits %.1f s + 2 x the daemon's p99 queue time %.3f s + "
             "margin %.1f s", deadline_of(f, j) - j->sent_at, j->limits_s, f->e[j->ep].queue_p99, f->o.answer_margin_s);
    take_out(f, j->ep, why);
    i = (size_t)-1; /* the list changed: again from its start (its jobs are no longer sent) */
  }
}

static int wait_once(sbc_fleet *f, int timeout_ms) {
  size_t cap = f->eps.n * 2 + f->n_jobs + 1, n = 0;
  if (cap > f->cap_poll) {
    size_t c = cap * 2;
    struct pollfd *np = realloc(f->pfds, c * sizeof *np);
    if (np) f->pfds = np;
    void **nw = realloc(f->who, c * sizeof *nw);
    if (nw) f->who = nw;
    int *nk = realloc(f->kind, c * sizeof *nk);
    if (nk) f->kind = nk;
    if (!np || !nw || !nk) return -1;
    f->cap_poll = c;
  }
  struct pollfd *p = f->pfds;
  void **who = f->who;
  int *kind = f->kind; /* 0 jobs' connection, 1 probe, 2 an HTTP job */
  double now = sbu_now_s(), until = now + timeout_ms / 1000.0;
  for (size_t k = 0; k < f->eps.n; k++) {
    endpoint *e = &f->e[k];
    if (e->fd >= 0) p[n] = (struct pollfd){e->fd, (short)(POLLIN | (e->out_len ? POLLOUT : 0)), 0}, kind[n] = 0, who[n++] = e;
    if (e->pfd >= 0) p[n] = (struct pollfd){e->pfd, POLLIN, 0}, kind[n] = 1, who[n++] = e;
    if (e->phttp) p[n] = (struct pollfd){sbc_http_fd(e->phttp), sbc_http_events(e->phttp), 0}, kind[n] = 1, who[n++] = e;
    if (!e->refused && e->pnext < until) until = e->pnext;
    if ((e->pfd >= 0 || e->phttp) && e->pdeadline < until) until = e->pdeadline;
  }
  for (size_t i = 0; i < f->n_jobs; i++) {
    job *j = f->jobs[i];
    if (j->http) p[n] = (struct pollfd){sbc_http_fd(j->http), sbc_http_events(j->http), 0}, kind[n] = 2, who[n++] = j;
    if (j->ep < 0 && j->not_before < until) until = j->not_before;
    if (j->ep >= 0 && deadline_of(f, j) < until) until = deadline_of(f, j);
  }
  int ms = until > now ? (int)((until - now) * 1000) + 1 : 0;
  int r = poll(p, n, ms);
  for (size_t i = 0; r > 0 && i < n; i++) {
    if (!p[i].revents) continue;
    if (kind[i] == 2) { /* the job may be gone: a take_out of its daemon requeued it */
      bool live = false;
      for (size_t x = 0; x < f->n_jobs && !live; x++) live = f->jobs[x] == who[i] && f->jobs[x]->http;
      if (live && sbc_http_fd(((job *)who[i])->http) == p[i].fd) http_ready(f, who[i], p[i].revents);
      continue;
    }
    endpoint *e = who[i];
    int k = (int)(e - f->e);
    if (kind[i] == 0 && e->fd == p[i].fd) {
      if (p[i].revents & POLLOUT) unix_writable(f, k);
      if (e->fd == p[i].fd && (p[i].revents & (POLLIN | POLLHUP | POLLERR))) unix_readable(f, k);
    } else if (kind[i] == 1 && (e->pfd == p[i].fd || (e->phttp && sbc_http_fd(e->phttp) == p[i].fd))) {
      char why[300];
      int pr = probe_step(f, k, p[i].revents, why, sizeof why);
      if (pr > 0 && e->phttp) {
        pool_put(e, sbc_http_release(e->phttp));
        e->phttp = NULL;
      }
      if (pr != 0) probe_end(e);
      if (pr > 0) bring_up(f, k);
      if (pr < 0 && !e->refused) take_out(f, k, why);
    }
  }
  probes_due(f, sbu_now_s());
  deadlines_due(f, sbu_now_s());
  return 0;
}

int sbc_fleet_next(sbc_fleet *f, int timeout_ms, json_object **resp, char *err, size_t err_len) {
  char *line = NULL;
  int r = sbc_fleet_next_line(f, timeout_ms, resp, &line, NULL, err, err_len);
  free(line);
  return r;
}

int sbc_fleet_next_line(sbc_fleet *f, int timeout_ms, json_object **resp, char **line, size_t *len, char *err,
                        size_t err_len) {
  double until = sbu_now_s() + timeout_ms / 1000.0;
  *resp = NULL;
  *line = NULL;
  for (;;) {
    if (f->fatal[0]) {
      snprintf(err, err_len, "%s", f->fatal);
      return -1;
    }
    dispatch(f);
    if (f->n_done) {
      *resp = f->done[0];
      *line = f->done_line[0];
      if (len) *len = f->done_len[0];
      memmove(f->done, f->done + 1, (f->n_done - 1) * sizeof *f->done);
      memmove(f->done_line, f->done_line + 1, (f->n_done - 1) * sizeof *f->done_line);
      memmove(f->done_len, f->done_len + 1, --f->n_done * sizeof *f->done_len);
      return 1;
    }
    double left = until - sbu_now_s();
    if (left <= 0) return 0;
    if (wait_once(f, (int)(left * 1000) + 1) < 0) {
      snprintf(err, err_len, "out of memory");
      return -1;
    }
  }
}

/* The longest a job may take by its own limits: per step, twice its wall
 * limit ("time_s", the default 30 s: a daemon moves a deadline by at most
 * the limit, for time the job waited for a CPU, runners/stall.c) + 1 s to
 * set a sandbox up, times its cases; twice that with a toolchain (its
 * compile step). The margin covers the rest. */
static double step_seconds(json_object *step, json_object *cases) {
  json_object *lim = json_object_object_get(step, "limits"), *v;
  double wall = json_object_object_get_ex(lim, "time_s", &v) ? json_object_get_double(v) : 0;
  double s = 2 * (wall > 0 ? wall : 30) + 1;
  if (!cases) cases = json_object_object_get(step, "cases");
  size_t n = json_object_is_type(cases, json_type_array) ? json_object_array_length(cases) : 0;
  return s * (double)(n ? n : 1);
}

static double limits_seconds(json_object *req) {
  json_object *steps = json_object_object_get(req, "steps");
  double total = 0;
  if (json_object_is_type(steps, json_type_array) && json_object_array_length(steps)) {
    for (size_t i = 0; i < json_object_array_length(steps); i++)
      total += step_seconds(json_object_array_get_idx(steps, i), NULL);
  } else {
    total = step_seconds(req, json_object_object_get(req, "cases"));
  }
  return total * (json_object_object_get(req, "toolchain") ? 2 : 1);
}

int sbc_fleet_submit(sbc_fleet *f, json_object *req) {
  job *j = calloc(1, sizeof *j);
  if (!j) return -1;
  if (f->n_jobs == f->cap_jobs) {
    size_t c = f->cap_jobs ? f->cap_jobs * 2 : 64;
    job **v = realloc(f->jobs, c * sizeof *v);
    if (!v) {
      free(j);
      return -1;
    }
    f->jobs = v;
    f->cap_jobs = c;
  }
  j->req = req;
  j->id = json_object_get_string(json_object_object_get(req, "id"));
  j->ep = j->last_ep = -1;
  j->limits_s = limits_seconds(req);
  j->waiting_since = sbu_now_s();
  f->jobs[f->n_jobs++] = j;
  return 0;
}

size_t sbc_fleet_size(const sbc_fleet *f) { return f->eps.n; }

void sbc_fleet_trim(sbc_fleet *f, bool on) { f->trim = on; }

sbc_fleet *sbc_fleet_open(const char *spec, const sbc_fleet_opts *o, char *err, size_t err_len) {
  sbc_fleet *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->o = *o;
  if (f->o.probe_interval_s <= 0) f->o.probe_interval_s = 1;
  if (f->o.probe_timeout_s <= 0) f->o.probe_timeout_s = 3;
  if (f->o.attempts <= 0) f->o.attempts = 4;
  if (f->o.answer_margin_s <= 0) f->o.answer_margin_s = 60;
  if (f->o.wait_s <= 0) f->o.wait_s = 60;
  if (!f->o.label) f->o.label = "surgebox";
  if (sbc_endpoints_parse(spec, &f->eps, err, err_len) < 0 || !(f->e = calloc(f->eps.n, sizeof *f->e))) {
    sbc_endpoints_free(&f->eps);
    free(f);
    return NULL;
  }
  srand((unsigned)getpid() ^ (unsigned)(sbu_now_s() * 1e6));
  double now = sbu_now_s();
  for (size_t k = 0; k < f->eps.n; k++) f->e[k] = (endpoint){.spec = &f->eps.v[k], .up = true, .fd = -1, .pfd = -1};
  for (size_t k = 0; k < f->eps.n; k++)
    if (!f->eps.v[k].http && !(f->e[k].pbuf = malloc(PROBE_MAX))) {
      snprintf(err, err_len, "out of memory");
      sbc_fleet_close(f);
      return NULL;
    }
  for (size_t k = 0; k < f->eps.n; k++) probe_start(f, (int)k, now);
  /* the first probes, before any job: a list of which nothing answers is refused now */
  bool pending = true;
  while (pending && !f->fatal[0]) {
    wait_once(f, 200);
    pending = false;
    for (size_t k = 0; k < f->eps.n; k++) pending |= f->e[k].up && (f->e[k].pfd >= 0 || f->e[k].phttp);
  }
  size_t up = 0;
  for (size_t k = 0; k < f->eps.n; k++) up += f->e[k].up;
  if (f->fatal[0] || up == 0) {
    if (f->fatal[0]) snprintf(err, err_len, "%s", f->fatal);
    else snprintf(err, err_len, "no daemon of the fleet answers (%zu listed, each one's reason above): start them "
                  "or fix the endpoint list", f->eps.n);
    sbc_fleet_close(f);
    return NULL;
  }
  return f;
}

json_object *sbc_fleet_ask(sbc_fleet *f, json_object *req, char *err, size_t err_len) {
  snprintf(err, err_len, "no Unix-socket daemon of the fleet answers (HTTP endpoints serve exec only)");
  for (size_t k = 0; k < f->eps.n; k++) {
    if (f->eps.v[k].http || !f->e[k].up) continue;
    sbc_conn c;
    if (sbc_open(&c, f->eps.v[k].name, false, NULL, err, err_len) < 0) continue;
    json_object *resp = sbc_send(&c, req) == 0 ? sbc_recv(&c) : NULL;
    sbc_close(&c);
    if (resp) return resp;
    snprintf(err, err_len, "%s: no answer", f->eps.v[k].name);
  }
  return NULL;
}

void sbc_fleet_say(const sbc_fleet *f, FILE *out) {
  for (size_t k = 0; k < f->eps.n; k++) {
    const endpoint *e = &f->e[k];
    fprintf(out, "%s: daemon %s: %zu answered%s%s\n", f->o.label, e->spec->name, e->answered,
            e->taken_out ? ", taken out" : "", e->refused ? ", refused our token" : "");
  }
}

void sbc_fleet_close(sbc_fleet *f) {
  if (!f) return;
  while (f->n_jobs) drop_job(f, f->jobs[0]);
  for (size_t k = 0; k < f->eps.n && f->e; k++) {
    close_jobs_conn(&f->e[k]);
    pool_close(&f->e[k]);
    probe_end(&f->e[k]);
    free(f->e[k].in);
    free(f->e[k].out);
    free(f->e[k].pbuf);
  }
  for (size_t i = 0; i < f->n_done; i++) {
    json_object_put(f->done[i]);
    free(f->done_line[i]);
  }
  free(f->done);
  free(f->done_line);
  free(f->done_len);
  free(f->jobs);
  sbc_trimmer_free(&f->parser);
  free(f->pfds);
  free(f->who);
  free(f->kind);
  free(f->e);
  sbc_endpoints_free(&f->eps);
  free(f);
}
