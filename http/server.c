/* Connections (listen.c binds the sockets): the bytes of each request through
 * http_parser, with nginx's limits (header size and time, body size and
 * time, idle keep-alive time, requests per connection, connections), and
 * the answers written back. One request per connection is worked on at a
 * time: a pipelined request waits, unparsed, until the answer before it is
 * written, so a connection holds at most one body and one answer. A whole
 * request goes to s->calls (listen.c hands it routes.c's and submit.c's
 * functions): this file includes nothing of its users. */
#include "internal.h"

#include "runtime_paths.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define READ_CHUNK 65536
/* Bytes read ahead of the request being worked on (pipelining, or a client
 * that closes): above this the connection is not read until they are parsed. */
#define READ_AHEAD_MAX (256 * 1024)

void sbh_limits_default(sbh_limits *l) {
  *l = (sbh_limits){.max_header_bytes = 32 * 1024, .max_body_bytes = 64u << 20, .max_connections = 1024,
                    .max_requests_per_conn = 10000, .header_timeout_s = 10, .body_timeout_s = 60,
                    .idle_timeout_s = 75, .max_queue = 1024, .max_body_total = 512u << 20,
                    .max_answer_bytes = 256u << 20, .start_margin_s = 30};
}

static void conn_close(sbh_conn *c);
static void conn_process(sbh_conn *c);
static void start_reading(sbh_conn *c);

static void timer_set(sbh_conn *c, double s, uv_timer_cb cb) {
  uv_timer_start(&c->timer, cb, (uint64_t)(s * 1000) + 1, 0);
}

/* ---- closing ------------------------------------------------------------- */

static void request_reset(sbh_conn *c) {
  free(c->url);
  free(c->auth);
  if (c->body_cap) c->srv->body_bytes -= c->body_cap;
  free(c->body);
  c->url = c->auth = c->body = NULL;
  c->url_len = c->auth_len = c->body_len = c->body_cap = 0;
  c->header_bytes = 0;
  c->hname_len = 0;
  c->hname_done = false;
  c->hcur = 0;
  c->saw_cl = c->saw_te = c->expect_continue = false;
  c->complete = false;
  c->fail_status = 0;
  c->fail_why = NULL;
}

static void on_handle_closed(uv_handle_t *h) {
  sbh_conn *c = h->data;
  if (--c->handles > 0) return;
  request_reset(c);
  free(c->in);
  free(c);
}

static void conn_close(sbh_conn *c) {
  if (c->closing) return;
  c->closing = true;
  sbh_server *s = c->srv;
  if (c->req) {
    s->counters[SBH_C_CLIENT_GONE]++;
    s->calls.orphan(c->req);
    c->req = NULL;
  }
  if (c->prev) c->prev->next = c->next;
  else s->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  s->n_conns--;
  uv_close((uv_handle_t *)&c->timer, on_handle_closed);
  uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
}

/* ---- writing ------------------------------------------------------------- */

typedef struct {
  uv_write_t w;
  char *head, *body;
  bool close_after;
} write_req;

/* Closing right after an answer while the client still sends (a body
 * refused with 413) would reset the connection, and the reset can destroy
 * the answer before the client read it. As nginx's lingering_close: send
 * FIN, read and discard for a moment, then close. */
#define LINGER_MS 2000
static void on_linger_over(uv_timer_t *t) { conn_close(t->data); }
static void on_linger_shutdown(uv_shutdown_t *r, int status) {
  (void)r;
  (void)status;
}
static void linger_close(sbh_conn *c) {
  c->state = SBH_LINGER;
  if (c->req) { /* nothing to answer any more */
    c->srv->calls.orphan(c->req);
    c->req = NULL;
  }
  c->shutdown.data = c;
  if (c->read_eof || uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_linger_shutdown) < 0) {
    conn_close(c);
    return;
  }
  c->in_off = c->in_len = 0;
  uv_timer_start(&c->timer, on_linger_over, LINGER_MS, 0);
  start_reading(c);
}

static void on_written(uv_write_t *w, int status) {
  write_req *r = (write_req *)w;
  sbh_conn *c = w->data;
  bool close_after = r->close_after;
  free(r->head);
  free(r->body);
  free(r);
  if (c->closing) return;
  if (status < 0) {
    conn_close(c);
    return;
  }
  if (close_after) {
    linger_close(c);
    return;
  }
  if (c->state == SBH_WRITING) sbh_conn_next(c);
}

