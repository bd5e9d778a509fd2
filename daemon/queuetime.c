/* Queue time (a job's submit to its start in a sandbox) over a recent
 * window: the last SBD_QT_WINDOW jobs that started, of those the ones that
 * started within SBD_QT_WINDOW_S seconds. Its p50 and p99 go to status and
 * metrics, so a fleet's client (or its operator) sees which daemon keeps
 * work waiting. Quantiles are nearest-rank: the smallest queue time that
 * at least q of the window's jobs did not exceed (a value that occurred). */
#include "internal.h"
#include "json_seconds.h"

#include <stdlib.h>

void sbd_queuetime_add(sbd_queuetime *q, uint64_t started_ns, uint64_t queue_ns) {
  q->started_ns[q->next] = started_ns;
  q->queue_ns[q->next] = queue_ns;
  q->next = (q->next + 1) % SBD_QT_WINDOW;
  if (q->n < SBD_QT_WINDOW) q->n++;
  q->count++;
  q->sum_s += (double)queue_ns / 1e9;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* percent of n, rounded up: the 1-based rank (exact in integers: no 0.99 * n rounding) */
static double rank(const uint64_t *sorted, size_t n, size_t percent) {
  size_t r = (n * percent + 99) / 100;
  if (r < 1) r = 1;
  return (double)sorted[r - 1] / 1e9;
}

size_t sbd_queuetime_quantiles(const sbd_queuetime *q, uint64_t now_ns, double *p50, double *p99) {
  static uint64_t v[SBD_QT_WINDOW]; /* the loop thread's alone */
  uint64_t horizon = (uint64_t)SBD_QT_WINDOW_S * 1000000000u;
  size_t n = 0;
  for (size_t i = 0; i < q->n; i++)
    if (now_ns - q->started_ns[i] <= horizon) v[n++] = q->queue_ns[i];
  if (n == 0) return 0;
  qsort(v, n, sizeof v[0], cmp_u64);
  *p50 = rank(v, n, 50);
  *p99 = rank(v, n, 99);
  return n;
}

json_object *sbd_queuetime_json(const sbd_queuetime *q, uint64_t now_ns) {
  json_object *o = json_object_new_object();
  double p50 = 0, p99 = 0;
  size_t n = sbd_queuetime_quantiles(q, now_ns, &p50, &p99);
  json_object_object_add(o, "window_jobs", json_object_new_int64((int64_t)n));
  json_object_object_add(o, "window_max_jobs", json_object_new_int(SBD_QT_WINDOW));
  json_object_object_add(o, "window_s", json_object_new_int(SBD_QT_WINDOW_S));
  json_object_object_add(o, "p50_s", n ? sbu_json_seconds(p50) : NULL);
  json_object_object_add(o, "p99_s", n ? sbu_json_seconds(p99) : NULL);
  return o;
}
