/* Client connection and the embedded daemon. */
#include "client.h"
#include "runtime_paths.h"
#include "protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

/* Wait for "ready\n" on the pipe the daemon got as --ready-fd. Only the
 * daemon holds its write end: EOF means it exited. While it lives it is
 * waited for: a first toolchain detection on a loaded machine took over
 * 3 minutes of wall time for 11 s of CPU (it says so on stderr), and a
 * fixed deadline turned that into "did not start". READY_CEILING_S bounds
 * a daemon that hangs; after READY_NOTE_S the user hears why nothing moves. */
#define READY_NOTE_S 60
#define READY_CEILING_S 1800
static int wait_ready(int fd, const char *bin, char *err, size_t err_len) {
  char buf[16] = "";
  struct pollfd p = {.fd = fd, .events = POLLIN};
  ssize_t got = -1;
  for (int waited = 0; waited < READY_CEILING_S; waited += READY_NOTE_S) {
    int r = poll(&p, 1, READY_NOTE_S * 1000);
    if (r < 0 && errno == EINTR) continue;
    if (r == 1) {
      got = read(fd, buf, sizeof buf - 1);
      break;
    }
    if (r < 0) break;
    fprintf(stderr, "surgebox: still waiting for the embedded daemon (%s) to say it is ready (%d s so far)\n", bin,
            waited + READY_NOTE_S);
  }
  close(fd);
  if (got < 6 || strncmp(buf, "ready\n", 6) != 0) {
    if (got < 0)
      snprintf(err, err_len, "the embedded daemon (%s) did not say it was ready within %d s; see its messages above",
               bin, READY_CEILING_S);
    else
      snprintf(err, err_len, "the embedded daemon (%s) did not start; see its messages above", bin);
    return -1;
  }
  return 0;
}

/* Fork and exec a daemon given ready[1] as its --ready-fd. lingering: in
 * its own session and not our child (double fork), stdin/stdout /dev/null
 * (`out=$(surgebox exec ...)` must not wait for it); else in its own
 * process group (a Ctrl-C reaches us; we stop it cleanly) and killed if we
 * die. Returns its pid (lingering: 0), or -1; closes ready[1] either way. */
static pid_t spawn_daemon(const char *const *argv, int ready[2], bool lingering, int err_fd, char *err, size_t err_len) {
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(err, err_len, "fork: %s", strerror(errno));
    close(ready[0]);
    close(ready[1]);
    return -1;
  }
  if (pid == 0) {
    if (lingering) {
      setsid();
      if (fork() != 0) _exit(0);
      int null = open("/dev/null", O_RDWR | O_CLOEXEC);
      if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
      }
      if (err_fd >= 0) dup2(err_fd, STDERR_FILENO); /* its log: not the user's terminal, after every idle restart */
    } else {
      setpgid(0, 0);
      prctl(PR_SET_PDEATHSIG, SIGTERM);
    }
    fcntl(ready[1], F_SETFD, 0); /* the one descriptor it inherits on purpose */
    /* unprivileged, the daemon is uid 0 of its own user namespace and would
     * look in root's /var/lib/surgebox/profiles: it gets the user's own
     * directory, where `surgebox profile list` and doctor look (issue 36) */
    if (geteuid() != 0 && !getenv("SURGEBOX_PROFILES")) setenv("SURGEBOX_PROFILES", sbu_profiles_dir(), 1);
    execvp(argv[0], (char *const *)argv);
    fprintf(stderr, "surgebox: cannot start %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(ready[1]);
  if (!lingering) return pid;
  int st;
  waitpid(pid, &st, 0);
  return 0;
}

/* $SURGEBOX_IDLE_TIMEOUT, else 300 s: how long a private daemon lingers. 0: it stops with its client. */
static double idle_timeout(void) {
  const char *s = getenv("SURGEBOX_IDLE_TIMEOUT");
  char *end;
  double v = s && *s ? strtod(s, &end) : 300;
  return s && *s && (*end || !(v >= 0)) ? 300 : v;
}

/* The lingering daemon's socket: next to the one asked for, named after the
 * daemon binary (path, size, mtime: a rebuilt binary gets a new daemon). */
