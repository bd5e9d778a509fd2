/* Shared helpers of the benchmark drivers; see common.h. */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void bc_sleep(double s) {
  struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
  }
}

/* ---- samples ---- */
void bc_vec_push(bc_vec *s, double x) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    double *v = realloc(s->v, cap * sizeof *v);
    if (!v) {
      perror("realloc");
      exit(2);
    }
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = x;
}

void bc_vec_free(bc_vec *s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bc_quantile(const bc_vec *s, double q) {
  if (!s->n) return NAN;
  double *c = malloc(s->n * sizeof *c);
  if (!c) return NAN;
  memcpy(c, s->v, s->n * sizeof *c);
  qsort(c, s->n, sizeof *c, cmp_double);
  double pos = q * (double)(s->n - 1);
  size_t lo = (size_t)pos;
  double frac = pos - (double)lo, r = c[lo];
  if (lo + 1 < s->n) r += frac * (c[lo + 1] - c[lo]);
  free(c);
  return r;
}

double bc_min(const bc_vec *s) { return bc_quantile(s, 0); }
double bc_max(const bc_vec *s) { return bc_quantile(s, 1); }

static json_object *jnum(double x) { return isfinite(x) ? json_object_new_double(x) : NULL; }

json_object *bc_summary(const bc_vec *s) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "n", json_object_new_int64((int64_t)s->n));
  static const struct {
    const char *k;
    double q;
  } qs[] = {{"min", 0}, {"p10", .1}, {"q1", .25}, {"median", .5}, {"q3", .75}, {"p90", .9}, {"max", 1}};
  for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) json_object_object_add(o, qs[i].k, jnum(bc_quantile(s, qs[i].q)));
  return o;
}

/* ---- files ---- */
unsigned char *bc_read_file(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  unsigned char *buf = NULL;
  if (fstat(fd, &st) == 0 && (buf = malloc((size_t)st.st_size + 1))) {
    size_t got = 0;
    while (got < (size_t)st.st_size) {
      ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += (size_t)n;
    }
    if (got != (size_t)st.st_size) {
      free(buf);
      buf = NULL;
    } else {
      buf[got] = '\0';
      *len = got;
    }
  }
  close(fd);
  return buf;
}

int bc_mkdtemp(const char *prefix, char *out, size_t cap) {
  snprintf(out, cap, "/tmp/%sXXXXXX", prefix);
  if (!mkdtemp(out)) return -1;
  chmod(out, 0755);
  return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)st;
  (void)f;
  if (flag == FTW_DP) rmdir(p);
  else unlink(p);
  return 0;
}

void bc_rm_rf(const char *path) {
  if (path && path[0] == '/' && strcmp(path, "/") != 0) nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* ---- the wrapper rule ---- */
#define INIT_PID_NS_INO 0xEFFFFFFCu /* PROC_PID_INIT_INO */

void bc_require_wrapper(const char *prog) {
  const char *skip = getenv("SURGEBOX_BENCH_NO_WRAPPER_CHECK");
  if (skip && strcmp(skip, "1") == 0) return;
  struct stat st;
  if (stat("/proc/self/ns/pid", &st) == 0 && st.st_ino != INIT_PID_NS_INO) return;
  fprintf(stderr,
          "%s: refusing to run sandboxes outside a throw-away wrapper; use bench/run, or\n"
          "  unshare --mount --propagation private --pid --fork --mount-proc %s ...\n",
          prog, prog);
  exit(2);
}

/* ---- a private surgeboxd ---- */
int bc_daemon_start(bc_daemon *d, const char *bin_dir, const char *const *extra, bool own_cache_dir) {
  memset(d, 0, sizeof *d);
  d->pid = -1;
  if (bc_mkdtemp("sb-bench-d-", d->dir, sizeof d->dir) < 0) {
    perror("mkdtemp");
    return -1;
  }
  snprintf(d->sock, sizeof d->sock, "%s/s.sock", d->dir);
  char bin[4200], state[4200], cache[4200], fdarg[16];
  snprintf(bin, sizeof bin, "%s/surgeboxd", bin_dir);
  snprintf(state, sizeof state, "%s/state", d->dir);
  snprintf(cache, sizeof cache, "%s/cache", d->dir);
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) < 0) return -1;
  snprintf(fdarg, sizeof fdarg, "%d", ready[1]);
  const char *argv[64] = {bin, "--socket", d->sock, "--state-dir", state, "--ready-fd", fdarg, "--quiet"};
  size_t n = 8;
  if (own_cache_dir) {
    argv[n++] = "--cache-dir";
    argv[n++] = cache;
  }
  for (; extra && *extra && n < 62; extra++) argv[n++] = *extra;
  argv[n] = NULL;
  size_t off = 0;
  for (size_t i = 0; argv[i] && off < sizeof d->cmdline - 1; i++) {
    if (i == 5) continue; /* --ready-fd's number: an internal detail */
    if (i == 6) continue;
    off += (size_t)snprintf(d->cmdline + off, sizeof d->cmdline - off, "%s%s", i ? " " : "", argv[i]);
  }
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    fcntl(ready[1], F_SETFD, 0);
    execv(bin, (char *const *)argv);
    fprintf(stderr, "cannot start %s: %s\n", bin, strerror(errno));
    _exit(127);
  }
  close(ready[1]);
  d->pid = pid;
  char buf[16] = "";
  struct pollfd p = {.fd = ready[0], .events = POLLIN};
  ssize_t got = poll(&p, 1, 60000) == 1 ? read(ready[0], buf, sizeof buf - 1) : -1;
  close(ready[0]);
  if (got < 6 || strncmp(buf, "ready\n", 6) != 0) {
    fprintf(stderr, "surgeboxd (%s) did not start\n", d->cmdline);
    bc_daemon_stop(d);
    return -1;
  }
  return 0;
}

