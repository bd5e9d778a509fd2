/* One HTTP/1.1 exchange without blocking: http_transport.h. */
#include "http_transport.h"

#include <errno.h>
#include <fcntl.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* an answer larger than this is not the daemon's (its own cap is 256 MiB) */
#define MAX_ANSWER_BYTES ((size_t)512 << 20)

struct sbc_http_call {
  const sbc_endpoint *ep;
  int fd;
  bool connected;
  bool reused;     /* fd came from a pool: the server may have closed it meanwhile */
  bool answer_read; /* a byte of the answer arrived: the request is never sent again */
  bool keepable;   /* complete, keep-alive, nothing read beyond the answer */
  char *out;
  size_t out_len, out_off;
  http_parser parser;
  http_parser_settings settings;
  char *body;
  size_t body_len, body_cap;
  bool complete, too_big;
};

static int on_body(http_parser *p, const char *at, size_t len) {
  sbc_http_call *h = p->data;
  if (h->body_len + len + 1 > MAX_ANSWER_BYTES) {
    h->too_big = true;
    return 1;
  }
  if (h->body_len + len + 1 > h->body_cap) {
    size_t cap = h->body_cap ? h->body_cap : 65536;
    while (cap < h->body_len + len + 1) cap *= 2;
    char *b = realloc(h->body, cap);
    if (!b) return 1;
    h->body = b;
    h->body_cap = cap;
  }
  memcpy(h->body + h->body_len, at, len);
  h->body_len += len;
  h->body[h->body_len] = '\0';
  return 0;
}

static int on_complete(http_parser *p) {
  ((sbc_http_call *)p->data)->complete = true;
  return 0;
}

/* An idle pooled connection is usable when the server has neither closed
 * it nor sent anything on it (one non-blocking peek). */
static bool idle_usable(int fd) {
  char c;
  ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

static void parser_reset(sbc_http_call *h) {
  http_parser_init(&h->parser, HTTP_RESPONSE);
  h->parser.data = h;
  h->body_len = 0;
  h->complete = h->too_big = false;
}

static int open_fresh(sbc_http_call *h) {
  h->fd = socket(h->ep->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (h->fd < 0) return -1;
  if (connect(h->fd, (const struct sockaddr *)&h->ep->addr, h->ep->addr_len) < 0 && errno != EINPROGRESS) return -1;
  if (h->ep->addr.ss_family != AF_UNIX) setsockopt(h->fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
  h->connected = h->reused = false;
  return 0;
}

sbc_http_call *sbc_http_start(const sbc_endpoint *ep, const char *method, const char *path, const char *body,
                              size_t body_len, int idle_fd, char *err, size_t err_len) {
  sbc_http_call *h = calloc(1, sizeof *h);
  if (!h) {
    if (idle_fd >= 0) close(idle_fd);
    return NULL;
  }
  h->ep = ep;
  h->fd = -1;
  char head[4096];
  int n = snprintf(head, sizeof head,
                   "%s %s HTTP/1.1\r\nHost: %s\r\n%s%s%sContent-Type: application/json\r\nContent-Length: %zu\r\n"
                   "\r\n",
                   method, path, ep->host, ep->token ? "Authorization: Bearer " : "", ep->token ? ep->token : "",
                   ep->token ? "\r\n" : "", body ? body_len : 0);
  if (n < 0 || (size_t)n >= sizeof head || !(h->out = malloc((size_t)n + (body ? body_len : 0)))) {
    snprintf(err, err_len, "the request's head is too long (a token of %zu bytes?)", ep->token ? strlen(ep->token) : 0);
    if (idle_fd >= 0) close(idle_fd);
    free(h);
    return NULL;
  }
  memcpy(h->out, head, (size_t)n);
  if (body) memcpy(h->out + n, body, body_len);
  h->out_len = (size_t)n + (body ? body_len : 0);
  if (idle_fd >= 0 && idle_usable(idle_fd)) {
    h->fd = idle_fd;
    h->connected = h->reused = true;
  } else {
    if (idle_fd >= 0) close(idle_fd);
    if (open_fresh(h) < 0) {
      snprintf(err, err_len, "connecting: %s", strerror(errno));
      sbc_http_free(h);
      return NULL;
    }
  }
  parser_reset(h);
  http_parser_settings_init(&h->settings);
  h->settings.on_body = on_body;
  h->settings.on_message_complete = on_complete;
  return h;
}

int sbc_http_fd(const sbc_http_call *h) { return h->fd; }
short sbc_http_events(const sbc_http_call *h) { return h->out_off < h->out_len ? POLLOUT : POLLIN; }

static int fail(char *err, size_t err_len, const char *what, int e) {
  snprintf(err, err_len, "%s: %s", what, e ? strerror(e) : "the daemon closed the connection before answering");
  return -1;
}

/* A pooled connection that failed before any byte of the answer: the
 * server closed it (its idle timeout, its request cap) before reading our
 * request, so the request was not processed and goes once more on a fresh
 * connection. 1 done, 0 not this case. */
static int reopen_stale(sbc_http_call *h) {
  if (!h->reused || h->answer_read) return 0;
  close(h->fd);
  h->fd = -1;
  h->out_off = 0;
  parser_reset(h);
  if (open_fresh(h) < 0) return 0; /* fails as a fresh connection would */
  return 1;
}

int sbc_http_step(sbc_http_call *h, short revents, char *err, size_t err_len) {
  if (!h->connected && (revents & (POLLOUT | POLLERR | POLLHUP))) {
    int e = 0;
    socklen_t len = sizeof e;
    getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &e, &len);
    if (e) return fail(err, err_len, "connecting", e);
    h->connected = true;
  }
  while (h->out_off < h->out_len) {
    ssize_t n = send(h->fd, h->out + h->out_off, h->out_len - h->out_off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (n <= 0) return reopen_stale(h) ? 0 : fail(err, err_len, "sending", errno);
    h->out_off += (size_t)n;
  }
  for (;;) {
    char buf[65536];
    ssize_t n = recv(h->fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (n <= 0 && reopen_stale(h)) return 0;
    if (n < 0) return fail(err, err_len, "receiving", errno);
    if (n > 0) h->answer_read = true;
    size_t used = http_parser_execute(&h->parser, &h->settings, buf, (size_t)n);
    if (h->complete) {
      h->keepable = used == (size_t)n && http_should_keep_alive(&h->parser);
      return 1;
    }
    if (h->too_big) return fail(err, err_len, "an answer above 512 MiB", EMSGSIZE);
    if (used != (size_t)n || HTTP_PARSER_ERRNO(&h->parser) != HPE_OK) {
      snprintf(err, err_len, "an answer that is not HTTP: %s", http_errno_description(HTTP_PARSER_ERRNO(&h->parser)));
      return -1;
    }
    if (n == 0) return fail(err, err_len, "receiving", 0);
  }
}

int sbc_http_status(const sbc_http_call *h) { return (int)h->parser.status_code; }
const char *sbc_http_body(const sbc_http_call *h, size_t *len) {
  if (len) *len = h->body_len;
  return h->body ? h->body : "";
}

int sbc_http_release(sbc_http_call *h) {
  int fd = h->keepable ? h->fd : -1;
  if (fd >= 0) h->fd = -1;
  sbc_http_free(h);
  return fd;
}

void sbc_http_free(sbc_http_call *h) {
  if (!h) return;
  if (h->fd >= 0) close(h->fd);
  free(h->out);
  free(h->body);
  free(h);
}
