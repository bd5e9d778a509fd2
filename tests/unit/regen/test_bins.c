/* SURGE's CPU-time bins (dataset/surge/bins.c): which bin a time falls in,
 * and whether our time agrees with SURGE's, is flagged (an edge within the
 * spread our repeats measured) or differs. Times are hand-written, shaped
 * like SURGE's TSP items (3 cities 0.0000 s, 10 cities 1.1037 s). */
#include "check.h"
#include "regen.h"

#include <math.h>
#include <stdint.h>

static const double edges[] = {0.001, 0.01, 0.1, 1};
#define AGREE(pub, ours, lo, hi) sbs_bin_agree(pub, ours, lo, hi, edges, 4)

/* Calibration: ratios 0.9, 1.0, 1.1 (and a short item that must not count). */
static void calibration(void) {
  const double published[] = {1.0, 2.0, 0.5, 0.0001, 1.1};
  double ours[] = {0.9, 2.0, 0.55, 0.004, 2.2};
  sbs_calibration c;
  CHECK(sbs_calibrate(ours, NULL, NULL, published, 4, 0.1, SIZE_MAX, &c) == 0);
  CHECK(c.used == 3);
  CHECK(fabs(c.factor - 1.0) < 1e-12);
  CHECK(fabs(c.lo - 0.95) < 1e-12 && fabs(c.hi - 1.05) < 1e-12); /* numpy's quantiles of 0.9, 1.0, 1.1 */
  /* leave one out: without the 1.0 ratio, the median of 0.9 and 1.1 */
  CHECK(sbs_calibrate(ours, NULL, NULL, published, 4, 0.1, 1, &c) < 0 && c.used == 2); /* 2 < SBS_CALIBRATION_MIN_ITEMS */
  CHECK(sbs_calibrate(ours, NULL, NULL, published, 5, 0.1, 1, &c) == 0 && c.used == 3 && fabs(c.factor - 1.1) < 1e-12);
  /* too few long items */
  CHECK(sbs_calibrate(ours, NULL, NULL, published, 2, 0.1, SIZE_MAX, &c) < 0 && c.used == 2 && isnan(c.factor));
  /* a machine twice as slow: the same calibrated time and range */
  CHECK(sbs_calibrate(ours, NULL, NULL, published, 4, 0.1, SIZE_MAX, &c) == 0);
  double t1, lo1, hi1, t2, lo2, hi2;
  sbs_calibrated(&c, 0.95, 0.9, 1.0, &t1, &lo1, &hi1);
  for (int i = 0; i < 4; i++) ours[i] *= 2;
  CHECK(sbs_calibrate(ours, NULL, NULL, published, 4, 0.1, SIZE_MAX, &c) == 0 && fabs(c.factor - 2.0) < 1e-12);
  sbs_calibrated(&c, 1.9, 1.8, 2.0, &t2, &lo2, &hi2);
  CHECK(fabs(t1 - 0.95) < 1e-12 && fabs(t1 - t2) < 1e-12 && fabs(lo1 - lo2) < 1e-12 && fabs(hi1 - hi2) < 1e-12);
  /* the range holds the repeats' spread widened by the calibration's runs
   * (no runs given: the medians 0.9 .. 1.1, wider than the quartiles): 0.9 / 1.1 .. 1.0 / 0.9 */
  CHECK(fabs(c.lo - 1.9) < 1e-12 && fabs(c.run_lo - 1.8) < 1e-12 && fabs(c.run_hi - 2.2) < 1e-12);
  CHECK(fabs(lo1 - 0.9 / 1.1) < 1e-12 && fabs(hi1 - 1.0 / 0.9) < 1e-12);
  /* SURGE's 1.1037 s against ours 0.98 on a machine 0.89x SURGE's: calibrated 1.101, the same bin */
  const double pub10[] = {1.1037, 1.1501, 1.0861, 1.1012};
  double ours10[] = {0.9799, 0.9931, 0.9843, 1.0047};
  CHECK(sbs_calibrate(ours10, NULL, NULL, pub10, 4, 0.1, 0, &c) == 0);
  sbs_calibrated(&c, ours10[0], ours10[0], ours10[0], &t1, &lo1, &hi1);
  CHECK(AGREE(1.1037, ours10[0], ours10[0], ours10[0]) == SBS_BIN_DIFFERENT); /* raw: 0.98 < 1 */
  CHECK(AGREE(1.1037, t1, lo1, hi1) == SBS_BIN_SAME);
  /* stop 55's CI: a shared VM's runs wander. Nine 1.1 s items whose two runs
   * were 0.80 and 1.30 of SURGE's time (medians 1.05) and one whose runs were
   * both 0.85: the quartiles of the medians (1.05) put it at 0.89 s,
   * different; its runs are no faster than the others' fastest, so flagged */
  double pub9[10], med9[10], lo9[10], hi9[10];
  for (int i = 0; i < 10; i++) {
    pub9[i] = 1.1;
    lo9[i] = i ? 0.80 * 1.1 : 0.85 * 1.1;
    hi9[i] = i ? 1.30 * 1.1 : 0.85 * 1.1;
    med9[i] = (lo9[i] + hi9[i]) / 2;
  }
  CHECK(sbs_calibrate(med9, NULL, NULL, pub9, 10, 0.1, 0, &c) == 0 && fabs(c.run_lo - 1.05) < 1e-12);
  sbs_calibrated(&c, med9[0], lo9[0], hi9[0], &t1, &lo1, &hi1);
  CHECK(AGREE(1.1, t1, lo1, hi1) == SBS_BIN_DIFFERENT); /* the medians alone: 0.935 / 1.05 = 0.89 s */
  CHECK(sbs_calibrate(med9, lo9, hi9, pub9, 10, 0.1, 0, &c) == 0);
  CHECK(c.used == 9 && fabs(c.factor - 1.05) < 1e-12 && fabs(c.run_lo - 0.80) < 1e-12 && fabs(c.run_hi - 1.30) < 1e-12);
  sbs_calibrated(&c, med9[0], lo9[0], hi9[0], &t1, &lo1, &hi1);
  CHECK(fabs(t1 - 0.935 / 1.05) < 1e-12 && fabs(hi1 - 0.935 / 0.80) < 1e-12 && fabs(lo1 - 0.935 / 1.30) < 1e-12);
  CHECK(AGREE(1.1, t1, lo1, hi1) == SBS_BIN_FLAGGED);
  /* a quiet machine (runs within 2 %): an item 15 % faster than all is still different */
  for (int i = 1; i < 10; i++) lo9[i] = 0.99 * 1.1, hi9[i] = 1.01 * 1.1, med9[i] = 1.1;
  CHECK(sbs_calibrate(med9, lo9, hi9, pub9, 10, 0.1, 0, &c) == 0);
  sbs_calibrated(&c, med9[0], lo9[0], hi9[0], &t1, &lo1, &hi1);
  CHECK(fabs(c.run_lo - 0.99) < 1e-12 && AGREE(1.1, t1, lo1, hi1) == SBS_BIN_DIFFERENT);
  /* a run read as 0 s says nothing of the machine's speed: not the fastest */
  lo9[5] = 0;
  CHECK(sbs_calibrate(med9, lo9, hi9, pub9, 10, 0.1, 0, &c) == 0 && fabs(c.run_lo - 0.99) < 1e-12);
  lo9[5] = 0.99 * 1.1;
  /* too few items: no runs' range either */
  CHECK(sbs_calibrate(med9, lo9, hi9, pub9, 2, 0.1, SIZE_MAX, &c) < 0 && isnan(c.run_lo) && isnan(c.run_hi));
}

