/* Calibrating CPU times to SURGE's machine. SURGE's TC bins were measured
 * on SURGE's hardware: the same program is 0.59x as long on a fast quiet CPU
 * and 1.3x on a slow loaded one, which moves items across bin edges (issue
 * 23: 10 of 27 TSP items on a fast machine). The timed items themselves are
 * the calibration workload: SURGE published each one's time, we measured it,
 * and the median ratio of the long enough ones is this machine's speed
 * against SURGE's; their quartiles say how closely the items agree. An
 * item of the calibration set is calibrated by the others (leave one out):
 * its own time never pulls its calibrated time towards SURGE's.
 *
 * Whether a calibrated time near an edge is really in another bin is judged
 * against every single run of those items: the fastest and the slowest ratio
 * any run had. A shared VM's speed wanders between runs (stop 55: the two
 * runs of one 10-city item 0.73 and 1.44 of SURGE's time, on a quiet
 * machine), and two repeats of one item can both land fast while most of the
 * others ran slow; the quartiles of the items' medians were too narrow for
 * that, and called a 1.1 s item "different" at 0.9 s (CI of stop 55). The
 * runs' range is what this machine showed it can do to one workload. */
#include "regen.h"
#include "cleanup.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Linear interpolation between order statistics (numpy's default). */
static double quantile(const double *sorted, size_t n, double q) {
  double pos = q * (double)(n - 1);
  size_t i = (size_t)pos;
  if (i + 1 >= n) return sorted[n - 1];
  return sorted[i] + (pos - (double)i) * (sorted[i + 1] - sorted[i]);
}

int sbs_calibrate(const double *ours, const double *run_lo, const double *run_hi, const double *published, size_t n,
                  double min_published, size_t skip, sbs_calibration *out) {
  *out = (sbs_calibration){.factor = NAN, .lo = NAN, .hi = NAN, .run_lo = NAN, .run_hi = NAN};
  SBU_AUTOFREE double *r = malloc((n + 1) * sizeof *r);
  if (!r) return -1;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (i != skip && published[i] >= min_published && ours[i] > 0 && isfinite(ours[i])) {
      r[k++] = ours[i] / published[i];
      double a = (run_lo ? run_lo[i] : ours[i]) / published[i], b = (run_hi ? run_hi[i] : ours[i]) / published[i];
      if (a > 0 && !(out->run_lo <= a)) out->run_lo = a; /* NaN at first; a run of 0 s is no speed */
      if (isfinite(b) && !(out->run_hi >= b)) out->run_hi = b;
    }
  out->used = k;
  if (k < SBS_CALIBRATION_MIN_ITEMS) {
    out->run_lo = out->run_hi = NAN;
    return -1;
  }
  qsort(r, k, sizeof *r, cmp_double);
  out->factor = quantile(r, k, 0.5);
  out->lo = quantile(r, k, 0.25);
  out->hi = quantile(r, k, 0.75);
  return 0;
}

void sbs_calibrated(const sbs_calibration *c, double ours, double lo, double hi, double *t, double *tlo, double *thi) {
  *t = ours / c->factor;
  /* the repeats' spread, widened by the calibration's runs: an item whose
   * run is as fast or as slow as one of theirs is as well explained as one
   * at the median (never narrower than the quartiles) */
  double slow = c->run_hi > c->hi ? c->run_hi : c->hi, fast = c->run_lo < c->lo ? c->run_lo : c->lo;
  double a = lo / slow, b = hi / fast;
  *tlo = a < *t ? a : *t;
  *thi = b > *t ? b : *t;
}
