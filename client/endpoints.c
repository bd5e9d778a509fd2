/* Reading a fleet's endpoint list: endpoints.h. */
#include "endpoints.h"

#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char next_step[] = "an endpoint is a Unix socket's absolute path or http://HOST:PORT [token=T|token-file=F]";

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
  return s;
}

static int read_token(const char *path, char **token, const char *where, char *err, size_t err_len) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, err_len, "%s: token-file %s: %s; give a readable file holding the daemon's token", where, path,
             strerror(errno));
    return -1;
  }
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *t = trim(buf);
  if (!*t) {
    snprintf(err, err_len, "%s: token-file %s is empty; write the daemon's token into it", where, path);
    return -1;
  }
  *token = strdup(t);
  return *token ? 0 : -1;
}

/* "http://HOST[:PORT][/...]" -> host, port (a path is ignored, as the Python client does) */
static int parse_url(sbc_endpoint *e, const char *url, const char *where, char *err, size_t err_len) {
  const char *h = url + 7, *end = h + strcspn(h, "/");
  char hostport[300];
  if ((size_t)(end - h) >= sizeof hostport || end == h) {
    snprintf(err, err_len, "%s: no host in '%s'; %s", where, url, next_step);
    return -1;
  }
  memcpy(hostport, h, (size_t)(end - h));
  hostport[end - h] = '\0';
  snprintf(e->host, sizeof e->host, "%s", hostport);
  char *host = hostport, *port = NULL;
  if (*host == '[') { /* [v6]:port */
    char *close = strchr(host, ']');
    if (!close) {
      snprintf(err, err_len, "%s: unclosed '[' in '%s'; %s", where, url, next_step);
      return -1;
    }
    *close = '\0';
    host++;
    if (close[1] == ':') port = close + 2;
  } else if ((port = strchr(host, ':'))) {
    *port++ = '\0';
  }
  if (!*host) {
    snprintf(err, err_len, "%s: no host in '%s'; %s", where, url, next_step);
    return -1;
  }
  if (port) {
    char *stop;
    long p = strtol(port, &stop, 10);
    if (!*port || *stop || p < 1 || p > 65535) {
      snprintf(err, err_len, "%s: port '%s' of '%s' is not a number from 1 to 65535; %s", where, port, url, next_step);
      return -1;
    }
  }
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
  int rc = getaddrinfo(host, port ? port : "80", &hints, &ai);
  if (rc || !ai) {
    snprintf(err, err_len, "%s: host '%s' does not resolve (%s); give an address or a name this machine resolves",
             where, host, gai_strerror(rc));
    return -1;
  }
  memcpy(&e->addr, ai->ai_addr, ai->ai_addrlen);
  e->addr_len = ai->ai_addrlen;
  freeaddrinfo(ai);
  return 0;
}

/* One entry: "URL-or-path [token=T|token-file=F]". where: how to name it in errors. */
static int parse_entry(sbc_endpoint *e, char *entry, const char *where, char *err, size_t err_len) {
  char *save = NULL, *url = strtok_r(entry, " \t", &save);
  if (!strncmp(url, "unix:", 5)) url += 5;
  if (!strncmp(url, "http://", 7)) {
    e->http = true;
    size_t n = strlen(url);
    while (n > 7 && url[n - 1] == '/') url[--n] = '\0';
  } else if (url[0] != '/') {
    snprintf(err, err_len, "%s: '%s' is neither; %s", where, url, next_step);
    return -1;
  }
  if (strlen(url) >= sizeof e->name) {
    snprintf(err, err_len, "%s: '%.60s...' is too long; use a shorter path", where, url);
    return -1;
  }
  snprintf(e->name, sizeof e->name, "%s", url);
  if (e->http && parse_url(e, url, where, err, err_len) < 0) return -1;
  for (char *extra; (extra = strtok_r(NULL, " \t", &save));) {
    free(e->token);
    e->token = NULL;
    if (!strncmp(extra, "token=", 6)) {
      if (!(e->token = strdup(extra + 6))) return -1;
    } else if (!strncmp(extra, "token-file=", 11)) {
      if (read_token(extra + 11, &e->token, where, err, err_len) < 0) return -1;
    } else {
      snprintf(err, err_len, "%s: unknown setting '%s' after %s; write token=T or token-file=F", where, extra, url);
      return -1;
    }
    if (!e->http) {
      snprintf(err, err_len, "%s: a token for the Unix socket %s; tokens are for http:// endpoints, drop it", where,
               url);
      return -1;
    }
  }
  return 0;
}

static int add(sbc_endpoints *out, char *entry, const char *where, char *err, size_t err_len) {
  sbc_endpoint *v = realloc(out->v, (out->n + 1) * sizeof *v);
  if (!v) {
    snprintf(err, err_len, "out of memory");
    return -1;
  }
  out->v = v;
  sbc_endpoint *e = &v[out->n++];
  memset(e, 0, sizeof *e);
  if (parse_entry(e, entry, where, err, err_len) < 0) return -1;
  for (size_t i = 0; i + 1 < out->n; i++)
    if (!strcmp(v[i].name, e->name)) {
      snprintf(err, err_len, "%s: %s is listed twice; list each daemon once", where, e->name);
      return -1;
    }
  return 0;
}

int sbc_endpoints_parse(const char *spec, sbc_endpoints *out, char *err, size_t err_len) {
  memset(out, 0, sizeof *out);
  struct stat st;
  int rc = 0;
  char where[4200];
  if (stat(spec, &st) == 0 && S_ISREG(st.st_mode)) { /* a file, as the Python client reads one */
    FILE *f = fopen(spec, "r");
    if (!f) {
      snprintf(err, err_len, "endpoints file %s: %s; make it readable", spec, strerror(errno));
      return -1;
    }
    char line[8192];
    for (int no = 1; rc == 0 && fgets(line, sizeof line, f); no++) {
      line[strcspn(line, "#")] = '\0';
      char *s = trim(line);
      if (!*s) continue;
      snprintf(where, sizeof where, "endpoints file %s line %d", spec, no);
      rc = add(out, s, where, err, err_len);
    }
    fclose(f);
  } else {
    char *copy = strdup(spec), *save = NULL;
    if (!copy) return -1;
    int no = 1;
    for (char *item = strtok_r(copy, ",", &save); rc == 0 && item; item = strtok_r(NULL, ",", &save), no++) {
      char *s = trim(item);
      if (!*s) continue;
      snprintf(where, sizeof where, "endpoint %d of the list", no);
      rc = add(out, s, where, err, err_len);
    }
    free(copy);
    if (rc == 0 && out->n == 0 && spec[0] == '/' && !strchr(spec, ',')) {
      snprintf(err, err_len, "endpoints '%s' name no file and no endpoint; give a file or a list", spec);
      rc = -1;
    }
  }
  if (rc == 0 && out->n == 0) {
    snprintf(err, err_len, "the endpoint list '%s' is empty; list at least one daemon (%s)", spec, next_step);
    rc = -1;
  }
  if (rc < 0) sbc_endpoints_free(out);
  return rc;
}

void sbc_endpoints_free(sbc_endpoints *e) {
  for (size_t i = 0; i < e->n; i++) free(e->v[i].token);
  free(e->v);
  e->v = NULL;
  e->n = 0;
}
