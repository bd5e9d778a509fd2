/* A fleet's endpoint list (issue 39), in the format the Python client
 * (clients/python/surgebox/fleet.py) and deploy/slurm/serve.sbatch share:
 * a file (one endpoint a line, "#" starts a comment) or a comma-separated
 * list; an endpoint is a Unix socket ("/run/sb.sock" or "unix:/run/sb.sock")
 * or an HTTP URL ("http://HOST:PORT"), the latter with "token=T" or
 * "token-file=F" after a space. docs/clusters.md, "Endpoint lists". */
#ifndef SURGEBOX_ENDPOINTS_H
#define SURGEBOX_ENDPOINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

typedef struct {
  bool http;
  char name[512];                /* the socket's path, or the URL without a trailing "/" */
  struct sockaddr_storage addr;  /* HTTP: resolved once, when the list is read */
  socklen_t addr_len;
  char host[300];                /* HTTP: the Host header */
  char *token;                   /* HTTP: the bearer token, or NULL */
} sbc_endpoint;

typedef struct {
  sbc_endpoint *v;
  size_t n;
} sbc_endpoints;

/* spec: a file's path or a comma-separated list. 0, or -1 with err set to
 * one line naming the bad entry and the next step. */
int sbc_endpoints_parse(const char *spec, sbc_endpoints *out, char *err, size_t err_len);
void sbc_endpoints_free(sbc_endpoints *e);

#endif
