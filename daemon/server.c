/* The server: runtime, listening socket, signals, shutdown. It hands the
 * services below it what to call (the scheduler, a connection, a job's end:
 * sbd_run), so none of them calls back into this file. */
#include "internal.h"
#include "cleanup.h"
#include "runtime_paths.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static void on_closed_noop(uv_handle_t *h) { (void)h; }

/* Load the toolchain files and detect what is installed. Running jobs keep
 * their own copy of everything their plan needs, so this may run anytime. */
void sbd_toolchains_reload(sbd_server *srv) {
  const char *dir = srv->cfg->toolchains_dir ? srv->cfg->toolchains_dir : sbt_default_dir();
  char cache_dir[4096], cache_file[4200];
  if (srv->cfg->cache_dir) snprintf(cache_dir, sizeof cache_dir, "%s", srv->cfg->cache_dir);
  else sbd_default_cache_dir(cache_dir, sizeof cache_dir);
  snprintf(cache_file, sizeof cache_file, "%s/toolchains.json", cache_dir);
  bool use_cache = sb_mkdir_p(cache_dir, 0755) == 0;
  sbt_registry fresh;
  char err[SBT_ERR_MAX] = "";
  sbt_warm_langs langs;
  if (sbt_warm_langs_load(&langs, sbt_warm_dir(), err) < 0) {
    sbd_log(srv, "error", "warm languages: %s", err); /* keep what we had */
  } else {
    sbt_warm_langs_free(&srv->warm_langs);
    srv->warm_langs = langs;
  }
  err[0] = '\0';
  if (sbt_registry_load(&fresh, dir, err) < 0 || sbt_registry_detect(&fresh, use_cache ? cache_file : NULL, err) < 0) {
    sbd_log(srv, "error", "toolchains: %s", err);
    snprintf(srv->toolchain_error, sizeof srv->toolchain_error, "%s", err);
    return; /* keep what we had */
  }
  if (srv->have_toolchains) sbt_registry_free(&srv->toolchains);
  srv->toolchains = fresh;
  sbd_profiles_forget(srv); /* detected again when a job names them */
  srv->have_toolchains = true;
  sbd_log(srv, "info", "toolchains: %zu detected from %s in %.2fs (%zu probes run, %zu cached)", fresh.n_tcs, dir,
          fresh.detect_s, fresh.probes_run, fresh.probes_cached);
}

/* A socket systemd gave us stays: it is systemd's (the next start gets it). */
static void close_listener(sbd_server *srv) {
  if (!srv->listening) return;
  uv_close((uv_handle_t *)&srv->listener, on_closed_noop);
  srv->listening = false;
  if (!srv->socket_adopted) unlink(srv->socket_path);
}

/* The listeners and every connection closed: the front first (its
 * requests cancelled, srv->front NULL), then the Unix-socket clients. */
static void close_all(sbd_server *srv) {
  close_listener(srv);
  sbd_front_stop(srv);
  for (sbd_conn *c = srv->conns, *next; c; c = next) {
    next = c->next; /* read first: closing may free c */
    sbd_conn_close(c);
  }
}

static void stop_everything(sbd_server *srv) {
  close_all(srv);
  uv_signal_stop(&srv->sig_term);
  uv_signal_stop(&srv->sig_int);
  uv_signal_stop(&srv->sig_hup);
  uv_timer_stop(&srv->grace);
  uv_timer_stop(&srv->hangups);
  uv_timer_stop(&srv->idle);
  uv_timer_stop(&srv->uid_wait);
  uv_timer_stop(&srv->trim);
}

/* Idle for a second: the heap's free memory back to the kernel (a burst's
 * queue and answers). Not at every idle moment: one client's jobs one after
 * another would each give the heap back and fault it in again. */
static void on_trim(uv_timer_t *t) {
  sbd_server *srv = t->data;
  if (srv->running == 0 && srv->queued == 0) malloc_trim(0);
}

/* A job ended (srv->job_ended, handed to job.c). */
static void job_ended(void *arg) {
  sbd_server *srv = arg;
  if (srv->running == 0 && srv->queued == 0 && !srv->draining) uv_timer_start(&srv->trim, on_trim, 1000, 0);
  if (srv->draining && srv->running == 0) stop_everything(srv);
}