static int linger_path(const char *sock, const char *bin, char *out, size_t cap) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  struct stat st;
  char id[PATH_MAX + 64];
  int n = snprintf(id, sizeof id, "%s|%lld|%lld", bin, stat(bin, &st) == 0 ? (long long)st.st_size : 0ll,
                   stat(bin, &st) == 0 ? (long long)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec : 0ll);
  for (int i = 0; i < n; i++) h = (h ^ (unsigned char)id[i]) * 1099511628211ull;
  struct sockaddr_un a;
  n = snprintf(out, cap, "%s.private-%08x", sock, (unsigned)(h ^ (h >> 32)));
  return n > 0 && (size_t)n < cap && (size_t)n < sizeof a.sun_path ? 0 : -1;
}

/* Start a private daemon that outlives us: its own session, not our child
 * (double fork), stdin/stdout /dev/null, stderr and log into its log file
 * (it starts again after each idle timeout: its start-up warnings on the
 * user's terminal every time said nothing new; doctor shows them). It exits
 * after --idle-timeout with nobody connected. */
static int start_lingering(sbc_conn *c, const char *bin, double idle, char *err, size_t err_len) {
  char idle_arg[32], log[4200], fdarg[16];
  snprintf(idle_arg, sizeof idle_arg, "%g", idle);
  snprintf(log, sizeof log, "%s.log", c->socket_path);
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) < 0) {
    snprintf(err, err_len, "pipe: %s", strerror(errno));
    return -1;
  }
  snprintf(fdarg, sizeof fdarg, "%d", ready[1]);
  const char *argv[] = {bin, "--socket", c->socket_path, "--ready-fd", fdarg, "--quiet", "--grace", "2",
                        "--idle-timeout", idle_arg, "--log-file", log, NULL};
  int log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  pid_t pid = spawn_daemon(argv, ready, true, log_fd, err, err_len);
  if (log_fd >= 0) close(log_fd);
  if (pid < 0) return -1;
  if (wait_ready(ready[0], bin, err, err_len) == 0) return 0;
  if (log_fd >= 0) snprintf(err, err_len, "the private daemon (%s) did not start: its messages are in %s", bin, log);
  return -1;
}

/* Connect to the lingering private daemon for sock, starting it if needed.
 * Under <linger socket>.lock: the daemon takes the same lock before it
 * leaves (server.c), so we either connect before it looks or find no socket. */
static int open_lingering(sbc_conn *c, const char *sock, double idle, char *err, size_t err_len) {
  char bin[PATH_MAX], lock[4300];
  daemon_binary(bin, sizeof bin);
  if (linger_path(sock, bin, c->socket_path, sizeof c->socket_path) < 0) return 1;
  snprintf(lock, sizeof lock, "%s.lock", c->socket_path);
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", c->socket_path);
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) {
    *slash = '\0';
    mkdir(dir, 0755);
  }
  int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lfd < 0) return 1; /* not writable here: the private daemon that stops with us */
  while (flock(lfd, LOCK_EX) < 0 && errno == EINTR) {
  }
  c->fd = connect_to(c->socket_path);
  int rc = 0;
  if (c->fd < 0) {
    rc = start_lingering(c, bin, idle, err, err_len);
    c->started = rc == 0;
    if (rc == 0 && (c->fd = connect_to(c->socket_path)) < 0) {
      snprintf(err, err_len, "cannot connect to the embedded daemon at %s: %s", c->socket_path, strerror(errno));
      rc = -1;
    }
  }
  close(lfd);
  return rc;
}

static int start_embedded(sbc_conn *c, const char *const *extra, char *err, size_t err_len) {
  char base[4096];
  if (sbu_socket_dir(geteuid(), base, sizeof base) < 0 || (mkdir(base, 0755) < 0 && errno != EEXIST)) {
    snprintf(err, err_len, "no runtime directory for the embedded daemon: %s", base);
    return -1;
  }
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
  pid_t pid = spawn_daemon(argv, ready, false, -1, err, err_len);
  if (pid < 0) return -1;
  c->daemon_pid = pid;
  return wait_ready(ready[0], bin, err, err_len);
}

/* A socket we may not open (EACCES): a daemon we are not allowed to use. */
static void refused_error(const char *path, char *err, size_t err_len) {
  snprintf(err, err_len,
           "cannot connect to %s: you are not allowed to use this daemon (its socket's mode and group keep you out): ask "
           "its administrator to add you to the socket's group (ls -l %s names it)",
           path, path);
}

/* Why nothing answers at an explicitly named socket, and what to do. */
static void explicit_error(const char *path, int e, bool from_env, char *err, size_t err_len) {
  if (e == ENOENT || e == ECONNREFUSED)
    snprintf(err, err_len, "no daemon answers at %s: start one with surgeboxd --socket %s, or %s", path, path,
             from_env ? "unset SURGEBOX_SOCKET" : "drop --socket");
  else if (e == EACCES)
    refused_error(path, err, err_len);
  else
    snprintf(err, err_len, "cannot connect to %s: %s", path, strerror(e));
}

