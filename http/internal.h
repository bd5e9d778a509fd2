/* The HTTP front's own structures, grouped by file. One loop thread. */
#ifndef SURGEBOX_HTTP_INTERNAL_H
#define SURGEBOX_HTTP_INTERNAL_H

#include "http.h"

#include <http_parser.h>

typedef struct sbh_conn sbh_conn;
typedef struct sbh_req sbh_req;

/* ---- metrics.c: the front's counters ---- */
enum {
  SBH_C_CONNECTIONS,       /* accepted */
  SBH_C_CONN_REFUSED,      /* over max_connections */
  SBH_C_REQUESTS,          /* complete requests read */
  SBH_C_HEADER_TOO_LARGE,  /* 431 */
  SBH_C_BODY_TOO_LARGE,    /* 413 */
  SBH_C_HEADER_TIMEOUT,    /* dropped: headers too slow */
  SBH_C_BODY_TIMEOUT,      /* dropped: body too slow */
  SBH_C_IDLE_TIMEOUT,      /* idle keep-alive connection closed */
  SBH_C_CL_TE,             /* Content-Length with Transfer-Encoding refused */
  SBH_C_BAD_REQUEST,       /* unparsable HTTP */
  SBH_C_UNAUTHORIZED,      /* missing or wrong bearer token */
  SBH_C_QUEUE_FULL,        /* 503 */
  SBH_C_START_TIMEOUT,     /* 504 */
  SBH_C_PATH_REFUSED,      /* a files/fetch_files path outside /app */
  SBH_C_MAX_REQUESTS,      /* connections closed after max_requests_per_conn */
  SBH_C_BODY_BYTES_FULL,   /* 503: bodies being read on all connections over max_body_total */
  SBH_C_ANSWER_TOO_LARGE,  /* an answer over max_answer_bytes */
  SBH_C_CLIENT_GONE,       /* a client closed with its request unanswered: its job cancelled */
  SBH_N_COUNTERS
};
extern const char *const sbh_counter_names[SBH_N_COUNTERS][2]; /* metric name, help */

/* ---- languages.c: SandboxFusion's language values -> toolchains ---- */
typedef struct {
  char *name;            /* SandboxFusion's value */
  char *toolchain;       /* NULL when missing */
  char *source;
  char *profile;         /* a profile's root the job runs in (the file's word, never a client's), or NULL */
  json_object *options;  /* or NULL */
  json_object *compile_args, *args; /* arrays of strings, or NULL */
  json_object *files;    /* {"path": "text"}, or NULL */
  bool warm;
  char *missing;         /* why it cannot run here, or NULL */
} sbh_language;
typedef struct {
  sbh_language *v;
  size_t n;
  char path[4096];
} sbh_languages;
int sbh_languages_load(sbh_languages *l, const char *file, char *err, size_t n);
void sbh_languages_free(sbh_languages *l);
const sbh_language *sbh_language_find(const sbh_languages *l, const char *name);
/* Where languages.json is when --http-languages is not given. */
void sbh_languages_default_path(char *out, size_t cap);

/* ---- token.c ---- */
int sbh_token_load(const char *file, char **out, char *err, size_t n);
/* The Authorization header's value against "Bearer <token>", in time that
 * depends only on the lengths. */
bool sbh_token_ok(const char *token, const char *header, size_t header_len);

/* ---- paths.c: files and fetch_files kept inside /app ---- */
/* The client's path as a path below /app ("/app/x" and "/x" -> "x",
 * "a/./b" -> "a/b"): malloc'd, or NULL with why set (".." component,
 * empty, NUL). */
char *sbh_app_path(const char *path, size_t len, char *why, size_t n);

/* ---- server.c ---- */
/* What server.c calls for a connection's request: it includes nothing of its
 * users (routes.c, submit.c); listen.c hands it these, as libuv is handed
 * its callbacks. */
typedef struct {
  void (*request)(sbh_conn *c);                      /* a whole request read: answer it */
  bool (*is_public)(const sbh_conn *c, bool has_body); /* served without the token */
  void (*orphan)(sbh_req *r);                        /* the connection goes with r unanswered */
} sbh_conn_calls;

struct sbh_server {
  uv_loop_t *loop;
  sbh_options opt;
  sbh_daemon d;
  sbh_conn_calls calls;
  uv_tcp_t listeners[SBH_MAX_LISTEN];
  size_t n_listeners;
  bool listening;
  char *token;            /* NULL: no token (loopback only) */
  sbh_languages langs;
  char bound[512];
  char hostname[256];
  sbh_conn *conns;
  size_t n_conns;
  size_t in_flight;       /* submitted, not answered (max_queue) */
  size_t body_bytes;      /* bodies being read (max_body_total) */
  uint64_t counters[SBH_N_COUNTERS];
  uint64_t answers[6];    /* by class: 1xx..5xx, [0] other */
  bool stopping;
};

typedef enum { SBH_IDLE, SBH_HEADERS, SBH_BODY, SBH_BUSY, SBH_WRITING, SBH_LINGER } sbh_conn_state;

struct sbh_conn {
  sbh_server *srv;
  uv_tcp_t tcp;
  uv_timer_t timer;
  uv_shutdown_t shutdown;
  int handles;             /* open handles (tcp, timer): freed when both closed */
  http_parser parser;
  sbh_conn_state state;
  char *in;                /* bytes read and not yet parsed */
  size_t in_len, in_off, in_cap;
  bool reading;
  bool read_eof;
  bool closing;
  size_t requests;         /* requests read on this connection */
  /* the request being read */
  size_t header_bytes;
  char *url;
  size_t url_len;
  char hname[32];          /* the header being read, lowercased, cut */
  size_t hname_len;
  bool hname_done;
  int hcur;                /* which header's value is read: 0 none, 1 CL, 2 TE, 3 auth, 4 expect */
  bool saw_cl, saw_te, expect_continue;
  char *auth;
  size_t auth_len;
  char *body;
  size_t body_len, body_cap;
  bool complete;           /* a whole request is parsed */
  int fail_status;         /* set by a callback: answer it and close */
  const char *fail_why;
  sbh_req *req;            /* submitted, unanswered */
  sbh_conn *prev, *next;
};

