/* The server's start and end: the addresses parsed and bound, the bearer
 * token and languages.json read, and server.c handed what to call for a
 * request (routes.c) and for a connection that goes with its request
 * unanswered (submit.c), so that server.c includes nothing of them. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sbh_parse_addr(const char *str, struct sockaddr_storage *out, bool *loopback) {
  char host[128];
  const char *colon = strrchr(str, ':');
  if (!colon || colon == str) return -1;
  const char *h = str;
  size_t hl = (size_t)(colon - str);
  if (*h == '[') {
    if (hl < 2 || h[hl - 1] != ']') return -1;
    h++;
    hl -= 2;
  }
  if (hl == 0 || hl >= sizeof host) return -1;
  memcpy(host, h, hl);
  host[hl] = '\0';
  char *end;
  errno = 0;
  long port = strtol(colon + 1, &end, 10);
  if (errno || end == colon + 1 || *end || port < 0 || port > 65535) return -1;
  memset(out, 0, sizeof *out);
  if (str[0] == '[') {
    if (uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)out) != 0) return -1;
    const struct in6_addr *a = &((struct sockaddr_in6 *)out)->sin6_addr;
    *loopback = IN6_IS_ADDR_LOOPBACK(a);
  } else {
    if (uv_ip4_addr(host, (int)port, (struct sockaddr_in *)out) != 0) return -1;
    *loopback = (ntohl(((struct sockaddr_in *)out)->sin_addr.s_addr) >> 24) == 127;
  }
  return 0;
}

/* Every --http address parsed; *any_remote when one is not loopback. */
static int parse_all(const sbh_options *opt, struct sockaddr_storage *addrs, bool *any_remote, char *err, size_t n) {
  *any_remote = false;
  for (size_t i = 0; i < opt->n_listen; i++) {
    bool lo = false;
    if (sbh_parse_addr(opt->listen[i], &addrs[i], &lo) < 0) {
      snprintf(err, n, "--http %s: not ADDR:PORT (an IPv4 address or [IPv6], then a port): e.g. 127.0.0.1:8080",
               opt->listen[i]);
      return -1;
    }
    *any_remote |= !lo;
  }
  return 0;
}

/* The token (required off loopback) and languages.json. */
static int read_files(sbh_server *s, bool any_remote, char *err, size_t n) {
  const sbh_options *opt = &s->opt;
  if (opt->token_file && sbh_token_load(opt->token_file, &s->token, err, n) < 0) return -1;
  if (any_remote && !s->token) {
    snprintf(err, n,
             "--http on a non-loopback address needs --http-token-file FILE (a bearer token clients send): "
             "refusing to serve sandboxes to the network without one");
    return -1;
  }
  char lpath[4096];
  if (opt->languages_file) snprintf(lpath, sizeof lpath, "%s", opt->languages_file);
  else sbh_languages_default_path(lpath, sizeof lpath);
  return sbh_languages_load(&s->langs, lpath, err, n);
}

/* The address a listener got ("127.0.0.1:8080", "[::1]:8080") appended to s->bound. */
static void add_bound(sbh_server *s, uv_tcp_t *t) {
  struct sockaddr_storage got;
  int gl = sizeof got;
  char host[64] = "?";
  int port = 0;
  if (uv_tcp_getsockname(t, (struct sockaddr *)&got, &gl) == 0) {
    if (got.ss_family == AF_INET6) {
      uv_ip6_name((struct sockaddr_in6 *)&got, host, sizeof host);
      port = ntohs(((struct sockaddr_in6 *)&got)->sin6_port);
    } else {
      uv_ip4_name((struct sockaddr_in *)&got, host, sizeof host);
      port = ntohs(((struct sockaddr_in *)&got)->sin_port);
    }
  }
  bool v6 = got.ss_family == AF_INET6;
  size_t bl = strlen(s->bound);
  snprintf(s->bound + bl, sizeof s->bound - bl, "%s%s%s%s:%d", bl ? " " : "", v6 ? "[" : "", host, v6 ? "]" : "",
           port);
}

static int listen_all(sbh_server *s, const struct sockaddr_storage *addrs, char *err, size_t n) {
  for (size_t i = 0; i < s->opt.n_listen; i++) {
    uv_tcp_t *t = &s->listeners[i];
    uv_tcp_init(s->loop, t);
    t->data = s;
    s->n_listeners++;
    int rc = uv_tcp_bind(t, (const struct sockaddr *)&addrs[i], 0);
    if (rc == 0) rc = uv_listen((uv_stream_t *)t, 511, sbh_on_connection);
    if (rc < 0) {
      snprintf(err, n, "--http %s: %s", s->opt.listen[i], uv_strerror(rc));
      return -1;
    }
    add_bound(s, t);
  }
  return 0;
}

int sbh_start(sbh_server **out, uv_loop_t *loop, const sbh_options *opt, const sbh_daemon *d, char *err, size_t n) {
  *out = NULL;
  sbh_server *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(err, n, "out of memory");
    return -1;
  }
  s->loop = loop;
  s->opt = *opt;
  s->d = *d;
  s->calls = (sbh_conn_calls){.request = sbh_route, .is_public = sbh_route_is_public, .orphan = sbh_req_orphan};
  if (gethostname(s->hostname, sizeof s->hostname) < 0) snprintf(s->hostname, sizeof s->hostname, "localhost");
  s->hostname[sizeof s->hostname - 1] = '\0';
  struct sockaddr_storage addrs[SBH_MAX_LISTEN];
  bool any_remote = false;
  if (parse_all(opt, addrs, &any_remote, err, n) < 0 || read_files(s, any_remote, err, n) < 0) goto fail;
  /* http_parser's own cap (process-wide) is ours, so both agree */
  http_parser_set_max_header_size((uint32_t)opt->limits.max_header_bytes);
  if (listen_all(s, addrs, err, n) < 0) goto fail;
  s->listening = true;
  *out = s;
  return 0;
fail:
  for (size_t i = 0; i < s->n_listeners; i++) uv_close((uv_handle_t *)&s->listeners[i], NULL);
  s->n_listeners = 0;
  s->stopping = true;
  *out = s; /* freed by sbh_free once the loop closed the listeners */
  return -1;
}

void sbh_free(sbh_server *s) {
  if (!s) return;
  free(s->token);
  sbh_languages_free(&s->langs);
  free(s);
}

const char *sbh_bound(const sbh_server *s) { return s->bound; }
