/* The daemon's counters as OpenMetrics text (the metrics request, `surgebox
 * metrics`): a node_exporter textfile collector can read the file as is. */
#include "clock.h"
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double sbd_metrics_bounds[SBD_HIST_N] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

static void hist_add(sbd_hist *h, double v) {
  for (int i = 0; i < SBD_HIST_N; i++)
    if (v <= sbd_metrics_bounds[i]) h->bucket[i]++; /* buckets are cumulative */
  h->count++;
  h->sum += v;
}

void sbd_metrics_loop_turn(sbd_server *srv, double busy_s) {
  hist_add(&srv->loop_busy, busy_s);
  if (busy_s > srv->loop_busy_max) srv->loop_busy_max = busy_s;
}

void sbd_metrics_step(sbd_server *srv, double cpu_s, double wall_s) {
  hist_add(&srv->step_cpu, cpu_s);
  hist_add(&srv->step_wall, wall_s);
}

typedef struct {
  char *s;
  size_t len, cap;
  bool failed;
} buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...) {
  if (b->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->failed = true;
      return;
    }
    if (b->s && b->len + (size_t)n < b->cap) {
      b->len += (size_t)n;
      return;
    }
    size_t ncap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
    char *ns = realloc(b->s, ncap);
    if (!ns) {
      b->failed = true;
      return;
    }
    b->s = ns;
    b->cap = ncap;
  }
}

static void family(buf *b, const char *name, const char *type, const char *unit, const char *help) {
  put(b, "# TYPE %s %s\n", name, type);
  if (unit) put(b, "# UNIT %s %s\n", name, unit);
  put(b, "# HELP %s %s\n", name, help);
}

static void histogram(buf *b, const char *name, const char *help, const sbd_hist *h) {
  family(b, name, "histogram", "seconds", help);
  for (int i = 0; i < SBD_HIST_N; i++)
    put(b, "%s_bucket{le=\"%g\"} %llu\n", name, sbd_metrics_bounds[i], (unsigned long long)h->bucket[i]);
  put(b, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)h->count);
  put(b, "%s_sum %.6f\n", name, h->sum);
  put(b, "%s_count %llu\n", name, (unsigned long long)h->count);
}

static uint64_t cache_counter(sbd_server *srv, const char *key) {
  json_object *st = sbd_cache_stats(srv->cache), *v = NULL;
  uint64_t n = st && json_object_object_get_ex(st, key, &v) ? (uint64_t)json_object_get_int64(v) : 0;
  json_object_put(st);
  return n;
}

/* A summary: p50 and p99 over the recent window (none while it is empty),
 * count and sum over every job started since the daemon did. */
static void queue_time(buf *b, sbd_server *srv) {
  const char *name = "surgebox_queue_time_seconds";
  family(b, name, "summary", "seconds",
         "Queue time (submit to start in a sandbox); quantiles over the last 1024 jobs started within 300 s.");
  double p50 = 0, p99 = 0;
  if (sbd_queuetime_quantiles(&srv->queue_time, sbu_now_ns(), &p50, &p99)) {
    put(b, "%s{quantile=\"0.5\"} %.6f\n", name, p50);
    put(b, "%s{quantile=\"0.99\"} %.6f\n", name, p99);
  }
  put(b, "%s_sum %.6f\n", name, srv->queue_time.sum_s);
  put(b, "%s_count %llu\n", name, (unsigned long long)srv->queue_time.count);
}

char *sbd_metrics_text(sbd_server *srv) {
  buf b = {0};
  family(&b, "surgebox_jobs", "counter", NULL, "Finished exec jobs by overall status.");
  for (int i = 0; i < SBD_N_STATUS; i++)
    put(&b, "surgebox_jobs_total{status=\"%s\"} %llu\n", sbd_status_names[i], (unsigned long long)srv->totals[i]);
  family(&b, "surgebox_rejected_busy", "counter", NULL, "Exec requests refused because the queue was full.");
  put(&b, "surgebox_rejected_busy_total %llu\n", (unsigned long long)srv->rejected_busy);
  family(&b, "surgebox_connections", "counter", NULL, "Client connections accepted.");
  put(&b, "surgebox_connections_total %llu\n", (unsigned long long)srv->connections_total);
  family(&b, "surgebox_spawner_restarts", "counter", NULL, "Restarts of the process that clones sandbox inits.");
  put(&b, "surgebox_spawner_restarts_total %llu\n", (unsigned long long)sb_runtime_spawner(srv->rt, NULL, NULL));
  family(&b, "surgebox_queue_depth", "gauge", NULL, "Exec jobs waiting for a worker.");
  put(&b, "surgebox_queue_depth %zu\n", srv->queued);
  family(&b, "surgebox_running", "gauge", NULL, "Exec jobs running now.");
  put(&b, "surgebox_running %d\n", srv->running);
  family(&b, "surgebox_workers", "gauge", NULL, "Sandboxes that may run at once.");
  put(&b, "surgebox_workers %d\n", srv->n_slots);
  family(&b, "surgebox_cache_hits", "counter", NULL, "Compile steps answered from the compile cache.");
  put(&b, "surgebox_cache_hits_total %llu\n", (unsigned long long)cache_counter(srv, "hits"));
  family(&b, "surgebox_cache_misses", "counter", NULL, "Cacheable compile steps that had to run.");
  put(&b, "surgebox_cache_misses_total %llu\n", (unsigned long long)cache_counter(srv, "misses"));
  histogram(&b, "surgebox_step_cpu_seconds", "CPU time of each sandboxed step.", &srv->step_cpu);
  histogram(&b, "surgebox_step_wall_seconds", "Wall time of each sandboxed step.", &srv->step_wall);
  histogram(&b, "surgebox_loop_busy_seconds",
            "Time the daemon's event loop was busy in each of its turns (a long turn delays every client).",
            &srv->loop_busy);
  queue_time(&b, srv);
  family(&b, "surgebox_uptime_seconds", "gauge", "seconds", "Seconds since the daemon started.");
  put(&b, "surgebox_uptime_seconds %.3f\n", (double)(uv_hrtime() - srv->start_ns) / 1e9);
  if (!b.failed && srv->http && srv->http_metrics) { /* the HTTP front's (front.c) */
    size_t len = b.len;
    if (srv->http_metrics(srv, &b.s, &len) < 0) b.failed = true;
    b.len = len;
    b.cap = len + 1; /* at least: the text ends with its NUL */
  }
  put(&b, "# EOF\n");
  if (b.failed) {
    free(b.s);
    return NULL;
  }
  return b.s;
}
