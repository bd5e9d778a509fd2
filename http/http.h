/* The HTTP front (issue 37), prefix sbh_. It serves SandboxFusion's
 * /run_code, /v1/ping, /v1/jobs and /metrics on a libuv loop it is given,
 * and reaches the daemon only through sbh_daemon: a submit function, a
 * withdraw function and a metrics function with their argument (the way
 * uv_queue_work is handed {fn, arg}). Nothing here includes the daemon. */
#ifndef SURGEBOX_HTTP_H
#define SURGEBOX_HTTP_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#define SBH_MAX_LISTEN 8
#define SBH_ERR_MAX 512

/* One limit each, nginx's names in the comments. 0 never means "none". */
typedef struct {
  size_t max_header_bytes;     /* request line + headers (large_client_header_buffers) */
  size_t max_body_bytes;       /* client_max_body_size */
  size_t max_connections;      /* open HTTP connections; more are closed at accept */
  size_t max_requests_per_conn; /* keepalive_requests: then Connection: close */
  double header_timeout_s;     /* client_header_timeout: a request's headers, from its first byte */
  double body_timeout_s;       /* client_body_timeout: the whole body, from the end of the headers */
  double idle_timeout_s;       /* keepalive_timeout: an idle connection between requests */
  size_t max_queue;            /* requests submitted and not answered; beyond: 503 + Retry-After */
  size_t max_body_total;       /* bodies being read on all connections together; beyond: 503 */
  size_t max_answer_bytes;     /* an answer larger than this is a SandboxError (never cut silently) */
  double start_margin_s;       /* /run_code: must start within compile + run timeouts + this, else 504 */
} sbh_limits;
void sbh_limits_default(sbh_limits *l);

/* What the daemon gives the front. submit takes one native request (a JSON
 * object, borrowed; the daemon sets its "id" and reads it as it reads a
 * line of its Unix socket) and calls answer exactly once with the native
 * response (the callee owns it; NULL when the daemon is going away),
 * possibly before submit returns. It returns a ticket (> 0). withdraw: the
 * ticket's job is still queued: it is dropped, answer is never called, and
 * true is returned; false when it started (answer will come) or already
 * answered. cancel: the client is gone; a running job is killed, a queued one
 * dropped; answer is still called once (or already was). metrics: the daemon's
 * OpenMetrics text (malloc'd, with the front's families and "# EOF"). */
typedef void (*sbh_answer_fn)(void *cb_arg, json_object *resp);
typedef struct {
  void *arg;
  uint64_t (*submit)(void *arg, json_object *req, sbh_answer_fn answer, void *cb_arg);
  bool (*withdraw)(void *arg, uint64_t ticket);
  void (*cancel)(void *arg, uint64_t ticket);
  char *(*metrics)(void *arg);
} sbh_daemon;

typedef struct {
  const char *listen[SBH_MAX_LISTEN]; /* "ADDR:PORT", "[::1]:PORT" */
  size_t n_listen;
  const char *token_file;     /* bearer token; required for a non-loopback address */
  const char *languages_file; /* NULL: found beside the toolchain files (languages.c) */
  bool warm;                  /* Python's run step warm where the request allows it */
  sbh_limits limits;
} sbh_options;

typedef struct sbh_server sbh_server;

/* Reads the token and the languages, binds every address. -1 with err set
 * (one line, naming the address or file and the next step). */
int sbh_start(sbh_server **out, uv_loop_t *loop, const sbh_options *opt, const sbh_daemon *d, char *err, size_t n);
/* Stops listening (a draining daemon); connections stay to be answered. */
void sbh_drain(sbh_server *s);
/* Stops listening and closes every connection (their requests are cancelled). */
void sbh_stop(sbh_server *s);
/* After the loop closed the handles. */
void sbh_free(sbh_server *s);
/* The front's counters as OpenMetrics families appended to *buf (malloc'd,
 * grown), for the daemon's metrics text. 0, or -1: no memory. */
int sbh_metrics_append(const sbh_server *s, char **buf, size_t *len);
/* The bound addresses, "127.0.0.1:8080 [::1]:8080", for the daemon's log. */
const char *sbh_bound(const sbh_server *s);

/* Parse "ADDR:PORT" (IPv4, or [IPv6]); 0 or -1. loopback says whether it is. */
int sbh_parse_addr(const char *s, struct sockaddr_storage *out, bool *loopback);

#endif