static void on_grace_over(uv_timer_t *t) {
  sbd_server *srv = t->data;
  sbd_log(srv, "warn", "grace period over: killing %d running job(s)", srv->running);
  for (sbd_conn *c = srv->conns; c; c = c->next)
    for (sbd_job *j = c->running, *next; j; j = next) {
      next = j->next; /* read before the cancel, in case it ends the job */
      sbd_job_cancel_running(j, "cancelled: the daemon is shutting down and the grace period is over");
    }
}

static void drain(sbd_server *srv, const char *why) {
  if (srv->draining) return;
  srv->draining = true;
  sbd_notify("STOPPING=1");
  sbd_log(srv, "info", "%s: no new connections, finishing %d running job(s)", why, srv->running);
  close_listener(srv);
  sbd_front_drain(srv);
  /* Queued jobs will never start: answer them now. */
  for (sbd_conn *c = srv->conns; c; c = c->next)
    while (c->queued_head) {
      sbd_job *j = c->queued_head;
      sbd_conn_unlink_queued(c, j);
      srv->queued--;
      sbd_job_finish_unrun(j, SBP_STATUS_CANCELLED, "the daemon is shutting down");
    }
  sbd_profiles_drain(srv); /* requests waiting for a profile's load: answered too */
  if (srv->running == 0) {
    stop_everything(srv);
    return;
  }
  uv_timer_start(&srv->grace, on_grace_over, (uint64_t)(srv->cfg->grace_s * 1000), 0);
}

