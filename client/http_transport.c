/* One HTTP/1.1 exchange without blocking: http_transport.h. */
#include "http_transport.h"

#include <errno.h>
#include <fcntl.h>
#include <http_parser.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* an answer larger than this is not the daemon's (its own cap is 256 MiB) */
#define MAX_ANSWER_BYTES ((size_t)512 << 20)

struct sbc_http_call {
  int fd;
  bool connected;
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

sbc_http_call *sbc_http_start(const sbc_endpoint *ep, const char *method, const char *path, const char *body,
                              size_t body_len, char *err, size_t err_len) {
  sbc_http_call *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  h->fd = -1;
  char head[4096];
  int n = snprintf(head, sizeof head,
                   "%s %s HTTP/1.1\r\nHost: %s\r\n%s%s%sContent-Type: application/json\r\nContent-Length: %zu\r\n"
                   "Connection: close\r\n\r\n",
                   method, path, ep->host, ep->token ? "Authorization: Bearer " : "", ep->token ? ep->token : "",
                   ep->token ? "\r\n" : "", body ? body_len : 0);
  if (n < 0 || (size_t)n >= sizeof head || !(h->out = malloc((size_t)n + (body ? body_len : 0)))) {
    snprintf(err, err_len, "the request's head is too long (a token of %zu bytes?)", ep->token ? strlen(ep->token) : 0);
    free(h);
    return NULL;
  }
  memcpy(h->out, head, (size_t)n);
  if (body) memcpy(h->out + n, body, body_len);
  h->out_len = (size_t)n + (body ? body_len : 0);
  h->fd = socket(ep->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (h->fd < 0 || (connect(h->fd, (const struct sockaddr *)&ep->addr, ep->addr_len) < 0 && errno != EINPROGRESS)) {
    snprintf(err, err_len, "connecting: %s", strerror(errno));
    sbc_http_free(h);
    return NULL;
  }
  http_parser_init(&h->parser, HTTP_RESPONSE);
  h->parser.data = h;
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
    if (n <= 0) return fail(err, err_len, "sending", errno);
    h->out_off += (size_t)n;
  }
  for (;;) {
    char buf[65536];
    ssize_t n = recv(h->fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (n < 0) return fail(err, err_len, "receiving", errno);
    size_t used = http_parser_execute(&h->parser, &h->settings, buf, (size_t)n);
    if (h->complete) return 1;
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

void sbc_http_free(sbc_http_call *h) {
  if (!h) return;
  if (h->fd >= 0) close(h->fd);
  free(h->out);
  free(h->body);
  free(h);
}
