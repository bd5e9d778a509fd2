/* Client connection and the embedded daemon. */
#include "client.h"
#include "daemon.h"
#include "protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int connect_to(const char *path) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof a.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(a.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

/* surgeboxd next to our own binary, else $SURGEBOXD, else PATH. */
static void daemon_binary(char *out, size_t cap) {
  const char *env = getenv("SURGEBOXD");
  if (env && *env) {
    snprintf(out, cap, "%s", env);
    return;
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) {
      *slash = '\0';
      snprintf(out, cap, "%s/surgeboxd", self);
      if (access(out, X_OK) == 0) return;
    }
  }
  snprintf(out, cap, "surgeboxd");
}

static int start_embedded(sbc_conn *c, const char *const *extra, char *err, size_t err_len) {
  const char *base = getenv("XDG_RUNTIME_DIR");
  if (!base || !*base || access(base, W_OK) != 0) base = "/tmp";
  snprintf(c->private_dir, sizeof c->private_dir, "%s/surgebox-embedded-XXXXXX", base);
  if (!mkdtemp(c->private_dir)) {
    snprintf(err, err_len, "mkdtemp %s: %s", c->private_dir, strerror(errno));
    c->private_dir[0] = '\0';
    return -1;
  }
  snprintf(c->socket_path, sizeof c->socket_path, "%s/surgebox.sock", c->private_dir);
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) < 0) {
    snprintf(err, err_len, "pipe: %s", strerror(errno));
    return -1;
  }
  char bin[PATH_MAX], fdarg[16];
  daemon_binary(bin, sizeof bin);
  snprintf(fdarg, sizeof fdarg, "%d", ready[1]);
  /* a private daemon: short grace, its client waits for it at close */
  const char *argv[64] = {bin, "--socket", c->socket_path, "--ready-fd", fdarg, "--quiet", "--grace", "2"};
  size_t n = 8;
  for (; extra && *extra && n < 62; extra++) argv[n++] = *extra;
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(err, err_len, "fork: %s", strerror(errno));
    close(ready[0]);
    close(ready[1]);
    return -1;
  }
  if (pid == 0) {
    fcntl(ready[1], F_SETFD, 0); /* the one descriptor it inherits on purpose */
    setpgid(0, 0);               /* a Ctrl-C reaches us; we stop it cleanly */
    prctl(PR_SET_PDEATHSIG, SIGTERM); /* and if we die, it goes too */
    execvp(bin, (char *const *)argv);
    fprintf(stderr, "surgebox: cannot start %s: %s\n", bin, strerror(errno));
    _exit(127);
  }
  close(ready[1]);
  c->daemon_pid = pid;
  char buf[16] = "";
  struct pollfd p = {.fd = ready[0], .events = POLLIN};
  ssize_t got = poll(&p, 1, 30000) == 1 ? read(ready[0], buf, sizeof buf - 1) : -1;
  close(ready[0]);
  if (got < 6 || strncmp(buf, "ready\n", 6) != 0) {
    snprintf(err, err_len, "the embedded daemon (%s) did not start; see its messages above", bin);
    return -1;
  }
  return 0;
}

int sbc_open(sbc_conn *c, const char *socket_path, bool autostart, const char *const *extra_args, char *err,
             size_t err_len) {
  memset(c, 0, sizeof *c);
  c->fd = -1;
  const char *env = getenv("SURGEBOX_SOCKET");
  if (socket_path) snprintf(c->socket_path, sizeof c->socket_path, "%s", socket_path);
  else if (env && *env) snprintf(c->socket_path, sizeof c->socket_path, "%s", env);
  else sbd_default_socket(c->socket_path, sizeof c->socket_path);
  c->fd = connect_to(c->socket_path);
  if (c->fd >= 0) return 0;
  int e = errno;
  if (!autostart || (e != ENOENT && e != ECONNREFUSED)) {
    snprintf(err, err_len, "cannot connect to %s: %s%s", c->socket_path, strerror(e),
             autostart ? "" : " (and --no-autostart was given)");
    return -1;
  }
  if (start_embedded(c, extra_args, err, err_len) < 0) {
    sbc_close(c);
    return -1;
  }
  c->fd = connect_to(c->socket_path);
  if (c->fd < 0) {
    snprintf(err, err_len, "cannot connect to the embedded daemon at %s: %s", c->socket_path, strerror(errno));
    sbc_close(c);
    return -1;
  }
  return 0;
}

int sbc_send(sbc_conn *c, json_object *req) {
  size_t len;
  char *line = sbp_encode_line(req, &len);
  if (!line) return -1;
  size_t off = 0;
  while (off < len) {
    ssize_t n = send(c->fd, line + off, len - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      free(line);
      return -1;
    }
    off += (size_t)n;
  }
  free(line);
  return 0;
}

json_object *sbc_recv(sbc_conn *c) {
  for (;;) {
    char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
    if (nl) {
      size_t line_len = (size_t)(nl - c->buf);
      json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
      json_object *o = tok ? json_tokener_parse_ex(tok, c->buf, (int)line_len) : NULL;
      if (tok) json_tokener_free(tok);
      memmove(c->buf, nl + 1, c->len - line_len - 1);
      c->len -= line_len + 1;
      return o;
    }
    if (c->cap - c->len < 65536) {
      size_t ncap = c->cap ? c->cap * 2 : 131072;
      char *nb = realloc(c->buf, ncap);
      if (!nb) return NULL;
      c->buf = nb;
      c->cap = ncap;
    }
    ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return NULL;
    c->len += (size_t)n;
  }
}

void sbc_close(sbc_conn *c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
  if (c->daemon_pid > 0) {
    kill(c->daemon_pid, SIGTERM);
    int st;
    /* it drains (2 s grace); if it is stuck, SIGKILL: its sandboxes die with it (PDEATHSIG) */
    for (int i = 0; i < 100 && waitpid(c->daemon_pid, &st, WNOHANG) == 0; i++) usleep(50000);
    if (waitpid(c->daemon_pid, &st, WNOHANG) == 0) {
      kill(c->daemon_pid, SIGKILL);
      waitpid(c->daemon_pid, &st, 0);
    }
    c->daemon_pid = 0;
  }
  if (c->private_dir[0]) {
    char sock[4200];
    snprintf(sock, sizeof sock, "%s/surgebox.sock", c->private_dir);
    unlink(sock);
    rmdir(c->private_dir);
    c->private_dir[0] = '\0';
  }
  free(c->buf);
  c->buf = NULL;
  c->len = c->cap = 0;
}