int main(void) {
  calibration();
  CHECK(sbs_bin_of(0.0, edges, 4) == 0);
  CHECK(sbs_bin_of(0.000075, edges, 4) == 0);
  CHECK(sbs_bin_of(0.001, edges, 4) == 1); /* an edge belongs to the bin above it */
  CHECK(sbs_bin_of(0.9999, edges, 4) == 3);
  CHECK(sbs_bin_of(1.1037, edges, 4) == 4);
  CHECK(sbs_bin_of(143.9, edges, 4) == 4);
  /* 3 cities: SURGE 0.0000, ours 75 us */
  CHECK(AGREE(0.0, 0.000075, 0.00007, 0.00008) == SBS_BIN_SAME);
  /* 10 cities, SURGE 1.1037 s; ours 0.95 s with repeats 0.90..1.02: the 1 s edge is inside the spread */
  CHECK(AGREE(1.1037, 0.95, 0.90, 1.02) == SBS_BIN_FLAGGED);
  /* SURGE's figure far from the edge, ours straddling it: flagged by our repeats alone */
  CHECK(AGREE(2.0, 0.99, 0.98, 1.01) == SBS_BIN_FLAGGED);
  /* ours 0.80 (0.78..0.82, 5 %): 1.1037 is 10 % above the edge, outside that spread */
  CHECK(AGREE(1.1037, 0.80, 0.78, 0.82) == SBS_BIN_DIFFERENT);
  /* SURGE's 1.04 is 4 % above the edge, within our 5 % spread */
  CHECK(AGREE(1.04, 0.80, 0.78, 0.82) == SBS_BIN_FLAGGED);
  /* one run only: no spread, no flag */
  CHECK(AGREE(0.0001, 0.0015, 0.0015, 0.0015) == SBS_BIN_DIFFERENT);
  /* two bins apart: either edge in between may be inside the spread */
  CHECK(AGREE(0.005, 0.5, 0.05, 0.9) == SBS_BIN_FLAGGED);
  CHECK(AGREE(0.005, 0.5, 0.45, 0.55) == SBS_BIN_DIFFERENT);
  /* an edge outside the two bins never flags: 0.5 vs 0.6 is the same bin anyway; 0.02 vs 0.5 with 0.9..1.1 spread */
  CHECK(AGREE(0.02, 0.5, 0.45, 1.1) == SBS_BIN_DIFFERENT);
  return check_exit();
}