static const char *reason(int status) {
  switch (status) {
  case 100: return "Continue";
  case 200: return "OK";
  case 400: return "Bad Request";
  case 401: return "Unauthorized";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 408: return "Request Timeout";
  case 413: return "Content Too Large";
  case 422: return "Unprocessable Content";
  case 431: return "Request Header Fields Too Large";
  case 500: return "Internal Server Error";
  case 503: return "Service Unavailable";
  case 504: return "Gateway Timeout";
  default: return "Unknown";
  }
}

void sbh_send(sbh_conn *c, int status, const char *ctype, char *body, size_t len, const char *extra_headers) {
  sbh_server *s = c->srv;
  if (c->closing) {
    free(body);
    return;
  }
  s->answers[status / 100 >= 1 && status / 100 <= 5 ? status / 100 : 0]++;
  /* an error before the request was read whole leaves the stream where the
   * parser stopped: the connection cannot be reused */
  bool close_after = !c->complete || c->fail_status || !http_should_keep_alive(&c->parser) || s->stopping ||
                     c->requests >= s->opt.limits.max_requests_per_conn;
  if (c->requests >= s->opt.limits.max_requests_per_conn && c->complete) s->counters[SBH_C_MAX_REQUESTS]++;
  write_req *r = calloc(1, sizeof *r);
  char *head = malloc(512 + (extra_headers ? strlen(extra_headers) : 0));
  if (!r || !head) {
    free(r);
    free(head);
    free(body);
    conn_close(c);
    return;
  }
  int hl = sprintf(head,
                   "HTTP/1.1 %d %s\r\nServer: surgeboxd/" SURGEBOX_VERSION "\r\nContent-Type: %s\r\n"
                   "Content-Length: %zu\r\n%s%s\r\n",
                   status, reason(status), ctype, len, close_after ? "Connection: close\r\n" : "",
                   extra_headers ? extra_headers : "");
  r->head = head;
  r->body = body;
  r->close_after = close_after;
  r->w.data = c;
  uv_buf_t bufs[2] = {uv_buf_init(head, (unsigned)hl), uv_buf_init(body ? body : "", (unsigned)len)};
  c->state = SBH_WRITING;
  uv_timer_stop(&c->timer);
  if (uv_write(&r->w, (uv_stream_t *)&c->tcp, bufs, len ? 2 : 1, on_written) < 0) {
    free(head);
    free(body);
    free(r);
    conn_close(c);
  }
}

void sbh_send_json(sbh_conn *c, int status, json_object *o, const char *extra_headers) {
  size_t len = 0;
  const char *txt = o ? json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len)
                      : NULL;
  char *body = txt ? malloc(len + 1) : NULL;
  if (body) memcpy(body, txt, len + 1);
  json_object_put(o);
  if (!body) {
    sbh_send(c, 500, "text/plain", strdup("out of memory\n"), 14, NULL);
    return;
  }
  sbh_send(c, status, "application/json", body, len, extra_headers);
}

/* FastAPI's shape for errors, which SandboxFusion's clients already read. */
static json_object *detail(const char *msg) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "detail", json_object_new_string(msg));
  return o;
}

