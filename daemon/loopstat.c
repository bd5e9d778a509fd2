/* How long the loop thread stays busy per turn: from one uv_prepare (just
 * before the loop blocks in epoll) to the next, minus the time it spent
 * blocked (libuv's idle-time metric). A turn that takes long delays every
 * other client's events (a job's exit, its output, a new request), so the
 * longest is in `status` (loop_busy_max_s) and every turn in the metrics
 * (surgebox_loop_busy_seconds). Nothing in a turn should wait for the
 * kernel's slow work: a slot's teardown runs on its own thread. */
#include "internal.h"

static void on_prepare(uv_prepare_t *h) {
  sbd_server *srv = h->data;
  uint64_t now = uv_hrtime(), idle = uv_metrics_idle_time(&srv->loop);
  if (srv->turn_start_ns) {
    uint64_t wall = now - srv->turn_start_ns, blocked = idle - srv->turn_idle_ns;
    double busy = wall > blocked ? (double)(wall - blocked) / 1e9 : 0;
    sbd_metrics_loop_turn(srv, busy);
  }
  srv->turn_start_ns = now;
  srv->turn_idle_ns = idle;
}

void sbd_loopstat_start(sbd_server *srv) {
  uv_loop_configure(&srv->loop, UV_METRICS_IDLE_TIME);
  uv_prepare_init(&srv->loop, &srv->turns);
  srv->turns.data = srv;
  uv_prepare_start(&srv->turns, on_prepare);
  uv_unref((uv_handle_t *)&srv->turns); /* never what keeps the loop running */
}

void sbd_loopstat_stop(sbd_server *srv) { uv_close((uv_handle_t *)&srv->turns, NULL); }