int sbc_open(sbc_conn *c, const char *socket_path, bool autostart, const char *const *extra_args, char *err,
             size_t err_len) {
  memset(c, 0, sizeof *c);
  c->fd = -1;
  const char *env = getenv("SURGEBOX_SOCKET");
  bool from_env = !socket_path && env && *env;
  if (socket_path) snprintf(c->socket_path, sizeof c->socket_path, "%s", socket_path);
  else if (from_env) snprintf(c->socket_path, sizeof c->socket_path, "%s", env);
  else sbu_default_socket(geteuid(), c->socket_path, sizeof c->socket_path);
  c->fd = connect_to(c->socket_path);
  if (c->fd >= 0) return 0;
  int e = errno;
  /* a socket named explicitly is the one asked for: never a daemon beside it */
  if (socket_path || from_env) {
    explicit_error(c->socket_path, e, from_env || (env && !strcmp(env, socket_path)), err, err_len);
    return -1;
  }
  if (!autostart || (e != ENOENT && e != ECONNREFUSED)) {
    if (e == ENOENT || e == ECONNREFUSED)
      snprintf(err, err_len, "no daemon answers at %s (the default socket): start one with surgeboxd", c->socket_path);
    else if (e == EACCES)
      refused_error(c->socket_path, err, err_len);
    else
      snprintf(err, err_len, "cannot connect to %s: %s", c->socket_path, strerror(e));
    return -1;
  }
  /* The CLI's one-off calls share a lingering daemon; runs that ask for
   * their own settings (extra_args) get one that stops with them. */
  double idle = idle_timeout();
  if (idle > 0 && !extra_args) {
    char sock[sizeof c->socket_path];
    snprintf(sock, sizeof sock, "%s", c->socket_path);
    int rc = open_lingering(c, sock, idle, err, err_len);
    if (rc == 0) return 0;
    if (rc < 0) {
      sbc_close(c);
      return -1;
    }
    snprintf(c->socket_path, sizeof c->socket_path, "%s", sock); /* rc 1: no place for it */
  }
  if (start_embedded(c, extra_args, err, err_len) < 0) {
    sbc_close(c);
    return -1;
  }
  c->started = true;
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

bool sbc_has_line(const sbc_conn *c) { return c->len > c->start && memchr(c->buf + c->start, '\n', c->len - c->start); }

int sbc_recv_raw(sbc_conn *c, const char **line, size_t *len) {
  for (;;) {
    char *from = c->buf + c->start, *nl = c->len > c->start ? memchr(from, '\n', c->len - c->start) : NULL;
    if (nl) {
      *line = from;
      *len = (size_t)(nl - from);
      c->start += *len + 1; /* the line stays where it is until the next call: no copy per answer */
      return 1;
    }
    if (c->start) { /* what is left moves to the front, once per read, not once per line */
      memmove(c->buf, c->buf + c->start, c->len - c->start);
      c->len -= c->start;
      c->start = 0;
    }
    if (c->cap - c->len < 65536) {
      size_t ncap = c->cap ? c->cap * 2 : 131072;
      char *nb = realloc(c->buf, ncap);
      if (!nb) return 0;
      c->buf = nb;
      c->cap = ncap;
    }
    ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    c->len += (size_t)n;
  }
}

static json_object *recv_parsed(sbc_conn *c, const char **line, size_t *len, bool trim) {
  const char *from;
  size_t line_len;
  if (!sbc_recv_raw(c, &from, &line_len)) return NULL;
  if (line) *line = from;
  if (len) *len = line_len;
  return sbc_trimmer_parse(&c->parse, from, line_len, trim); /* one parser for every answer */
}

json_object *sbc_recv_line(sbc_conn *c, const char **line, size_t *len) { return recv_parsed(c, line, len, false); }
json_object *sbc_recv_trimmed(sbc_conn *c, const char **line, size_t *len) { return recv_parsed(c, line, len, true); }

json_object *sbc_recv(sbc_conn *c) { return sbc_recv_line(c, NULL, NULL); }

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
  sbc_trimmer_free(&c->parse);
  c->start = c->len = c->cap = 0;
}

int sbc_open_ctx(sbc_conn *c, const sbc_ctx *ctx, const char *const *extra_args, char *err, size_t err_len) {
  return sbc_open(c, ctx->socket, ctx->autostart, extra_args, err, err_len);
}
