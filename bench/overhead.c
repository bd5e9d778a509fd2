/* bench_overhead: what a trivial run costs on each path, as ratios to the
 * raw fork+exec+wait floor measured in the same run.
 *
 *   bench_overhead --bin-dir DIR --noop PATH [--rounds N] [--batch-s S]
 *                  [--only ID,ID...] [--isolated N] [--gap-s S] [--out FILE]
 *
 * Paths (each with 1 and with 2 runs in flight):
 *   raw          fork + execve(noop) + waitpid: the floor
 *   raw-true     the same with /bin/true (dynamic): the floor of the rows that run /bin/true
 *   lib          sb_run() on one runtime, a fresh /app per run holding noop (what
 *                surgebox-run does, without its process start-up)
 *   lib-reuse    sb_run() with one /app made once: the sandbox alone
 *   cli          the surgebox-run binary per run (--dir with noop)
 *   daemon-upload  an exec request to surgeboxd (--jobs = workers) with noop as a
 *                  content_b64 file, argv /app/noop
 *   daemon-true  an exec request running /bin/true (nothing uploaded)
 *   bwrap        bwrap --unshare-all --ro-bind / / --dev /dev --proc /proc noop
 *
 * Interleaving: every round runs one time-boxed batch of each path, in an
 * order rotated from round to round; throughput is per batch, and a path's
 * ratio is taken against the floor's batch of the same round (paired), so
 * drift of the machine cancels out. Latency: per run, start to reap (or
 * request sent to response read). Workers: K runs in flight at once (the
 * daemon: K connections, one request in flight each, daemon --jobs K).
 *
 * Then --isolated N runs of raw-true, lib-reuse, daemon-true and cli, one at
 * a time with --gap-s of idleness before each: the latency a lone job sees
 * (back-to-back loops keep kernel state warm that a lone job does not find,
 * e.g. the cgroup v1 attach's RCU grace period). */
#include "common.h"
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXK 2

typedef enum { K_RAW, K_RAW_TRUE, K_LIB, K_LIB_REUSE, K_CLI, K_DAEMON_UPLOAD, K_DAEMON_TRUE, K_DAEMON_TRUE_V2, K_DAEMON_TRUE_POOL0, K_BWRAP } kind;

typedef struct {
  const char *id, *what;
  kind k;
  int workers;
  int floor; /* index of the row this one is compared with */
  int floor_true; /* the raw-true row of its worker count */
  bc_vec lat, thr, ratio, ratio_true;
  bc_vec setup, wall; /* the sandbox's own setup_time_s and wall_time_s (lib, daemon) */
  size_t runs, failures;
  char failure[512];
  bool enabled, broken;
  double round_thr; /* this round's batch */
} row;

static struct {
  const char *bin_dir, *noop;
  char tmp[4096], noop_copy[4200];
  unsigned char *noop_data;
  size_t noop_len;
  sb_runtime *rt;
  sb_workspace *reuse_ws;
  bc_daemon d[MAXK + 1]; /* d[k]: --jobs k */
  sbc_conn conn[MAXK + 1][MAXK];
  /* the same with --cgroup v2 forced: the init born in its cgroup
   * (clone3 CLONE_INTO_CGROUP) instead of attached by a cgroup.procs write */
  bc_daemon d2[MAXK + 1];
  sbc_conn conn2[MAXK + 1][MAXK];
  char *line_upload[MAXK]; /* one per connection: a fixed id (one request in flight per connection) */
  size_t len_upload[MAXK];
  char *line_true[MAXK];
  size_t len_true[MAXK];
  int devnull;
  double batch_s;
  bool want_v2;
  /* the same with --pool 0: every job builds its own root (issue 16's
   * before, measured interleaved with the pool) */
  bc_daemon d0[MAXK + 1];
  sbc_conn conn0[MAXK + 1][MAXK];
  bool want_pool0;
} G;

