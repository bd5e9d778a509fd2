/* surgebox bins: the CPU-time histogram of SURGE's Figure 4.
 *
 *   surgebox bins --data FILE [--edges 0.001,0.01,0.1,1] [--json]
 *
 * FILE is a TC (or SC) file: the shipped one (custom_features.time, SURGE's
 * "%.4f seconds" measured inside the process around the solver) or one
 * written by `surgebox regen` (exec.inproc_cpu_s, the same span, with every
 * repeat in exec.inproc_cpu_s_runs; exec.cpu_time_s, the whole process tree,
 * as well). Prints items per bin for every time source present, and the
 * agreement with SURGE's own bins over the items both timed: the same bin,
 * flagged (an edge lies within the spread the repeats measured, so either
 * side is a fair outcome), or different. Agreement is judged on calibrated
 * times (bins_calibrate.c: our time divided by the median ratio of our time
 * to SURGE's, this machine's speed against SURGE's), with the raw agreement
 * beside it; every item's raw and calibrated time and bin are listed.
 * --time-scale X multiplies every time measured here by X: a machine X times
 * slower, to check that calibration cancels it. */
#include "protocol.h"
#include "cleanup.h"
#include "bins_items.h"
#include "cliopt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sbs_bin_of(double t, const double *edges, int n) {
  int b = 0;
  while (b < n && t >= edges[b]) b++;
  return b;
}

sbs_bin_agreement sbs_bin_agree(double published, double ours, double lo, double hi, const double *edges, int n) {
  int bp = sbs_bin_of(published, edges, n), bo = sbs_bin_of(ours, edges, n);
  if (bp == bo) return SBS_BIN_SAME;
  double spread = ours > 0 ? (hi - lo) / ours : 0;
  /* the edges separating the two bins: edges[min(bp,bo)] .. edges[max(bp,bo)-1] */
  for (int e = bp < bo ? bp : bo; e < (bp < bo ? bo : bp); e++)
    if ((lo <= edges[e] && edges[e] <= hi) || fabs(published - edges[e]) <= published * spread) return SBS_BIN_FLAGGED;
  return SBS_BIN_DIFFERENT;
}

typedef struct {
  const char *file, *edges;
  double scale;
  bool json;
} bins_args;

#define AT(F) SBO_AT(bins_args, F)
static const sbo_opt bins_opts[] = {
    {"data", 0, "FILE", "a regenerated subset (regen --out DIR's <subset>.json; required)", SBO_STR, AT(file)},
    {"edges", 0, "LIST", "increasing bin edges in seconds (default 0.001,0.01,0.1,1)", SBO_STR, AT(edges)},
    {"time-scale", 0, "X", "multiply every time measured here by X (a machine X times slower; default 1)", SBO_DOUBLE, AT(scale)},
    {"json", 0, NULL, "the histogram, calibration and every item as JSON", SBO_FLAG, AT(json)},
    {NULL, 0, NULL, NULL}};
#undef AT
static const sbo_cmd bins_cmd = {"surgebox bins", "--data FILE [--edges LIST] [--time-scale X] [--json]",
                                 "CPU-time histogram of a regenerated subset (SURGE's Figure 4), calibrated to SURGE's machine.",
                                 bins_opts, NULL, NULL, false, NULL};

static int parse_edges(const char *arg, double *edges, int *ne) {
  *ne = 0;
  for (const char *p = arg; *p;) {
    char *end;
    if (*ne == SBS_BINS_MAX_EDGES) return -1;
    edges[*ne] = strtod(p, &end);
    if (end == p || (*end && *end != ',') || !(edges[*ne] > 0) || (*ne && edges[*ne] <= edges[*ne - 1])) return -1;
    (*ne)++;
    p = *end == ',' ? end + 1 : end;
  }
  return *ne ? 0 : -1;
}

int sbs_bins_main(const sbc_ctx *ctx, int argc, char **argv) {
  (void)ctx;
  bins_args a = {.edges = "0.001,0.01,0.1,1", .scale = 1};
  sbo_parser cl;
  int rc = sbo_parse(&cl, &bins_cmd, argc, argv, &a, NULL, NULL);
  if (!rc) rc = sbo_no_args(&cl);
  if (!rc && !a.file) rc = sbo_usage_error(&cl, "--data FILE is required");
  sbo_done(&cl);
  if (rc) return rc < 0 ? 0 : rc;
  const char *file = a.file;
  bool json = a.json;
  sbs_bins b = {.scale = a.scale};
  if (parse_edges(a.edges, b.edges, &b.ne) < 0) {
    fprintf(stderr, "bins: --edges must be up to %d increasing positive numbers separated by commas\n", SBS_BINS_MAX_EDGES);
    return 1;
  }
  char why[600] = "not a list";
  SBU_AUTOPUT json_object *items = sbp_json_file(file, why, sizeof why);
  if (!items || !json_object_is_type(items, json_type_array)) {
    fprintf(stderr, "bins: %s: %s; a regenerated subset (a JSON list) is what surgebox regen --out DIR writes\n", file, why);
    return 2; /* an unreadable input, as for every command (cli.failure_status) */
  }
  rc = sbs_bins_compute(&b, items);
  if (rc == 0) {
    if (json) sbs_bins_print_json(&b, stdout);
    else sbs_bins_print_text(&b, stdout);
  } else {
    fprintf(stderr, "bins: out of memory\n");
  }
  sbs_bins_free(&b);
  return rc ? 2 : 0;
}
