/* surgebox bins: reading the items' times, calibrating them to SURGE's
 * machine (bins_calibrate.c) and judging both bins. */
#include "bins_items.h"
#include "cleanup.h"
#include "eval_run.h"

#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* SURGE stored "0.1234 seconds" (tsp) or a bare float (SC heat_eq). */
static double published_time(json_object *item) {
  json_object *f, *t;
  if (!json_object_object_get_ex(item, "custom_features", &f) || !json_object_object_get_ex(f, "time", &t) || !t)
    return NAN;
  if (json_object_is_type(t, json_type_string)) {
    char *end;
    double v = strtod(json_object_get_string(t), &end);
    return end == json_object_get_string(t) ? NAN : v;
  }
  return json_object_is_type(t, json_type_double) || json_object_is_type(t, json_type_int) ? json_object_get_double(t)
                                                                                            : NAN;
}

/* Our time, only for an item regenerated here (eval_regen.c's one rule: a
 * cut-off, host-killed or failed run, or an item that never ran, has none). */
static double exec_time(json_object *item, bool regen_output, const char *key) {
  json_object *e, *v;
  char buf[300];
  if (sbe_not_regenerated(item, regen_output, buf, sizeof buf)) return NAN;
  if (!json_object_object_get_ex(item, "exec", &e) || !json_object_object_get_ex(e, key, &v) || !v) return NAN;
  return json_object_get_double(v);
}

/* The smallest and largest of the repeats (exec.inproc_cpu_s_runs), else t. */
static void spread_of(json_object *item, double t, double scale, double *lo, double *hi) {
  json_object *e, *runs;
  *lo = *hi = t;
  if (!json_object_object_get_ex(item, "exec", &e) || !json_object_object_get_ex(e, "inproc_cpu_s_runs", &runs) ||
      !json_object_is_type(runs, json_type_array))
    return;
  for (size_t i = 0; i < json_object_array_length(runs); i++) {
    double v = json_object_get_double(json_object_array_get_idx(runs, i)) * scale;
    if (v < *lo) *lo = v;
    if (v > *hi) *hi = v;
  }
}

int sbs_bins_compute(sbs_bins *b, json_object *items) {
  size_t n = json_object_array_length(items);
  b->items = calloc(n + 1, sizeof *b->items);
  SBU_AUTOFREE double *ours = calloc(n + 1, sizeof *ours), *published = calloc(n + 1, sizeof *published);
  SBU_AUTOFREE double *run_lo = calloc(n + 1, sizeof *run_lo), *run_hi = calloc(n + 1, sizeof *run_hi);
  if (!b->items || !ours || !published || !run_lo || !run_hi) return -ENOMEM;
  bool regen_output = sbe_regen_output(items);
  SBU_AUTOPUT json_object *why = json_object_new_object(); /* reason -> count, in first-seen order */
  b->set_both = false;
  for (size_t i = 0; i < n && !b->set_both; i++) b->set_both = !isnan(published_time(json_object_array_get_idx(items, i)));
  for (size_t i = 0; i < n; i++) {
    json_object *it = json_object_array_get_idx(items, i);
    char buf[300];
    const char *nr = regen_output ? sbe_not_regenerated(it, true, buf, sizeof buf) : NULL;
    if (nr) {
      json_object *c = json_object_object_get(why, nr);
      json_object_object_add(why, nr, json_object_new_int(c ? json_object_get_int(c) + 1 : 1));
      b->excluded++;
    }
    double t[SBS_N_SRC] = {published_time(it), exec_time(it, regen_output, "inproc_cpu_s") * b->scale,
                           exec_time(it, regen_output, "cpu_time_s") * b->scale};
    double o = !isnan(t[SBS_SRC_INPROC]) ? t[SBS_SRC_INPROC] : t[SBS_SRC_TREE];
    bool surge = !isnan(t[SBS_SRC_PUBLISHED]), here = !isnan(o);
    b->surge_only += surge && !here;
    b->ours_only += here && !surge && b->set_both;
    if (!here || (b->set_both && !surge)) continue; /* outside the one item set every column counts */
    b->set_n++;
    for (int s = 0; s < SBS_N_SRC; s++) {
      if (isnan(t[s])) continue;
      b->hist[s][sbs_bin_of(t[s], b->edges, b->ne)]++;
      b->have[s]++;
    }
    if (!surge) continue;
    sbs_bin_item *x = &b->items[b->n];
    x->index = (int)i;
    x->published = published[b->n] = t[SBS_SRC_PUBLISHED];
    x->ours = ours[b->n] = o;
    spread_of(it, o, b->scale, &x->lo, &x->hi);
    run_lo[b->n] = x->lo;
    run_hi[b->n] = x->hi;
    b->n++;
  }
  size_t len = 0;
  json_object_object_foreach(why, reason, count) {
    int w = snprintf(b->excluded_why + len, sizeof b->excluded_why - len, "%s%s %d", len ? ", " : "", reason,
                     json_object_get_int(count));
    if (w < 0 || (size_t)w >= sizeof b->excluded_why - len) break;
    len += (size_t)w;
  }
  for (int s = SBS_SRC_INPROC; s < SBS_N_SRC; s++) /* a column over fewer items than the others: left out, said */
    if (b->have[s] && (size_t)b->have[s] < b->set_n) {
      b->left_out[s] = (int)b->set_n - b->have[s];
      b->have[s] = 0;
      memset(b->hist[s], 0, sizeof b->hist[s]);
    }
  b->calibrated = sbs_calibrate(ours, run_lo, run_hi, published, b->n, SBS_CALIBRATION_MIN_PUBLISHED, SIZE_MAX, &b->cal) == 0;
  b->raw_ratio = b->cal.factor;
  for (size_t i = 0; i < b->n; i++) {
    sbs_bin_item *x = &b->items[i];
    sbs_calibration own = b->cal; /* an item of the calibration set: by the others */
    if (b->calibrated && x->published >= SBS_CALIBRATION_MIN_PUBLISHED &&
        sbs_calibrate(ours, run_lo, run_hi, published, b->n, SBS_CALIBRATION_MIN_PUBLISHED, i, &own) < 0)
      own = b->cal;
    x->published_bin = sbs_bin_of(x->published, b->edges, b->ne);
    x->raw_bin = sbs_bin_of(x->ours, b->edges, b->ne);
    x->raw = sbs_bin_agree(x->published, x->ours, x->lo, x->hi, b->edges, b->ne);
    x->cal = x->cal_lo = x->cal_hi = NAN;
    x->cal_bin = -1;
    x->calibrated = x->raw;
    if (!b->calibrated) continue;
    sbs_calibrated(&own, x->ours, x->lo, x->hi, &x->cal, &x->cal_lo, &x->cal_hi);
    x->cal_bin = sbs_bin_of(x->cal, b->edges, b->ne);
    x->calibrated = sbs_bin_agree(x->published, x->cal, x->cal_lo, x->cal_hi, b->edges, b->ne);
    b->hist[SBS_N_SRC][x->cal_bin]++;
    b->have[SBS_N_SRC]++;
  }
  return 0;
}

void sbs_bins_free(sbs_bins *b) {
  free(b->items);
  b->items = NULL;
  b->n = 0;
}