/* An answer: status line, headers and body; close: Connection: close. Takes body (malloc'd). */
void sbh_send(sbh_conn *c, int status, const char *ctype, char *body, size_t len, const char *extra_headers);
void sbh_send_json(sbh_conn *c, int status, json_object *o, const char *extra_headers); /* takes o */
void sbh_send_error(sbh_conn *c, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A listener's connection callback (listen.c binds, server.c serves). */
void sbh_on_connection(uv_stream_t *l, int status);
/* The request's answer written; the connection may read the next. */
void sbh_conn_next(sbh_conn *c);

/* ---- routes.c: one complete request ---- */
void sbh_route(sbh_conn *c);
bool sbh_route_is_public(const sbh_conn *c, bool has_body);

/* ---- submit.c: a request handed to the daemon ---- */
/* The endpoint's answer from the native one (borrowed; NULL: the daemon
 * went away) and ctx: a new object and *http_status (200, 503: the daemon
 * busy, 4xx/500: it refused). */
typedef json_object *(*sbh_answer_make)(const sbh_server *s, json_object *native, json_object *ctx, int *http_status);
struct sbh_req {
  sbh_server *srv;
  sbh_conn *conn;          /* NULL once the client is gone */
  sbh_answer_make make;    /* the endpoint's answer */
  uint64_t ticket;
  bool in_submit, answered;
  json_object *answer;     /* the native answer while in_submit */
  uv_timer_t start_timer;  /* 504 when not started in time */
  bool timer_on;
  json_object *ctx;        /* what the answer needs (the endpoint's) */
};
/* Submit native (borrowed); make turns its answer into the endpoint's, with
 * ctx (taken). budget_s > 0: withdraw with 504 when the job has not started
 * then. */
void sbh_req_submit(sbh_conn *c, json_object *native, sbh_answer_make make, json_object *ctx, double budget_s);
/* The connection is going away: its request is cancelled, answered to nobody. */
void sbh_req_orphan(sbh_req *r);

/* ---- run_code.c: a /run_code body into a native request ---- */
/* 0 and *native, *ctx (the answer's needs) and *budget; or an answer was
 * sent (bad request, unknown language: 1). */
int sbh_run_code_request(sbh_conn *c, json_object *body, json_object **native, json_object **ctx, double *budget);

/* ---- answer.c: a native exec result into a /run_code answer ---- */
/* The answer's JSON (new object) from the native response (borrowed, may
 * be NULL: the daemon went away) and ctx. *http_status: 200, or 503 (the
 * daemon was busy), 400 (the daemon refused the request). */
json_object *sbh_run_code_answer(const sbh_server *s, json_object *native, json_object *ctx, int *http_status);
/* A Success answer with no results yet (status, message, compile_result,
 * run_result, executor_pod_name, files). */
json_object *sbh_run_code_answer_new(const sbh_server *s);
/* A native step's CommandRunResult; *err set when it is an Error. */
json_object *sbh_command_result(json_object *step, const char **err);
/* A CommandRunResult: status, return_code rc (taken; NULL: null) and the
 * native step's or case's wall_time_s, stdout and stderr. */
json_object *sbh_run_result(const char *status, json_object *rc, json_object *native);
/* The number of the signal named "SIGKILL" and so on; 0 for none or unknown. */
int sbh_signal_number(const char *name);
/* The daemon's refusal of a request (an answer of type "error"): its error
 * object (borrowed), *code (may be NULL) and "code: message" in m; NULL
 * when native is not one. */
json_object *sbh_refusal(json_object *native, const char **code, char *m, size_t m_len);
/* The job did not run (toolchain_missing, unsupported, cancelled): true and
 * "status: error" in m. */
bool sbh_not_run(json_object *native, char *m, size_t m_len);
/* A {"detail": m} answer (a 503 or a 400), sb (the surgebox record) dropped. */
json_object *sbh_detail_answer(const char *m, json_object *sb);
/* A SandboxError answer with message, no results. */
json_object *sbh_sandbox_error(const sbh_server *s, const char *message, json_object *surgebox);
/* The endpoint's all-SandboxError answer with message and sb (taken). */
typedef json_object *(*sbh_answer_error)(const sbh_server *s, json_object *ctx, const char *message, json_object *sb);
/* a bounded by max_answer_bytes, never cut silently: a, or (a freed) what
 * error makes of a message giving its size. */
json_object *sbh_answer_bounded(const sbh_server *s, json_object *a, json_object *ctx, sbh_answer_error error);

/* ---- evaluate_batch.c: SandboxFusion's /common_evaluate_batch ---- */
/* The body into one native exec request with cases, submitted; or an
 * answer was sent (a bad body: 4xx). */
void sbh_evaluate_batch(sbh_conn *c, json_object *body);
/* The EvalResult answer from the native response (borrowed, may be NULL). */
json_object *sbh_evaluate_batch_answer(const sbh_server *s, json_object *native, json_object *ctx, int *http_status);
/* SandboxFusion's default_extract_helper without custom logic: the code,
 * malloc'd, and *type ("fenced", "incomplete_fenced", "heuristic", "empty"). */
char *sbh_extract_code(const char *completion, size_t len, const char *language, const char **type);

#endif
