/* Cheap cgroup attaches: keeping the kernel's attach lock warm while jobs
 * start (cgroup v1; v2 jobs are born in their cgroup and never attach).
 *
 * Moving a process into a cgroup (a write to cgroup.procs) takes the global
 * cgroup_threadgroup_rwsem for writing. That percpu rwsem's rcu_sync waits a
 * full RCU grace period when no other writer ran during the last one or two
 * grace periods: 8-18 ms on this kind of machine, measured per attach when
 * jobs start a few times a second (every compile and every run step of a
 * SURGE regeneration), against 0.03 ms when another attach ran just before
 * (bench/FINDINGS.md). The kernel's cure is the cgroup_favordynmods mount
 * option, which cannot be set on a mounted v1 hierarchy.
 *
 * So, while jobs are starting, a thread writes our own pid into the cgroup
 * we are already in, every 4 ms: a move that moves nothing but still takes
 * the rwsem for writing and so keeps rcu_sync in its "writer recently
 * active" state. It goes back to sleep after SB_WARM_IDLE_MS without a job
 * start. The price while it runs: about 0.03 ms of CPU per write (under
 * 1 % of a core), and fork/exit everywhere on the host take the rwsem's
 * slower reader path, which is what favordynmods trades permanently.
 *
 * The thread only calls write, clock_gettime and pthread_cond_timedwait: it
 * never holds a lock a forked or cloned child could need (sandbox inits are
 * the spawner's clones now, but a process may still fork the daemon). */
#include "thread.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SB_WARM_PERIOD_MS 4
#define SB_WARM_IDLE_MS 2000

static struct timespec abs_after_ms(long ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  return ts;
}

static void *warm_thread(void *arg) {
  sb_attach_warm *w = arg;
  char pid[32];
  int n = snprintf(pid, sizeof pid, "%d", (int)getpid());
  pthread_mutex_lock(&w->mu);
  while (!w->stop) {
    if (sbu_now_ns() < w->until_ns) {
      pthread_mutex_unlock(&w->mu);
      if (write(w->fd, pid, (size_t)n) < 0) { /* not allowed here after all: stop trying */
        pthread_mutex_lock(&w->mu);
        w->broken = true;
        break;
      }
      pthread_mutex_lock(&w->mu);
      struct timespec ts = abs_after_ms(SB_WARM_PERIOD_MS);
      pthread_cond_timedwait(&w->cv, &w->mu, &ts);
    } else {
      pthread_cond_wait(&w->cv, &w->mu); /* idle: until the next job start */
    }
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

void sb_attach_warm_init(sb_attach_warm *w, const char *own_procs_path) {
  memset(w, 0, sizeof *w);
  w->fd = -1;
  if (!own_procs_path) return;
  w->fd = open(own_procs_path, O_WRONLY | O_CLOEXEC);
  if (w->fd < 0) return; /* e.g. a container's read-only cgroup: attaches just stay slow */
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&w->cv, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&w->mu, NULL);
  w->usable = true;
}

void sb_attach_warm_poke(sb_attach_warm *w) {
  if (!w->usable) return;
  pthread_mutex_lock(&w->mu);
  if (!w->broken) {
    w->until_ns = sbu_now_ns() + (uint64_t)SB_WARM_IDLE_MS * 1000000ull;
    /* started on the first job, so that a runtime that never runs one
     * (a client, a test) never has a second thread */
    if (!w->started && sbu_thread_start(&w->thread, warm_thread, w) == 0) w->started = true;
    pthread_cond_signal(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
}

void sb_attach_warm_fini(sb_attach_warm *w) {
  if (!w->usable) return;
  pthread_mutex_lock(&w->mu);
  w->stop = true;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  if (w->started) pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  sbu_closep(&w->fd);
  w->usable = false;
}