static char *const *argv_for(kind k) {
  static char cli_bin[4200], *raw[2], *raw_true[2], *cli[8], *bwrap[16];
  switch (k) {
  case K_RAW:
    raw[0] = G.noop_copy;
    raw[1] = NULL;
    return raw;
  case K_RAW_TRUE:
    raw_true[0] = "/bin/true";
    raw_true[1] = NULL;
    return raw_true;
  case K_CLI: {
    snprintf(cli_bin, sizeof cli_bin, "%s/surgebox-run", G.bin_dir);
    char *a[] = {cli_bin, "--dir", G.tmp, "--", "/app/noop", NULL};
    memcpy(cli, a, sizeof a);
    return cli;
  }
  case K_BWRAP: {
    char *a[] = {"/usr/bin/bwrap", "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                 G.noop_copy, NULL};
    memcpy(bwrap, a, sizeof a);
    return bwrap;
  }
  default: return NULL;
  }
}

#include <stdarg.h>
__attribute__((format(printf, 2, 3))) static void fail(row *r, const char *fmt, ...) {
  r->failures++;
  if (r->failure[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->failure, sizeof r->failure, fmt, ap);
  va_end(ap);
}

static bool more(double t0, size_t started, int k) {
  return started < (size_t)k || sbu_now_s() - t0 < G.batch_s;
}

/* ---- spawned processes: raw, raw-true, cli, bwrap ---- */
static double batch_spawn(row *r, bool record) {
  char *const *argv = argv_for(r->k);
  struct {
    pid_t pid;
    double t;
  } fly[MAXK] = {{0}};
  int inflight = 0;
  size_t started = 0, done = 0;
  double t0 = sbu_now_s();
  for (;;) {
    for (int i = 0; i < r->workers && inflight < r->workers && more(t0, started, r->workers); i++) {
      if (fly[i].pid) continue;
      double t = sbu_now_s();
      pid_t pid = fork();
      if (pid == 0) {
        dup2(G.devnull, 1);
        dup2(G.devnull, 2);
        execv(argv[0], argv);
        _exit(127);
      }
      if (pid < 0) {
        fail(r, "fork: %s", strerror(errno));
        break;
      }
      fly[i].pid = pid;
      fly[i].t = t;
      inflight++;
      started++;
    }
    if (!inflight) break;
    int st;
    pid_t pid = waitpid(-1, &st, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    double t = sbu_now_s();
    for (int i = 0; i < r->workers; i++) {
      if (fly[i].pid != pid) continue;
      fly[i].pid = 0;
      inflight--;
      done++;
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char d[64];
        snprintf(d, sizeof d, "%s %d", WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        fail(r, "%s", d);
      } else if (record) {
        bc_vec_push(&r->lat, t - fly[i].t);
      }
    }
  }
  return (double)done / (sbu_now_s() - t0);
}

/* ---- the runner library ---- */
static int lib_spec(row *r, sb_spec *spec, sb_workspace **ws, int slot, char err[SB_ERR_MAX]) {
  static const char *const argv[] = {"/app/noop", NULL};
  sb_spec_init(spec);
  spec->argv = argv;
  spec->netns_slot = slot;
  *ws = NULL;
  if (r->k == K_LIB_REUSE) {
    spec->workspace = G.reuse_ws;
    return 0;
  }
  int rc = sb_workspace_create(G.rt, spec->limits.tmp_mib, ws, err);
  if (rc == 0) rc = sb_workspace_write(*ws, "noop", G.noop_data, G.noop_len, 0755, err);
  if (rc < 0) {
    sb_workspace_destroy(*ws);
    *ws = NULL;
    return rc;
  }
  spec->workspace = *ws;
  return 0;
}

static void lib_check(row *r, sb_result *res, double lat, bool record) {
  if (res->status != SB_OK || res->exit_code != 0) {
    fail(r, "%s", res->error[0] ? res->error : sb_status_name(res->status));
  } else if (record) {
    bc_vec_push(&r->lat, lat);
    bc_vec_push(&r->setup, res->setup_time_s);
    bc_vec_push(&r->wall, res->wall_time_s);
  }
  sb_result_free(res);
}

static double batch_lib(row *r, bool record) {
  size_t started = 0, done = 0;
  double t0 = sbu_now_s();
  char err[SB_ERR_MAX];
  if (r->workers == 1) { /* literally sb_run in a loop */
    while (more(t0, started, 1)) {
      double t = sbu_now_s();
      sb_spec spec;
      sb_workspace *ws;
      started++;
      if (lib_spec(r, &spec, &ws, 0, err) < 0) {
        fail(r, "%s", err);
        continue;
      }
      sb_result res;
      sb_run(G.rt, &spec, &res);
      sb_workspace_destroy(ws);
      done++;
      lib_check(r, &res, sbu_now_s() - t, record);
    }
    return (double)done / (sbu_now_s() - t0);
  }
  /* K in flight: the event-driven interface, driven by poll() the way
   * sb_run drives one (and the daemon's libuv loop drives many). */
  struct {
    sb_proc *p;
    sb_workspace *ws;
    double t;
  } fly[MAXK] = {{0}};
  int inflight = 0;
  for (;;) {
    for (int i = 0; i < r->workers && more(t0, started, r->workers); i++) {
      if (fly[i].p) continue;
      double t = sbu_now_s();
      sb_spec spec;
      started++;
      if (lib_spec(r, &spec, &fly[i].ws, i, err) < 0 || sb_proc_start(G.rt, &spec, &fly[i].p, err) < 0) {
        fail(r, "%s", err);
        sb_workspace_destroy(fly[i].ws);
        fly[i].ws = NULL;
        fly[i].p = NULL;
        continue;
      }
      fly[i].t = t;
      inflight++;
    }
    if (!inflight) break;
    struct pollfd pfd[MAXK * 4];
    int who[MAXK * 4], role[MAXK * 4], n = 0, timeout = 1000;
    for (int i = 0; i < r->workers; i++) {
      if (!fly[i].p) continue;
      int fds[4] = {sb_proc_pidfd(fly[i].p), sb_proc_control_fd(fly[i].p), sb_proc_stdout_fd(fly[i].p),
                    sb_proc_stderr_fd(fly[i].p)};
      for (int k = 0; k < 4; k++)
        if (fds[k] >= 0) {
          pfd[n] = (struct pollfd){.fd = fds[k], .events = POLLIN};
          who[n] = i;
          role[n++] = k;
        }
      int t = sb_proc_tick(fly[i].p);
      if (t >= 0 && t < timeout) timeout = t;
    }
    if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR) break;
    for (int j = 0; j < n; j++) {
      if (!pfd[j].revents) continue;
      sb_proc *p = fly[who[j]].p;
      int fd = pfd[j].fd;
      if (role[j] == 0 && fd == sb_proc_pidfd(p)) sb_proc_on_exit(p);
      else if (role[j] == 1 && fd == sb_proc_control_fd(p)) sb_proc_on_control(p);
      else if ((role[j] == 2 && fd == sb_proc_stdout_fd(p)) || (role[j] == 3 && fd == sb_proc_stderr_fd(p)))
        sb_proc_on_output(p, fd);
    }
    for (int i = 0; i < r->workers; i++) {
      if (!fly[i].p || !sb_proc_done(fly[i].p)) continue;
      sb_result res;
      sb_proc_finish(fly[i].p, &res);
      sb_workspace_destroy(fly[i].ws);
      double lat = sbu_now_s() - fly[i].t;
      fly[i].p = NULL;
      fly[i].ws = NULL;
      inflight--;
      done++;
      lib_check(r, &res, lat, record);
    }
  }
  return (double)done / (sbu_now_s() - t0);
}

/* ---- the daemon ---- */
static double batch_daemon(row *r, bool record) {
  int k = r->workers;
  sbc_conn *conns = r->k == K_DAEMON_TRUE_V2 ? G.conn2[k] : r->k == K_DAEMON_TRUE_POOL0 ? G.conn0[k] : G.conn[k];
  double sent[MAXK] = {0};
  bool busy[MAXK] = {false};
  int inflight = 0;
  size_t started = 0, done = 0;
  double t0 = sbu_now_s();
  for (;;) {
    for (int i = 0; i < k && more(t0, started, k); i++) {
      if (busy[i]) continue;
      const char *line = r->k == K_DAEMON_UPLOAD ? G.line_upload[i] : G.line_true[i];
      size_t len = r->k == K_DAEMON_UPLOAD ? G.len_upload[i] : G.len_true[i];
      sent[i] = sbu_now_s();
      if (bc_send_raw(conns[i].fd, line, len) < 0) {
        fail(r, "send: %s", strerror(errno));
        r->broken = true;
        return NAN;
      }
      busy[i] = true;
      inflight++;
      started++;
    }
    if (!inflight) break;
    struct pollfd pfd[MAXK];
    int who[MAXK], n = 0;
    for (int i = 0; i < k; i++)
      if (busy[i]) {
        pfd[n] = (struct pollfd){.fd = conns[i].fd, .events = POLLIN};
        who[n++] = i;
      }
    if (poll(pfd, (nfds_t)n, 60000) <= 0) {
      fail(r, "%s", "no response within 60 s");
      r->broken = true;
      return NAN;
    }
    for (int j = 0; j < n; j++) {
      if (!pfd[j].revents) continue;
      int i = who[j];
      json_object *resp = sbc_recv(&conns[i]);
      double t = sbu_now_s();
      busy[i] = false;
      inflight--;
      done++;
      const char *st = bc_jstr(resp, "status");
      if (!resp) {
        fail(r, "%s", "connection closed");
        r->broken = true;
        return NAN;
      }
      if (!st || strcmp(st, "ok") != 0) {
        fail(r, "%s", json_object_to_json_string(resp));
      } else if (record) {
        bc_vec_push(&r->lat, t - sent[i]);
        json_object *steps = bc_jget(resp, "steps");
        json_object *s0 = steps ? json_object_array_get_idx(steps, 0) : NULL;
        bc_vec_push(&r->setup, bc_jdouble(s0, "setup_time_s"));
        bc_vec_push(&r->wall, bc_jdouble(s0, "wall_time_s"));
      }
      json_object_put(resp);
    }
  }
  return (double)done / (sbu_now_s() - t0);
}

static double batch(row *r, bool record) {
  switch (r->k) {
  case K_RAW:
  case K_RAW_TRUE:
  case K_CLI:
  case K_BWRAP: return batch_spawn(r, record);
  case K_LIB:
  case K_LIB_REUSE: return batch_lib(r, record);
  default: return batch_daemon(r, record);
  }
}

/* ---- set-up ---- */
static char *exec_line(const char *id, const char *body, size_t *len) {
  size_t cap = strlen(body) + 64;
  /* MADV_DONTFORK: the 1 MB lines must not make our fork()s (the floor) dearer. */
  size_t map = (cap + 4095) & ~(size_t)4095;
  char *p = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  madvise(p, map, MADV_DONTFORK);
  *len = (size_t)snprintf(p, cap, "{\"id\":\"%s\",\"type\":\"exec\",%s}\n", id, body);
  return p;
}

static int setup(bool need_lib, bool need_daemon) {
  G.devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  G.noop_data = bc_read_file(G.noop, &G.noop_len);
  if (!G.noop_data) {
    fprintf(stderr, "bench_overhead: cannot read %s: %s\n", G.noop, strerror(errno));
    return -1;
  }
  /* a directory holding only noop: surgebox-run --dir copies it to /app */
  if (bc_mkdtemp("sb-bench-noop-", G.tmp, sizeof G.tmp) < 0) return -1;
  snprintf(G.noop_copy, sizeof G.noop_copy, "%s/noop", G.tmp);
  int fd = open(G.noop_copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
  if (fd < 0 || write(fd, G.noop_data, G.noop_len) != (ssize_t)G.noop_len) return -1;
  close(fd);
  if (need_lib) {
    sb_runtime_options ro;
    sb_runtime_options_default(&ro);
    ro.netns_slots = MAXK;
    char err[SB_ERR_MAX] = "";
    if (sb_runtime_open(&ro, &G.rt, err) < 0 || sb_workspace_create(G.rt, 512, &G.reuse_ws, err) < 0 ||
        sb_workspace_write(G.reuse_ws, "noop", G.noop_data, G.noop_len, 0755, err) < 0) {
      fprintf(stderr, "bench_overhead: runtime: %s\n", err);
      return -1;
    }
  }
  if (need_daemon) {
    char *b64 = sbu_base64_encode(G.noop_data, G.noop_len, NULL);
    size_t bl = strlen(b64) + 256;
    char *upload = malloc(bl);
    snprintf(upload, bl, "\"files\":[{\"path\":\"noop\",\"content_b64\":\"%s\",\"mode\":493}],\"steps\":[{\"argv\":[\"/app/noop\"]}]", b64);
    free(b64);
    for (int i = 0; i < MAXK; i++) {
      char id[16];
      snprintf(id, sizeof id, "w%d", i);
      G.line_upload[i] = exec_line(id, upload, &G.len_upload[i]);
      G.line_true[i] = exec_line(id, "\"steps\":[{\"argv\":[\"/bin/true\"]}]", &G.len_true[i]);
    }
    free(upload);
    for (int k = 1; k <= MAXK; k++) {
      char jobs[8];
      snprintf(jobs, sizeof jobs, "%d", k);
      /* no toolchains to detect (/bin/true and noop need none): several daemons
       * probing at once on a loaded machine outlast the start-up timeout */
#define NO_TC "--toolchains", "/nonexistent-surgebox-toolchains"
      const char *extra[] = {"--jobs", jobs, NO_TC, NULL};
      if (bc_daemon_start(&G.d[k], G.bin_dir, extra, true) < 0) return -1;
      for (int i = 0; i < k; i++)
        if (bc_connect(&G.conn[k][i], G.d[k].sock) < 0) return -1;
      if (G.want_pool0) {
        const char *extra0[] = {"--jobs", jobs, "--pool", "0", NO_TC, NULL};
        if (bc_daemon_start(&G.d0[k], G.bin_dir, extra0, true) < 0) return -1;
        for (int i = 0; i < k; i++)
          if (bc_connect(&G.conn0[k][i], G.d0[k].sock) < 0) return -1;
      }
      if (G.want_v2) {
        const char *extra2[] = {"--jobs", jobs, "--cgroup", "v2", NO_TC, NULL};
        if (bc_daemon_start(&G.d2[k], G.bin_dir, extra2, true) < 0) return -1;
        for (int i = 0; i < k; i++)
          if (bc_connect(&G.conn2[k][i], G.d2[k].sock) < 0) return -1;
      }
    }
  }
  return 0;
}

static void teardown(void) {
  for (int k = 1; k <= MAXK; k++) {
    for (int i = 0; i < k; i++)
      if (G.conn[k][i].fd > 0) sbc_close(&G.conn[k][i]);
    if (G.d[k].pid > 0) bc_daemon_stop(&G.d[k]);
    for (int i = 0; i < k; i++)
      if (G.conn2[k][i].fd > 0) sbc_close(&G.conn2[k][i]);
    if (G.d2[k].pid > 0) bc_daemon_stop(&G.d2[k]);
    for (int i = 0; i < k; i++)
      if (G.conn0[k][i].fd > 0) sbc_close(&G.conn0[k][i]);
    if (G.d0[k].pid > 0) bc_daemon_stop(&G.d0[k]);
  }
  if (G.reuse_ws) sb_workspace_destroy(G.reuse_ws);
  if (G.rt) sb_runtime_close(G.rt);
  if (G.tmp[0]) bc_rm_rf(G.tmp);
}

static bool selected(const char *only, const char *id) {
  if (!only) return true;
  size_t n = strlen(id);
  for (const char *p = only; (p = strstr(p, id)); p += n)
    if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return true;
  return false;
}

int main(int argc, char **argv) {
  static const struct option opts[] = {{"bin-dir", required_argument, 0, 'b'}, {"noop", required_argument, 0, 'n'},
                                       {"rounds", required_argument, 0, 'r'}, {"batch-s", required_argument, 0, 's'},
                                       {"only", required_argument, 0, 'o'},   {"out", required_argument, 0, 'O'},
                                       {"isolated", required_argument, 0, 'i'}, {"gap-s", required_argument, 0, 'g'},
                                       {0, 0, 0, 0}};
  int rounds = 15, isolated = 20, c;
  double gap = 0.1;
  const char *only = NULL, *out = NULL;
  G.batch_s = 0.4;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 'b': G.bin_dir = optarg; break;
    case 'n': G.noop = optarg; break;
    case 'r': rounds = atoi(optarg); break;
    case 's': G.batch_s = atof(optarg); break;
    case 'o': only = optarg; break;
    case 'O': out = optarg; break;
    case 'i': isolated = atoi(optarg); break;
    case 'g': gap = atof(optarg); break;
    default: return 1;
    }
  }
  if (!G.bin_dir || !G.noop || rounds < 1 || !(G.batch_s > 0) || isolated < 0 || !(gap >= 0)) {
    fprintf(stderr, "usage: bench_overhead --bin-dir DIR --noop PATH [--rounds N] [--batch-s S] [--only IDS]\n"
                    "                      [--isolated N] [--gap-s S] [--out FILE]\n");
    return 1;
  }
  bc_require_wrapper("bench_overhead");

  static const struct {
    const char *id, *what;
    kind k;
  } paths[] = {
      {"raw", "fork + execve + waitpid (the floor)", K_RAW},
      {"raw-true", "fork + execve(/bin/true) + waitpid", K_RAW_TRUE},
      {"lib", "sb_run(), fresh /app holding noop per run", K_LIB},
      {"lib-reuse", "sb_run(), one /app for all runs", K_LIB_REUSE},
      {"cli", "surgebox-run --dir D -- /app/noop (a process per run)", K_CLI},
      {"daemon-upload", "surgeboxd exec, noop uploaded as content_b64", K_DAEMON_UPLOAD},
      {"daemon-true", "surgeboxd exec of /bin/true", K_DAEMON_TRUE},
      {"daemon-true-v2", "the same, surgeboxd --cgroup v2: init born in its cgroup (clone3), no cgroup.procs write",
       K_DAEMON_TRUE_V2},
      {"daemon-true-pool0", "the same, surgeboxd --pool 0: each job builds its own root (before issue 16)",
       K_DAEMON_TRUE_POOL0},
      {"bwrap", "bwrap --unshare-all --ro-bind / / --dev /dev --proc /proc noop", K_BWRAP},
  };
  enum { NP = sizeof paths / sizeof *paths };
  row rows[NP * MAXK];
  memset(rows, 0, sizeof rows);
  int nrows = 0;
  bool need_lib = false, need_daemon = false;
  for (int k = 1; k <= MAXK; k++)
    for (int p = 0; p < NP; p++) {
      row *r = &rows[nrows++];
      r->id = paths[p].id;
      r->what = paths[p].what;
      r->k = paths[p].k;
      r->workers = k;
      /* the floor of its worker count; rows running /bin/true also get raw-true (in the report) */
      r->floor = (k - 1) * NP;
      r->floor_true = (k - 1) * NP + 1;
      r->enabled = p <= 1 || selected(only, r->id); /* both floors always */
      if (r->enabled && (r->k == K_LIB || r->k == K_LIB_REUSE)) need_lib = true;
      if (r->enabled && (r->k == K_DAEMON_UPLOAD || r->k == K_DAEMON_TRUE || r->k == K_DAEMON_TRUE_V2 ||
                         r->k == K_DAEMON_TRUE_POOL0)) need_daemon = true;
      if (r->enabled && r->k == K_DAEMON_TRUE_POOL0) G.want_pool0 = true;
      if (r->k == K_DAEMON_TRUE_V2 && r->enabled) {
        if (access("/sys/fs/cgroup/cgroup.controllers", R_OK) != 0 && access("/sys/fs/cgroup/unified/cgroup.controllers", R_OK) != 0) {
          r->enabled = false;
          snprintf(r->failure, sizeof r->failure, "no cgroup2 hierarchy");
        } else {
          G.want_v2 = true;
        }
      }
      if (r->k == K_BWRAP && access("/usr/bin/bwrap", X_OK) != 0) {
        r->enabled = false;
        snprintf(r->failure, sizeof r->failure, "bwrap not installed");
      }
    }
  if (setup(need_lib, need_daemon) < 0) {
    teardown();
    return 2;
  }
  /* A process per round on a noisy machine: announce progress on stderr. */
  double t_start = sbu_now_s();
  for (int i = 0; i < nrows; i++) /* warm-up batch of each, not recorded */
    if (rows[i].enabled) {
      double save = G.batch_s;
      G.batch_s = save / 4;
      batch(&rows[i], false);
      G.batch_s = save;
      if (rows[i].failures) {
        rows[i].broken = true;
        fprintf(stderr, "bench_overhead: %s x%d fails: %s\n", rows[i].id, rows[i].workers, rows[i].failure);
      }
    }
  for (int round = 0; round < rounds; round++) {
    for (int j = 0; j < nrows; j++) {
      row *r = &rows[(j + round) % nrows];
      r->round_thr = NAN;
      if (!r->enabled || r->broken) continue;
      r->round_thr = batch(r, true);
      r->runs = r->lat.n;
    }
    for (int i = 0; i < nrows; i++) {
      row *r = &rows[i];
      if (!r->enabled || r->broken || !isfinite(r->round_thr)) continue;
      bc_vec_push(&r->thr, r->round_thr);
      if (isfinite(rows[r->floor].round_thr)) bc_vec_push(&r->ratio, r->round_thr / rows[r->floor].round_thr);
      if (isfinite(rows[r->floor_true].round_thr))
        bc_vec_push(&r->ratio_true, r->round_thr / rows[r->floor_true].round_thr);
    }
    fprintf(stderr, "bench_overhead: round %d/%d done (%.0f s)\n", round + 1, rounds, sbu_now_s() - t_start);
  }

  /* Isolated runs: one run at a time with `gap` seconds of idleness before
   * each, as a lone interactive job sees it (back-to-back loops keep kernel
   * state warm that a lone job does not find). Interleaved across paths. */
  static const kind iso_kinds[] = {K_RAW_TRUE, K_LIB_REUSE, K_DAEMON_TRUE, K_DAEMON_TRUE_POOL0, K_DAEMON_TRUE_V2, K_CLI};
  enum { NI = sizeof iso_kinds / sizeof *iso_kinds };
  row iso[NI];
  memset(iso, 0, sizeof iso);
  for (int i = 0; i < NI; i++) {
    const row *src = NULL;
    for (int j = 0; j < nrows && !src; j++)
      if (rows[j].k == iso_kinds[i] && rows[j].workers == 1) src = &rows[j];
    iso[i].k = iso_kinds[i];
    iso[i].id = src->id;
    iso[i].what = src->what;
    iso[i].workers = 1;
    iso[i].enabled = src->enabled && !src->broken && isolated > 0;
  }
  double save_batch = G.batch_s;
  G.batch_s = 1e-9; /* one run per batch */
  for (int n = 0; n < isolated; n++) {
    for (int j = 0; j < NI; j++) {
      row *r = &iso[(j + n) % NI];
      if (!r->enabled) continue;
      bc_sleep(gap);
      batch(r, true);
    }
  }
  G.batch_s = save_batch;
  if (isolated) fprintf(stderr, "bench_overhead: isolated runs done (%.0f s)\n", sbu_now_s() - t_start);

  json_object *doc = json_object_new_object();
  json_object_object_add(doc, "benchmark", json_object_new_string("overhead"));
  json_object_object_add(doc, "argv", bc_cmdline_json(argc, argv));
  json_object_object_add(doc, "rounds", json_object_new_int(rounds));
  json_object_object_add(doc, "batch_s", json_object_new_double(G.batch_s));
  json_object_object_add(doc, "noop_bytes", json_object_new_int64((int64_t)G.noop_len));
  json_object_object_add(doc, "upload_request_bytes", json_object_new_int64((int64_t)G.len_upload[0]));
  json_object_object_add(doc, "duration_s", json_object_new_double(sbu_now_s() - t_start));
  if (G.rt) json_object_object_add(doc, "cgroup", json_object_new_string(sb_cgroup_kind_name(sb_runtime_cgroup(G.rt))));
  json_object *daemons = json_object_new_array();
  for (int k = 1; k <= MAXK; k++)
    for (int v = 0; v < 2; v++) {
      const bc_daemon *d = v ? &G.d2[k] : &G.d[k];
      if (d->cmdline[0]) json_object_array_add(daemons, json_object_new_string(d->cmdline));
    }
  json_object_object_add(doc, "daemons", daemons);
  json_object *cmds = json_object_new_object();
  for (int p = 0; p < NP; p++) {
    char *const *a = argv_for(paths[p].k);
    if (!a) continue;
    char buf[2048] = "";
    size_t off = 0;
    for (int i = 0; a[i] && off < sizeof buf; i++) off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", i ? " " : "", a[i]);
    json_object_object_add(cmds, paths[p].id, json_object_new_string(buf));
  }
  json_object_object_add(doc, "commands", cmds);
  json_object *arr = json_object_new_array();
  for (int i = 0; i < nrows; i++) {
    row *r = &rows[i];
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(r->id));
    json_object_object_add(o, "what", json_object_new_string(r->what));
    json_object_object_add(o, "workers", json_object_new_int(r->workers));
    json_object_object_add(o, "enabled", json_object_new_boolean(r->enabled));
    json_object_object_add(o, "runs", json_object_new_int64((int64_t)r->lat.n));
    json_object_object_add(o, "failures", json_object_new_int64((int64_t)r->failures));
    json_object_object_add(o, "failure", r->failure[0] ? json_object_new_string(r->failure) : NULL);
    json_object_object_add(o, "latency_s", bc_summary(&r->lat));
    json_object_object_add(o, "runs_per_s", bc_summary(&r->thr));
    json_object_object_add(o, "ratio_to_floor", bc_summary(&r->ratio));
    json_object_object_add(o, "ratio_to_raw_true", bc_summary(&r->ratio_true));
    json_object_object_add(o, "setup_s", bc_summary(&r->setup));
    json_object_object_add(o, "wall_s", bc_summary(&r->wall));
    json_object_array_add(arr, o);
  }
  json_object_object_add(doc, "rows", arr);
  json_object *iarr = json_object_new_array();
  for (int i = 0; i < NI; i++) {
    row *r = &iso[i];
    if (!r->enabled) continue;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(r->id));
    json_object_object_add(o, "what", json_object_new_string(r->what));
    json_object_object_add(o, "runs", json_object_new_int64((int64_t)r->lat.n));
    json_object_object_add(o, "failures", json_object_new_int64((int64_t)r->failures));
    json_object_object_add(o, "failure", r->failure[0] ? json_object_new_string(r->failure) : NULL);
    json_object_object_add(o, "latency_s", bc_summary(&r->lat));
    json_object_object_add(o, "setup_s", bc_summary(&r->setup));
    json_object_object_add(o, "wall_s", bc_summary(&r->wall));
    json_object_array_add(iarr, o);
  }
  json_object_object_add(doc, "isolated", iarr);
  json_object_object_add(doc, "isolated_gap_s", json_object_new_double(gap));
  int rc = bc_emit(doc, out);
  json_object_put(doc);
  teardown();
  return rc < 0 ? 2 : 0;
}
