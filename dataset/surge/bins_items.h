/* surgebox bins' figures (bins_items.c computes them, bins_print.c prints
 * them): per time source a histogram; per item both times and bins; the
 * calibration; agreement raw and calibrated. */
#ifndef SURGEBOX_BINS_ITEMS_H
#define SURGEBOX_BINS_ITEMS_H

#include "regen.h"

#include <stdio.h>

#define SBS_BINS_MAX_EDGES 32
enum { SBS_SRC_PUBLISHED, SBS_SRC_INPROC, SBS_SRC_TREE, SBS_N_SRC };

typedef struct {
  int index;                 /* in the file */
  double published, ours;    /* ours: the span SURGE timed when measured, else the whole tree's CPU */
  double lo, hi;             /* the repeats' range (ours when one run) */
  double cal, cal_lo, cal_hi;/* calibrated (NAN without a calibration) */
  int published_bin, raw_bin, cal_bin;
  sbs_bin_agreement raw, calibrated;
} sbs_bin_item;

typedef struct {
  double edges[SBS_BINS_MAX_EDGES];
  int ne;
  double scale;              /* --time-scale */
  int hist[SBS_N_SRC + 1][SBS_BINS_MAX_EDGES + 1]; /* + calibrated */
  int have[SBS_N_SRC + 1];
  sbs_bin_item *items;       /* those both SURGE and we timed */
  size_t n;
  bool calibrated;
  sbs_calibration cal;
  double raw_ratio;          /* median ours / SURGE's over items >= the calibration minimum (= cal.factor) */
  /* Every column counts one item set: the items timed both by SURGE and here
   * when SURGE timed any (else those timed here); a column of ours that lacks
   * some of them is left out (left_out[s]: how many it lacks). */
  bool set_both;             /* the set is "timed both by SURGE and here" */
  size_t set_n;              /* its size */
  size_t surge_only;         /* SURGE timed them, we did not (not regenerated, or no time of ours) */
  size_t ours_only;          /* timed here, SURGE did not: outside the set when SURGE timed others */
  int left_out[SBS_N_SRC];
  size_t excluded;           /* items with no time of ours: not regenerated here (eval_regen.c's rule:
                              * unfinished runs, timeout, memory, host kill, are among them) */
  char excluded_why[200];    /* "not_run 146, memory_limit 2" */
} sbs_bins;

int sbs_bins_compute(sbs_bins *b, json_object *items); /* 0 or -ENOMEM */
void sbs_bins_free(sbs_bins *b);
void sbs_bins_print_text(const sbs_bins *b, FILE *f);
void sbs_bins_print_json(const sbs_bins *b, FILE *f);
/* "same", "flagged", "different" */
const char *sbs_bin_agreement_name(sbs_bin_agreement a);
/* bin i of b as "< 0.001", "[0.001, 0.01)", ">= 1" */
void sbs_bin_label(const sbs_bins *b, int i, char *out, size_t len);

#endif
