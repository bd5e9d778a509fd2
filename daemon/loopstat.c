/* How long the loop thread stays busy per turn: from one uv_prepare (just
 * before the loop blocks in epoll) to the next, minus the time it spent
 * blocked in epoll (libuv's idle-time metric) and minus the time it waited
 * for a CPU (the thread's schedstat run_delay): what the loop did or waited
 * for itself, not the machine's load (at load 30 on 2 cores a runnable loop
 * waited up to 0.4 s for a CPU). A turn that takes long delays every other
 * client's events (a job's exit, its output, a new request), so the longest
 * is in `status` (loop_busy_max_s) and every turn in the metrics
 * (surgebox_loop_busy_seconds). Nothing in a turn should wait for the
 * kernel's slow work: a slot's teardown runs on its own thread. */
#include "internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Nanoseconds the thread waited on a run queue so far; 0 without schedstat. */
static uint64_t run_delay(int fd) {
  char buf[128];
  ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
  if (n <= 0) return 0;
  buf[n] = '\0';
  char *p = strchr(buf, ' ');
  return p ? strtoull(p + 1, NULL, 10) : 0;
}

static void on_prepare(uv_prepare_t *h) {
  sbd_server *srv = h->data;
  uint64_t now = uv_hrtime(), idle = uv_metrics_idle_time(&srv->loop), delay = run_delay(srv->turn_schedstat_fd);
  if (srv->turn_start_ns) {
    uint64_t away = (idle - srv->turn_idle_ns) + (delay - srv->turn_delay_ns), wall = now - srv->turn_start_ns;
    sbd_metrics_loop_turn(srv, wall > away ? (double)(wall - away) / 1e9 : 0);
  }
  srv->turn_start_ns = now;
  srv->turn_idle_ns = idle;
  srv->turn_delay_ns = delay;
}

void sbd_loopstat_start(sbd_server *srv) {
  srv->turn_schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC); /* the loop's own thread */
  uv_loop_configure(&srv->loop, UV_METRICS_IDLE_TIME);
  uv_prepare_init(&srv->loop, &srv->turns);
  srv->turns.data = srv;
  uv_prepare_start(&srv->turns, on_prepare);
  uv_unref((uv_handle_t *)&srv->turns); /* never what keeps the loop running */
}

void sbd_loopstat_stop(sbd_server *srv) {
  uv_close((uv_handle_t *)&srv->turns, NULL);
  if (srv->turn_schedstat_fd >= 0) close(srv->turn_schedstat_fd);
  srv->turn_schedstat_fd = -1;
}