void sbh_send_error(sbh_conn *c, int status, const char *fmt, ...) {
  char msg[SBH_ERR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *extra = status == 401 ? "WWW-Authenticate: Bearer\r\n" : status == 503 ? "Retry-After: 1\r\n" : NULL;
  sbh_send_json(c, status, detail(msg), extra);
}

/* ---- timeouts ------------------------------------------------------------ */

static void on_timeout(uv_timer_t *t) {
  sbh_conn *c = t->data;
  sbh_server *s = c->srv;
  switch (c->state) {
  case SBH_IDLE:
    s->counters[SBH_C_IDLE_TIMEOUT]++;
    conn_close(c);
    return;
  case SBH_HEADERS:
    s->counters[SBH_C_HEADER_TIMEOUT]++;
    break;
  case SBH_BODY:
    s->counters[SBH_C_BODY_TIMEOUT]++;
    break;
  default:
    return;
  }
  c->fail_status = 408;
  sbh_send_error(c, 408, "the request was not received in time");
}

/* ---- parsing ------------------------------------------------------------- */

static int fail(sbh_conn *c, int status, int counter, const char *why) {
  c->fail_status = status;
  c->fail_why = why;
  if (counter >= 0) c->srv->counters[counter]++;
  return -1;
}

static int count_header(sbh_conn *c, size_t n) {
  c->header_bytes += n;
  if (c->header_bytes > c->srv->opt.limits.max_header_bytes)
    return fail(c, 431, SBH_C_HEADER_TOO_LARGE, "request line and headers too large");
  return 0;
}

static int on_message_begin(http_parser *p) {
  sbh_conn *c = p->data;
  request_reset(c);
  if (c->state == SBH_IDLE) {
    c->state = SBH_HEADERS;
    timer_set(c, c->srv->opt.limits.header_timeout_s, on_timeout);
  }
  return 0;
}

static int append(char **buf, size_t *len, const char *at, size_t n) {
  char *b = realloc(*buf, *len + n + 1);
  if (!b) return -1;
  memcpy(b + *len, at, n);
  *len += n;
  b[*len] = '\0';
  *buf = b;
  return 0;
}

static int on_url(http_parser *p, const char *at, size_t n) {
  sbh_conn *c = p->data;
  if (count_header(c, n) < 0) return -1;
  return append(&c->url, &c->url_len, at, n) < 0 ? fail(c, 500, -1, "out of memory") : 0;
}

static int on_header_field(http_parser *p, const char *at, size_t n) {
  sbh_conn *c = p->data;
  if (count_header(c, n) < 0) return -1;
  if (c->hname_done) { /* a new header */
    c->hname_len = 0;
    c->hname_done = false;
  }
  for (size_t i = 0; i < n && c->hname_len < sizeof c->hname - 1; i++)
    c->hname[c->hname_len++] = (char)(at[i] >= 'A' && at[i] <= 'Z' ? at[i] + 32 : at[i]);
  c->hname[c->hname_len] = '\0';
  return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t n) {
  sbh_conn *c = p->data;
  if (count_header(c, n) < 0) return -1;
  if (!c->hname_done) {
    c->hname_done = true;
    c->hcur = !strcmp(c->hname, "content-length")      ? 1
              : !strcmp(c->hname, "transfer-encoding") ? 2
              : !strcmp(c->hname, "authorization")     ? 3
              : !strcmp(c->hname, "expect")            ? 4
                                                        : 0;
    if (c->hcur == 1) c->saw_cl = true;
    if (c->hcur == 2) c->saw_te = true;
    if (c->hcur == 3 && c->auth) return fail(c, 400, SBH_C_BAD_REQUEST, "more than one Authorization header");
  }
  if (c->hcur == 3 && append(&c->auth, &c->auth_len, at, n) < 0) return fail(c, 500, -1, "out of memory");
  if (c->hcur == 4 && n >= 12 && !strncasecmp(at, "100-continue", 12)) c->expect_continue = true;
  return 0;
}

static int on_headers_complete(http_parser *p) {
  sbh_conn *c = p->data;
  sbh_server *s = c->srv;
  /* Request smuggling: a front proxy and this parser could disagree on
   * where the body ends. Refused, as nginx does. */
  if (c->saw_cl && c->saw_te)
    return fail(c, 400, SBH_C_CL_TE, "Content-Length together with Transfer-Encoding is refused");
  if (c->saw_cl && p->content_length > s->opt.limits.max_body_bytes)
    return fail(c, 413, SBH_C_BODY_TOO_LARGE, "body larger than the limit");
  bool has_body = (p->flags & F_CHUNKED) || (c->saw_cl && p->content_length > 0);
  if (s->token && !s->calls.is_public(c, has_body) && !sbh_token_ok(s->token, c->auth, c->auth ? c->auth_len : 0))
    return fail(c, 401, SBH_C_UNAUTHORIZED, "a valid bearer token is required (Authorization: Bearer TOKEN)");
  if (has_body) {
    c->state = SBH_BODY;
    timer_set(c, s->opt.limits.body_timeout_s, on_timeout);
    if (c->expect_continue) {
      static char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
      uv_buf_t b = uv_buf_init(cont, sizeof cont - 1);
      uv_try_write((uv_stream_t *)&c->tcp, &b, 1); /* best effort: the client sends anyway after a wait */
    }
  }
  return 0;
}

/* Room for n more body bytes and a NUL: grown by doubling, within
 * max_body_bytes and, over all connections, max_body_total. */
static int body_room(sbh_conn *c, size_t n) {
  sbh_server *s = c->srv;
  size_t need = c->body_len + n + 1;
  if (need <= c->body_cap) return 0;
  size_t cap = c->body_cap ? c->body_cap : 4096;
  while (cap < need) cap *= 2;
  if (cap > s->opt.limits.max_body_bytes + 1) cap = s->opt.limits.max_body_bytes + 1;
  if (s->body_bytes - c->body_cap + cap > s->opt.limits.max_body_total)
    return fail(c, 503, SBH_C_BODY_BYTES_FULL, "too many request bodies being read: retry later");
  char *b = realloc(c->body, cap);
  if (!b) return fail(c, 500, -1, "out of memory");
  s->body_bytes += cap - c->body_cap;
  c->body = b;
  c->body_cap = cap;
  return 0;
}

static int on_body(http_parser *p, const char *at, size_t n) {
  sbh_conn *c = p->data;
  if (c->body_len + n > c->srv->opt.limits.max_body_bytes)
    return fail(c, 413, SBH_C_BODY_TOO_LARGE, "body larger than the limit");
  if (body_room(c, n) < 0) return -1;
  memcpy(c->body + c->body_len, at, n);
  c->body[c->body_len += n] = '\0';
  return 0;
}

static int on_message_complete(http_parser *p) {
  sbh_conn *c = p->data;
  c->complete = true;
  c->requests++;
  c->srv->counters[SBH_C_REQUESTS]++;
  http_parser_pause(p, 1);
  return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* Parse what was read, up to one whole request, and act on it. */
static void conn_process(sbh_conn *c) {
  while (!c->closing && (c->state == SBH_IDLE || c->state == SBH_HEADERS || c->state == SBH_BODY) &&
         c->in_off < c->in_len) {
    if (c->state == SBH_IDLE) { /* the next request's first byte: its header time starts */
      c->state = SBH_HEADERS;
      timer_set(c, c->srv->opt.limits.header_timeout_s, on_timeout);
    }
    size_t n = http_parser_execute(&c->parser, &settings, c->in + c->in_off, c->in_len - c->in_off);
    c->in_off += n;
    enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
    if (c->complete && (e == HPE_OK || e == HPE_PAUSED)) {
      http_parser_pause(&c->parser, 0);
      c->state = SBH_BUSY;
      uv_timer_stop(&c->timer);
      c->srv->calls.request(c);
      break;
    }
    if (e != HPE_OK) {
      /* http_parser refuses a Content-Length beside Transfer-Encoding itself,
       * at the second of the two headers: counted as what it is */
      bool cl = c->saw_cl || !strcmp(c->hname, "content-length"), te = c->saw_te || !strcmp(c->hname, "transfer-encoding");
      if (!c->fail_status && e == HPE_UNEXPECTED_CONTENT_LENGTH && cl && te) {
        fail(c, 400, SBH_C_CL_TE, "Content-Length together with Transfer-Encoding is refused");
      } else if (!c->fail_status) {
        c->srv->counters[e == HPE_HEADER_OVERFLOW ? SBH_C_HEADER_TOO_LARGE : SBH_C_BAD_REQUEST]++;
        c->fail_status = e == HPE_HEADER_OVERFLOW ? 431 : 400;
        c->fail_why = http_errno_description(e);
      }
      sbh_send_error(c, c->fail_status, "%s", c->fail_why ? c->fail_why : "bad request");
      return;
    }
  }
  if (c->closing) return;
  if (c->in_off == c->in_len) { /* nothing unparsed: an idle connection holds no buffer */
    c->in_off = c->in_len = 0;
    if (c->state == SBH_IDLE) {
      free(c->in);
      c->in = NULL;
      c->in_cap = 0;
    }
  }
  if (c->read_eof && c->state != SBH_BUSY && c->state != SBH_WRITING) {
    conn_close(c); /* nothing more will come */
    return;
  }
  start_reading(c);
}

/* The answer is written: the next request (maybe already read). */
void sbh_conn_next(sbh_conn *c) {
  request_reset(c);
  c->state = SBH_IDLE;
  timer_set(c, c->srv->opt.limits.idle_timeout_s, on_timeout);
  conn_process(c);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  sbh_conn *c = h->data;
  if (c->in_off && c->in_len + READ_CHUNK > c->in_cap) {
    memmove(c->in, c->in + c->in_off, c->in_len - c->in_off); /* the unparsed bytes to the front */
    c->in_len -= c->in_off;
    c->in_off = 0;
  }
  /* start_reading keeps fewer than READ_AHEAD_MAX unparsed bytes: a chunk fits */
  if (c->in_len + READ_CHUNK > c->in_cap && c->in_len + READ_CHUNK <= READ_AHEAD_MAX + READ_CHUNK) {
    char *b = realloc(c->in, c->in_len + READ_CHUNK);
    if (b) {
      c->in = b;
      c->in_cap = c->in_len + READ_CHUNK;
    }
  }
  if (!c->in || c->in_len + READ_CHUNK > c->in_cap) *buf = uv_buf_init(NULL, 0);
  else *buf = uv_buf_init(c->in + c->in_len, READ_CHUNK);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf) {
  (void)buf;
  sbh_conn *c = st->data;
  if (n == 0) return;
  if (n < 0) {
    c->read_eof = true;
    uv_read_stop(st);
    c->reading = false;
    /* gone mid-request or with a request running: nobody reads the answer */
    if (c->state != SBH_WRITING) conn_close(c);
    return;
  }
  if (c->state == SBH_LINGER) return; /* read to be discarded */
  c->in_len += (size_t)n;
  conn_process(c);
}

static void start_reading(sbh_conn *c) {
  bool room = c->in_len - c->in_off < READ_AHEAD_MAX;
  if (room && !c->reading && !c->read_eof) {
    if (uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, on_read) == 0) c->reading = true;
  } else if (!room && c->reading) {
    uv_read_stop((uv_stream_t *)&c->tcp);
    c->reading = false;
  }
}

/* ---- accepting ----------------------------------------------------------- */

static void on_reject_closed(uv_handle_t *h) { free(h); }

void sbh_on_connection(uv_stream_t *l, int status) {
  sbh_server *s = l->data;
  if (status < 0 || s->stopping) return;
  if (s->n_conns >= s->opt.limits.max_connections) { /* accepted to be closed: the backlog must not fill */
    uv_tcp_t *t = malloc(sizeof *t);
    if (!t) return;
    uv_tcp_init(s->loop, t);
    if (uv_accept(l, (uv_stream_t *)t) == 0) s->counters[SBH_C_CONN_REFUSED]++;
    uv_close((uv_handle_t *)t, on_reject_closed);
    return;
  }
  sbh_conn *c = calloc(1, sizeof *c);
  if (!c) return;
  c->srv = s;
  uv_tcp_init(s->loop, &c->tcp);
  uv_timer_init(s->loop, &c->timer);
  c->handles = 2;
  c->tcp.data = c->timer.data = c;
  c->next = s->conns;
  if (s->conns) s->conns->prev = c;
  s->conns = c;
  s->n_conns++;
  if (uv_accept(l, (uv_stream_t *)&c->tcp) < 0) {
    conn_close(c);
    return;
  }
  s->counters[SBH_C_CONNECTIONS]++;
  uv_tcp_nodelay(&c->tcp, 1);
  http_parser_init(&c->parser, HTTP_REQUEST);
  c->parser.data = c;
  c->state = SBH_IDLE;
  timer_set(c, s->opt.limits.idle_timeout_s < s->opt.limits.header_timeout_s ? s->opt.limits.idle_timeout_s
                                                                           : s->opt.limits.header_timeout_s,
            on_timeout);
  start_reading(c);
}

/* ---- the server ---------------------------------------------------------- */

void sbh_drain(sbh_server *s) {
  if (!s || !s->listening) return;
  for (size_t i = 0; i < s->n_listeners; i++) uv_close((uv_handle_t *)&s->listeners[i], NULL);
  s->listening = false;
}

void sbh_stop(sbh_server *s) {
  if (!s) return;
  sbh_drain(s);
  s->stopping = true;
  while (s->conns) conn_close(s->conns);
}