static void on_signal(uv_signal_t *s, int signum) {
  sbd_server *srv = s->data;
  if (signum == SIGHUP) {
    sbd_toolchains_reload(srv);
    return;
  }
  drain(srv, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

/* Connections whose client half-closed and still has jobs: is it gone? */
static void on_hangup_check(uv_timer_t *t) {
  sbd_server *srv = t->data;
  for (sbd_conn *c = srv->conns; c; c = c->next)
    if (c->read_eof && sbd_conn_hung_up(c)) sbd_conn_close(c);
}

/* --idle-timeout: no client and no job for that long, then exit. Clients
 * connect to a lingering daemon holding <socket>.lock (daemon/client.c), so
 * under the same lock "nothing waits to be accepted" and "the socket is
 * gone" become one step: a client either got in before, or finds no socket
 * and starts a new daemon; none is left in a closed backlog. */
static void on_idle_check(uv_timer_t *t) {
  sbd_server *srv = t->data;
  /* a client that came and went between two checks counts as activity too */
  bool came = srv->connections_total != srv->idle_seen_conns;
  srv->idle_seen_conns = srv->connections_total;
  if (srv->draining || srv->conns || srv->running || srv->queued || came) {
    srv->idle_since = 0;
    return;
  }
  uint64_t now = uv_hrtime();
  if (!srv->idle_since) srv->idle_since = now;
  if ((double)(now - srv->idle_since) / 1e9 < srv->cfg->idle_timeout_s) return;
  char lock[4200];
  snprintf(lock, sizeof lock, "%s.lock", srv->socket_path);
  SBU_AUTOCLOSE int fd = srv->socket_adopted ? -1 : open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) return; /* a client is connecting: look again next time */
  uv_os_fd_t lfd;
  struct pollfd p = {.fd = -1, .events = POLLIN};
  if (srv->listening && uv_fileno((uv_handle_t *)&srv->listener, &lfd) == 0) p.fd = lfd;
  if (p.fd >= 0 && poll(&p, 1, 0) == 1) { /* someone is in the backlog: serve them */
    srv->idle_since = 0;
    return;
  }
  close_listener(srv);
  sbu_closep(&fd); /* the lock goes before the drain starts */
  char why[64];
  snprintf(why, sizeof why, "idle for %gs", srv->cfg->idle_timeout_s);
  drain(srv, why);
}

static void on_connection(uv_stream_t *s, int status) {
  sbd_server *srv = s->data;
  if (status < 0) {
    sbd_log(srv, "warn", "accept: %s", uv_strerror(status));
    return;
  }
  sbd_conn_accept(srv);
}

/* A socket file that nobody answers is a leftover of a crashed daemon and
 * is replaced; a live one is never stolen. */
static int claim_socket_path(sbd_server *srv) {
  struct stat st;
  if (lstat(srv->socket_path, &st) < 0) return 0;
  if (!S_ISSOCK(st.st_mode)) {
    sbd_log(srv, "error", "%s exists and is not a socket: refusing to replace it", srv->socket_path);
    return -EEXIST;
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", srv->socket_path);
  int live = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
  if (fd >= 0) close(fd);
  if (live) {
    sbd_log(srv, "error", "another daemon is listening on %s", srv->socket_path);
    return -EADDRINUSE;
  }
  sbd_log(srv, "info", "replacing stale socket %s", srv->socket_path);
  unlink(srv->socket_path);
  return 0;
}

/* The socket file's mode: --socket-mode, else 0660, or 0666 when --allow-uid
 * or --allow-gid name peers who are neither root nor in the socket's group
 * (the daemon's peer check is then the gate). */
static mode_t socket_mode(const sbd_config *cfg) {
  if (cfg->socket_mode >= 0) return (mode_t)cfg->socket_mode;
  size_t own = geteuid() != 0 ? 2 : 1; /* our uid and root, always there */
  return cfg->n_allow_uid > own || cfg->n_allow_gid > 0 ? 0666 : 0660;
}

/* A socket systemd passed: used as it is; its group (SocketGroup=) may connect. */
static int adopt_socket(sbd_server *srv, int fd) {
  int rc = uv_pipe_init(&srv->loop, &srv->listener, 0);
  if (rc == 0) rc = uv_pipe_open(&srv->listener, fd);
  srv->listener.data = srv;
  if (rc == 0) rc = uv_listen((uv_stream_t *)&srv->listener, 128, on_connection);
  if (rc < 0) {
    sbd_log(srv, "error", "cannot use the socket systemd passed (%s): %s", srv->socket_path, uv_strerror(rc));
    uv_close((uv_handle_t *)&srv->listener, NULL);
    return rc;
  }
  struct stat st;
  if (srv->socket_path[0] == '/' && stat(srv->socket_path, &st) == 0 && st.st_gid != 0 && (st.st_mode & 060)) {
    srv->has_socket_gid = true;
    srv->socket_gid = st.st_gid;
  }
  srv->socket_adopted = true;
  srv->listening = true;
  return 0;
}

static int listen_socket(sbd_server *srv) {
  char dir[4096];
  if (srv->cfg->has_socket_gid) {
    srv->has_socket_gid = true;
    srv->socket_gid = srv->cfg->socket_gid;
  }
  snprintf(dir, sizeof dir, "%s", srv->socket_path);
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) {
    *slash = '\0';
    mkdir(dir, 0755); /* parents of a custom path must exist */
  }
  int rc = claim_socket_path(srv);
  if (rc < 0) return rc;
  uv_pipe_init(&srv->loop, &srv->listener, 0);
  srv->listener.data = srv;
  mode_t mode = socket_mode(srv->cfg);
  mode_t old = umask(~mode & 0777); /* born with its mode: no window where others may connect */
  rc = uv_pipe_bind(&srv->listener, srv->socket_path);
  umask(old);
  /* lchown: never follow a link someone put in the socket's place */
  if (rc == 0 && srv->has_socket_gid && lchown(srv->socket_path, (uid_t)-1, srv->socket_gid) < 0) {
    sbd_log(srv, "error", "cannot give %s to group %u: %s", srv->socket_path, (unsigned)srv->socket_gid,
            strerror(errno));
    rc = UV_EPERM;
  }
  if (rc == 0) rc = uv_listen((uv_stream_t *)&srv->listener, 128, on_connection);
  if (rc < 0) {
    sbd_log(srv, "error", "cannot listen on %s: %s", srv->socket_path, uv_strerror(rc));
    uv_close((uv_handle_t *)&srv->listener, NULL);
    return rc;
  }
  srv->listening = true;
  return 0;
}

/* The runtime (before libuv exists: it unshares a mount namespace, which a
 * threaded process cannot), its self-proof, and enough uids for the
 * workers. 0, or -1 after saying why (nothing left open). */
static int open_runtime(sbd_server *srv, sbd_config *cfg) {
  cfg->runtime.netns_slots = cfg->jobs;
  char err[SB_ERR_MAX] = "";
  if (sb_runtime_open(&cfg->runtime, &srv->rt, err) < 0) {
    fprintf(stderr, "surgeboxd: %s\n", err);
    return -1;
  }
  uid_t uid_first;
  uint32_t uid_count, uid_in_use;
  if (sbd_prove(srv) < 0) {
    sb_runtime_close(srv->rt);
    return -1;
  }
  if (sb_runtime_uid_range(srv->rt, &uid_first, &uid_count, &uid_in_use) && (uint32_t)cfg->jobs > uid_count) {
    /* every running job holds a uid: more workers than uids would fail jobs */
    fprintf(stderr, "surgeboxd: --jobs %d needs at least as many uids, --uid-range has %u\n", cfg->jobs,
            (unsigned)uid_count);
    sb_runtime_close(srv->rt);
    return -1;
  }
  return 0;
}

static void open_cache(sbd_server *srv, const sbd_config *cfg) {
  if (cfg->no_cache) return;
  char cache_dir[4096], compile_dir[4200], cerr[512];
  if (cfg->cache_dir) snprintf(cache_dir, sizeof cache_dir, "%s", cfg->cache_dir);
  else sbd_default_cache_dir(cache_dir, sizeof cache_dir);
  snprintf(compile_dir, sizeof compile_dir, "%s/compile", cache_dir);
  if (sbd_cache_open(&srv->cache, &srv->loop, compile_dir, cfg->cache_max_mib << 20, cerr, sizeof cerr) < 0)
    sbd_log(srv, "warn", "no compile cache: %s", cerr);
}

static bool alloc_slots(sbd_server *srv, int jobs) {
  srv->n_slots = jobs;
  srv->slot_busy = calloc((size_t)jobs, sizeof(bool));
  srv->slot_waiter = calloc((size_t)jobs, sizeof *srv->slot_waiter);
  srv->slot_last_conn = calloc((size_t)jobs, sizeof *srv->slot_last_conn);
  return srv->slot_busy && srv->slot_waiter && srv->slot_last_conn;
}

static void start_handles(sbd_server *srv, const sbd_config *cfg) {
  sbd_sched_start(srv, (sbd_sched_calls){.start = sbd_job_start, .slot_ready = sbd_job_slot_ready});
  sbd_loopstat_start(srv);
  uv_signal_init(&srv->loop, &srv->sig_term);
  uv_signal_init(&srv->loop, &srv->sig_int);
  uv_signal_init(&srv->loop, &srv->sig_hup);
  srv->sig_term.data = srv->sig_int.data = srv->sig_hup.data = srv;
  uv_signal_start(&srv->sig_term, on_signal, SIGTERM);
  uv_signal_start(&srv->sig_int, on_signal, SIGINT);
  uv_signal_start(&srv->sig_hup, on_signal, SIGHUP);
  uv_timer_init(&srv->loop, &srv->grace);
  srv->grace.data = srv;
  uv_timer_init(&srv->loop, &srv->hangups);
  srv->hangups.data = srv;
  uv_timer_start(&srv->hangups, on_hangup_check, 1000, 1000);
  uv_unref((uv_handle_t *)&srv->hangups);
  uv_timer_init(&srv->loop, &srv->idle);
  srv->idle.data = srv;
  uv_timer_init(&srv->loop, &srv->uid_wait);
  srv->uid_wait.data = srv;
  uv_timer_init(&srv->loop, &srv->trim);
  srv->trim.data = srv;
  uv_unref((uv_handle_t *)&srv->trim);
  if (cfg->idle_timeout_s > 0) {
    double period = cfg->idle_timeout_s * 1000 / 4;
    uint64_t ms = period < 50 ? 50 : period > 1000 ? 1000 : (uint64_t)period;
    uv_timer_start(&srv->idle, on_idle_check, ms, ms);
    uv_unref((uv_handle_t *)&srv->idle);
  }
}

static void stop_handles(sbd_server *srv) {
  uv_close((uv_handle_t *)&srv->sig_term, NULL);
  uv_close((uv_handle_t *)&srv->sig_int, NULL);
  uv_close((uv_handle_t *)&srv->sig_hup, NULL);
  uv_close((uv_handle_t *)&srv->grace, NULL);
  uv_close((uv_handle_t *)&srv->hangups, NULL);
  uv_close((uv_handle_t *)&srv->idle, NULL);
  uv_close((uv_handle_t *)&srv->uid_wait, NULL);
  uv_close((uv_handle_t *)&srv->trim, NULL);
  sbd_sched_stop(srv);
  sbd_loopstat_stop(srv);
  sbd_cache_close(srv->cache);
  srv->cache = NULL;
}

/* The log file takes over stderr, the service manager and --ready-fd hear
 * that the socket listens. */
static void announce_ready(sbd_server *srv, const sbd_config *cfg) {
  if (cfg->log_file) { /* from now on (a lingering private daemon): its client's stderr is left alone */
    int lf = open(cfg->log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (lf >= 0) {
      dup2(lf, STDERR_FILENO);
      close(lf);
    }
  }
  char st[4300];
  snprintf(st, sizeof st, "READY=1\nSTATUS=listening on %s, %d workers", srv->socket_path, srv->n_slots);
  sbd_notify(st);
  if (cfg->ready_fd >= 0) {
    if (write(cfg->ready_fd, "ready\n", 6) < 0) {
    }
    close(cfg->ready_fd);
  }
}

/* Listening: the loop runs until the last handle closes. */
static void serve(sbd_server *srv, const sbd_config *cfg) {
  const char *w = sb_runtime_warning(srv->rt);
  if (w) sbd_log(srv, "warn", "%s", w);
  sbd_prove_log(srv);
  sbd_log(srv, "info", "listening on %s (%d workers, queue %zu, cgroup %s)", srv->socket_path, srv->n_slots,
          cfg->max_queue, sb_cgroup_kind_name(sb_runtime_cgroup(srv->rt)));
  start_handles(srv, cfg);
  announce_ready(srv, cfg);
  uv_run(&srv->loop, UV_RUN_DEFAULT);
  stop_handles(srv);
  uv_run(&srv->loop, UV_RUN_DEFAULT);
  sbd_log(srv, "info", "stopped after %llu job(s)", (unsigned long long)srv->jobs_done);
}

static void server_free(sbd_server *srv) {
  uv_run(&srv->loop, UV_RUN_NOWAIT); /* pending close callbacks */
  sbd_front_free(srv);
  if (uv_loop_close(&srv->loop) == UV_EBUSY) sbd_log(srv, "warn", "handles left open at exit");
  sbd_cache_close(srv->cache);
  uv_run(&srv->loop, UV_RUN_NOWAIT);
  if (srv->have_toolchains) sbt_registry_free(&srv->toolchains);
  sbt_warm_langs_free(&srv->warm_langs);
  sbd_profiles_forget(srv);
  sb_runtime_close(srv->rt);
  free(srv->slot_busy);
  free(srv->slot_waiter);
  free(srv->slot_last_conn);
  free(srv);
}

int sbd_run(sbd_config *cfg) {
  sbd_server *srv = calloc(1, sizeof *srv);
  if (!srv) return 2;
  srv->cfg = cfg;
  if (cfg->socket_path) snprintf(srv->socket_path, sizeof srv->socket_path, "%s", cfg->socket_path);
  else sbu_default_socket(sb_host_euid(), srv->socket_path, sizeof srv->socket_path);
  /* systemd's socket first, before anything else opens descriptors */
  char lerr[256] = "";
  int afd = sbd_listen_fd(srv->socket_path, sizeof srv->socket_path, lerr, sizeof lerr);
  if (cfg->jobs <= 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cfg->jobs = n > 0 ? (int)n : 1;
  }
  /* the same runtime-dir rules as the socket's: an inherited $XDG_RUNTIME_DIR
   * we cannot write must not stop the daemon */
  char state_dir[4096];
  if (!cfg->runtime.state_dir) {
    sbd_default_state_dir(state_dir, sizeof state_dir);
    cfg->runtime.state_dir = state_dir;
  }
  if (open_runtime(srv, cfg) < 0) {
    free(srv);
    return 2;
  }
  uv_loop_init(&srv->loop);
  srv->start_ns = uv_hrtime();
  sbd_toolchains_reload(srv);
  open_cache(srv, cfg);
  bool slots_ok = alloc_slots(srv, cfg->jobs);
  int code = 0;
  if (lerr[0]) sbd_log(srv, afd == -2 ? "error" : "warn", "%s", lerr);
  srv->conn_calls = (sbd_conn_calls){.request = sbd_dispatch, .free_job = sbd_job_free,
                                     .cancel_job = sbd_job_cancel_running};
  srv->job_ended = (sbd_call){job_ended, srv};
  if (!slots_ok || afd == -2 || (afd >= 0 ? adopt_socket(srv, afd) : listen_socket(srv)) < 0) {
    code = 2;
  } else if (sbd_front_start(srv) < 0) {
    code = 2;
    close_all(srv);
  } else {
    serve(srv, cfg);
  }
  server_free(srv);
  return code;
}
