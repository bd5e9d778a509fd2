/* One sandboxed run watched by the loop: a uv_poll per descriptor of the
 * sb_proc (its pidfd, the init's control socket, stdout, stderr, a trace) and a timer
 * for the limits. Each poll watches a dup() of the descriptor, so that when
 * the runner closes its own copy (EOF), epoll's registration stays valid
 * until we stop the handle ourselves. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int proc_fd(const sb_proc *p, int i) {
  switch (i) {
  case 0: return sb_proc_pidfd(p);
  case 1: return sb_proc_control_fd(p);
  case 2: return sb_proc_stdout_fd(p);
  case 3: return sb_proc_stderr_fd(p);
  default: return sb_proc_trace_fd(p);
  }
}

static void on_handle_closed(uv_handle_t *h) {
  sbd_step_run *run = h->data;
  /* A poll's own descriptor goes as soon as its handle is closed: a pipe
   * the runner gave up on (the trace past its cap) must have no reader
   * left, or its writer would block until the wall limit. */
  for (int i = 0; i < SBD_STEP_FDS; i++)
    if (h == (uv_handle_t *)&run->poll[i] && run->dup_fd[i] >= 0) {
      close(run->dup_fd[i]);
      run->dup_fd[i] = -1;
    }
  if (--run->open_handles == 0) {
    for (int i = 0; i < SBD_STEP_FDS; i++)
      if (run->dup_fd[i] >= 0) close(run->dup_fd[i]);
    free(run);
  }
}

static void stop_poll(sbd_step_run *run, int i) {
  if (!run->active[i]) return;
  run->active[i] = false;
  uv_poll_stop(&run->poll[i]);
  uv_close((uv_handle_t *)&run->poll[i], on_handle_closed);
}

static void finish(sbd_step_run *run) {
  run->finished = true;
  for (int i = 0; i < SBD_STEP_FDS; i++) stop_poll(run, i);
  uv_timer_stop(&run->timer);
  uv_close((uv_handle_t *)&run->timer, on_handle_closed);
  sb_result r;
  sb_proc_finish(run->proc, &r);
  run->proc = NULL;
  run->done.fn(run->done.arg, &r); /* its user's: may start the next step or end the job */
}

/* After any event: drop polls whose descriptor the runner closed, re-arm the
 * limit timer, and finish once the run is complete. */
static void update(sbd_step_run *run) {
  if (run->finished) return;
  for (int i = 0; i < SBD_STEP_FDS; i++)
    if (run->active[i] && proc_fd(run->proc, i) < 0) stop_poll(run, i);
  if (sb_proc_done(run->proc)) {
    finish(run);
    return;
  }
}

/* Descriptors without a poll (dup failed: out of fds) are read on each tick
 * instead; every sb_proc_on_* call is non-blocking. */
static void poll_unwatched(sbd_step_run *run) {
  for (int i = 0; i < SBD_STEP_FDS; i++) {
    int fd = proc_fd(run->proc, i);
    if (run->active[i] || fd < 0) continue;
    if (i == 0) sb_proc_on_exit(run->proc);
    else if (i == 1) sb_proc_on_control(run->proc);
    else sb_proc_on_output(run->proc, fd);
  }
}

static void on_timer(uv_timer_t *t) {
  sbd_step_run *run = t->data;
  if (run->finished) return;
  poll_unwatched(run);
  int ms = sb_proc_tick(run->proc);
  bool unwatched = false;
  for (int i = 0; i < SBD_STEP_FDS; i++) unwatched |= !run->active[i] && proc_fd(run->proc, i) >= 0;
  if (unwatched && (ms < 0 || ms > 20)) ms = 20;
  if (ms >= 0) uv_timer_start(&run->timer, on_timer, (uint64_t)ms, 0);
  update(run);
}

static void on_poll(uv_poll_t *h, int status, int events) {
  (void)status;
  (void)events;
  sbd_step_run *run = h->data;
  if (run->finished) return;
  int i = (int)(h - run->poll);
  int fd = proc_fd(run->proc, i);
  if (fd >= 0) {
    if (i == 0) sb_proc_on_exit(run->proc);
    else if (i == 1) sb_proc_on_control(run->proc);
    else sb_proc_on_output(run->proc, fd);
  }
  /* The init may have become ready: a GO starts the wall clock, so the
   * timer needs the new deadline. */
  if (!run->finished && i == 1) on_timer(&run->timer);
  else update(run);
}

int sbd_step_start(sbd_server *srv, const sb_spec *spec, sbd_step_done done, sbd_step_run **out,
                   char err[SB_ERR_MAX]) {
  sbd_step_run *run = calloc(1, sizeof *run);
  if (!run) {
    snprintf(err, SB_ERR_MAX, "out of memory");
    return -ENOMEM;
  }
  run->done = done;
  for (int i = 0; i < SBD_STEP_FDS; i++) run->dup_fd[i] = -1;
  int rc = sb_proc_start(srv->rt, spec, &run->proc, err);
  if (rc < 0) {
    free(run);
    return rc;
  }
  uv_loop_t *loop = &srv->loop;
  uv_timer_init(loop, &run->timer);
  run->timer.data = run;
  run->open_handles = 1;
  for (int i = 0; i < SBD_STEP_FDS; i++) {
    int fd = proc_fd(run->proc, i);
    if (fd < 0) continue;
    run->dup_fd[i] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (run->dup_fd[i] < 0 || uv_poll_init(loop, &run->poll[i], run->dup_fd[i]) < 0) continue;
    run->poll[i].data = run;
    run->active[i] = true;
    run->open_handles++;
    uv_poll_start(&run->poll[i], UV_READABLE | UV_DISCONNECT, on_poll);
  }
  *out = run;
  uv_timer_start(&run->timer, on_timer, (uint64_t)sb_proc_tick(run->proc), 0);
  return 0;
}

void sbd_step_start_failed(sbd_server *srv, const sb_spec *spec, const char *err, sb_result *r) {
  memset(r, 0, sizeof *r);
  r->status = SB_INTERNAL_ERROR;
  r->exit_code = -1;
  r->uid = -1;
  r->limits = spec->limits;
  r->cgroup = sb_runtime_cgroup(srv->rt);
  snprintf(r->error, sizeof r->error, "%s", err);
}

void sbd_step_kill(sbd_step_run *run, const char *why) {
  if (run && !run->finished) sb_proc_kill(run->proc, why);
}