void bc_daemon_stop(bc_daemon *d) {
  if (d->pid > 0) {
    kill(d->pid, SIGTERM);
    int st;
    double deadline = sbu_now_s() + 30;
    while (waitpid(d->pid, &st, WNOHANG) == 0) {
      if (sbu_now_s() > deadline) {
        kill(d->pid, SIGKILL);
        waitpid(d->pid, &st, 0);
        break;
      }
      bc_sleep(0.01);
    }
    d->pid = -1;
  }
  if (d->dir[0]) bc_rm_rf(d->dir);
  d->dir[0] = '\0';
}

long bc_proc_status_kb(pid_t pid, const char *field) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t fl = strlen(field);
  long v = -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, fl) == 0 && line[fl] == ':') {
      v = strtol(line + fl + 1, NULL, 10);
      break;
    }
  fclose(f);
  return v;
}

/* ---- connections ---- */
int bc_connect(sbc_conn *c, const char *sock) {
  char err[512];
  if (sbc_open(c, sock, false, NULL, err, sizeof err) < 0) {
    fprintf(stderr, "%s\n", err);
    return -1;
  }
  return 0;
}

int bc_send_raw(int fd, const char *data, size_t len) {
  size_t off = 0;
  while (off < len) {
    ssize_t n = send(fd, data + off, len - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      struct pollfd p = {.fd = fd, .events = POLLOUT};
      poll(&p, 1, 1000);
      continue;
    }
    if (n <= 0) return -1;
    off += (size_t)n;
  }
  return 0;
}

json_object *bc_call(sbc_conn *c, json_object *req) {
  if (sbc_send(c, req) < 0) return NULL;
  return sbc_recv(c);
}

json_object *bc_jget(json_object *o, const char *key) {
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

const char *bc_jstr(json_object *o, const char *key) {
  json_object *v = bc_jget(o, key);
  return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

double bc_jdouble(json_object *o, const char *key) {
  json_object *v = bc_jget(o, key);
  return v && (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))
             ? json_object_get_double(v)
             : NAN;
}

/* ---- output ---- */
int bc_emit(json_object *doc, const char *out_path) {
  const char *s = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
  FILE *f = out_path ? fopen(out_path, "w") : stdout;
  if (!f) {
    perror(out_path);
    return -1;
  }
  fprintf(f, "%s\n", s);
  if (out_path) fclose(f);
  else fflush(stdout);
  return 0;
}

json_object *bc_cmdline_json(int argc, char **argv) {
  json_object *a = json_object_new_array();
  for (int i = 0; i < argc; i++) json_object_array_add(a, json_object_new_string(argv[i]));
  return a;
}
