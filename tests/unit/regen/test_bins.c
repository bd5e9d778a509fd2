/* SURGE's CPU-time bins (dataset/surge/bins.c): which bin a time falls in,
 * and whether our time agrees with SURGE's, is flagged (an edge within the
 * spread our repeats measured) or differs. Times are hand-written, shaped
 * like SURGE's TSP items (3 cities 0.0000 s, 10 cities 1.1037 s). */
#include "check.h"
#include "regen.h"

static const double edges[] = {0.001, 0.01, 0.1, 1};
#define AGREE(pub, ours, lo, hi) sbr_bin_agree(pub, ours, lo, hi, edges, 4)

int main(void) {
  CHECK(sbr_bin_of(0.0, edges, 4) == 0);
  CHECK(sbr_bin_of(0.000075, edges, 4) == 0);
  CHECK(sbr_bin_of(0.001, edges, 4) == 1); /* an edge belongs to the bin above it */
  CHECK(sbr_bin_of(0.9999, edges, 4) == 3);
  CHECK(sbr_bin_of(1.1037, edges, 4) == 4);
  CHECK(sbr_bin_of(143.9, edges, 4) == 4);
  /* 3 cities: SURGE 0.0000, ours 75 us */
  CHECK(AGREE(0.0, 0.000075, 0.00007, 0.00008) == SBR_BIN_SAME);
  /* 10 cities, SURGE 1.1037 s; ours 0.95 s with repeats 0.90..1.02: the 1 s edge is inside the spread */
  CHECK(AGREE(1.1037, 0.95, 0.90, 1.02) == SBR_BIN_FLAGGED);
  /* SURGE's figure far from the edge, ours straddling it: flagged by our repeats alone */
  CHECK(AGREE(2.0, 0.99, 0.98, 1.01) == SBR_BIN_FLAGGED);
  /* ours 0.80 (0.78..0.82, 5 %): 1.1037 is 10 % above the edge, outside that spread */
  CHECK(AGREE(1.1037, 0.80, 0.78, 0.82) == SBR_BIN_DIFFERENT);
  /* SURGE's 1.04 is 4 % above the edge, within our 5 % spread */
  CHECK(AGREE(1.04, 0.80, 0.78, 0.82) == SBR_BIN_FLAGGED);
  /* one run only: no spread, no flag */
  CHECK(AGREE(0.0001, 0.0015, 0.0015, 0.0015) == SBR_BIN_DIFFERENT);
  /* two bins apart: either edge in between may be inside the spread */
  CHECK(AGREE(0.005, 0.5, 0.05, 0.9) == SBR_BIN_FLAGGED);
  CHECK(AGREE(0.005, 0.5, 0.45, 0.55) == SBR_BIN_DIFFERENT);
  /* an edge outside the two bins never flags: 0.5 vs 0.6 is the same bin anyway; 0.02 vs 0.5 with 0.9..1.1 spread */
  CHECK(AGREE(0.02, 0.5, 0.45, 1.1) == SBR_BIN_DIFFERENT);
  return check_exit();
}
