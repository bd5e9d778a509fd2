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
 * side is a fair outcome), or different; and the median ratio of our time to
 * SURGE's (this machine's speed against SURGE's). */
#include "cliopt.h"
#include "regen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EDGES 32

int sbr_bin_of(double t, const double *edges, int n) {
  int b = 0;
  while (b < n && t >= edges[b]) b++;
  return b;
}

sbr_bin_agreement sbr_bin_agree(double published, double ours, double lo, double hi, const double *edges, int n) {
  int bp = sbr_bin_of(published, edges, n), bo = sbr_bin_of(ours, edges, n);
  if (bp == bo) return SBR_BIN_SAME;
  double spread = ours > 0 ? (hi - lo) / ours : 0;
  /* the edges separating the two bins: edges[min(bp,bo)] .. edges[max(bp,bo)-1] */
  for (int e = bp < bo ? bp : bo; e < (bp < bo ? bo : bp); e++)
    if ((lo <= edges[e] && edges[e] <= hi) || fabs(published - edges[e]) <= published * spread) return SBR_BIN_FLAGGED;
  return SBR_BIN_DIFFERENT;
}

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

static double exec_time(json_object *item, const char *key) {
  json_object *e, *v;
  if (!json_object_object_get_ex(item, "exec", &e) || !json_object_object_get_ex(e, key, &v) || !v) return NAN;
  return json_object_get_double(v);
}

enum { O_DATA = 256, O_EDGES, O_JSON };
static const sbo_opt bins_opts[] = {{"data", O_DATA, "FILE", "a regenerated subset (regen --out DIR's <subset>.json; required)"},
                                    {"edges", O_EDGES, "LIST", "increasing bin edges in seconds (default 0.001,0.01,0.1,1)"},
                                    {"json", O_JSON, NULL, "the histogram as JSON"},
                                    {NULL, 0, NULL, NULL}};
static const sbo_cmd bins_cmd = {"surgebox bins", "--data FILE [--edges LIST] [--json]",
                                 "CPU-time histogram of a regenerated subset (SURGE's Figure 4).", bins_opts, NULL, NULL,
                                 false, NULL};

/* The smallest and largest of the repeats (exec.inproc_cpu_s_runs), else t. */
static void spread_of(json_object *item, double t, double *lo, double *hi) {
  json_object *e, *runs;
  *lo = *hi = t;
  if (!json_object_object_get_ex(item, "exec", &e) || !json_object_object_get_ex(e, "inproc_cpu_s_runs", &runs) ||
      !json_object_is_type(runs, json_type_array))
    return;
  for (size_t i = 0; i < json_object_array_length(runs); i++) {
    double v = json_object_get_double(json_object_array_get_idx(runs, i));
    if (v < *lo) *lo = v;
    if (v > *hi) *hi = v;
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void print_indices(const char *label, json_object *arr) {
  size_t n = json_object_array_length(arr);
  printf("  %s %zu%s", label, n, n ? ":" : "");
  for (size_t i = 0; i < n; i++) printf("%s%d", i ? "," : " ", json_object_get_int(json_object_array_get_idx(arr, i)));
  printf("\n");
}

int sbr_bins_main(const sbc_ctx *ctx, int argc, char **argv) {
  const char *file = NULL, *edges_arg = "0.001,0.01,0.1,1";
  bool json = false;
  sbo_parser cl;
  sbo_init(&cl, &bins_cmd, argc, argv);
  int k, rc;
  const char *v;
  while ((k = sbo_next(&cl, &v)) > 0) {
    if (k == O_DATA) file = v;
    else if (k == O_EDGES) edges_arg = v;
    else json = true;
  }
  rc = k == SBO_STOP ? cl.status : sbo_no_args(&cl);
  if (k != SBO_STOP && rc == 0 && !file) rc = sbo_usage_error(&cl, "--data FILE is required");
  sbo_done(&cl);
  if (rc || k == SBO_STOP) return rc;
  double edges[MAX_EDGES];
  int ne = 0;
  for (const char *p = edges_arg; *p && ne < MAX_EDGES;) {
    char *end;
    edges[ne] = strtod(p, &end);
    if (end == p || (ne && edges[ne] <= edges[ne - 1])) {
      fprintf(stderr, "bins: --edges must be increasing numbers separated by commas\n");
      return 1;
    }
    ne++;
    p = *end == ',' ? end + 1 : end;
  }
  json_object *items = json_object_from_file(file);
  if (!items || !json_object_is_type(items, json_type_array)) {
    fprintf(stderr, "bins: cannot read %s\n", file);
    return 2;
  }
  static const char *const sources[] = {"published", "inproc_cpu_s", "cpu_time_s"};
  int hist[3][MAX_EDGES + 1] = {{0}}, have[3] = {0};
  json_object *same = json_object_new_array(), *flagged = json_object_new_array(), *different = json_object_new_array();
  size_t n = json_object_array_length(items), nr = 0;
  double *ratios = calloc(n + 1, sizeof *ratios);
  for (size_t i = 0; i < n; i++) {
    json_object *it = json_object_array_get_idx(items, i);
    double t[3] = {published_time(it), exec_time(it, "inproc_cpu_s"), exec_time(it, "cpu_time_s")};
    for (int s = 0; s < 3; s++) {
      if (isnan(t[s])) continue;
      hist[s][sbr_bin_of(t[s], edges, ne)]++;
      have[s]++;
    }
    /* ours: the span SURGE timed when measured, else the whole tree's CPU */
    double ours = !isnan(t[1]) ? t[1] : t[2], lo, hi;
    if (isnan(t[0]) || isnan(ours)) continue;
    spread_of(it, ours, &lo, &hi);
    sbr_bin_agreement a = sbr_bin_agree(t[0], ours, lo, hi, edges, ne);
    json_object_array_add(a == SBR_BIN_SAME ? same : a == SBR_BIN_FLAGGED ? flagged : different,
                          json_object_new_int((int)i));
    if (t[0] >= 0.1) ratios[nr++] = ours / t[0]; /* long enough for a ratio to mean speed */
  }
  qsort(ratios, nr, sizeof *ratios, cmp_double);
  double ratio = nr ? (nr % 2 ? ratios[nr / 2] : (ratios[nr / 2 - 1] + ratios[nr / 2]) / 2) : NAN;
  free(ratios);
  size_t compared = json_object_array_length(same) + json_object_array_length(flagged) + json_object_array_length(different);
  if (json) {
    json_object *o = json_object_new_object(), *e = json_object_new_array();
    for (int b = 0; b < ne; b++) json_object_array_add(e, json_object_new_double(edges[b]));
    json_object_object_add(o, "edges", e);
    for (int s = 0; s < 3; s++) {
      if (!have[s]) continue;
      json_object *so = json_object_new_object(), *h = json_object_new_array();
      for (int b = 0; b <= ne; b++) json_object_array_add(h, json_object_new_int(hist[s][b]));
      json_object_object_add(so, "items", json_object_new_int(have[s]));
      json_object_object_add(so, "histogram", h);
      json_object_object_add(o, sources[s], so);
    }
    if (compared) {
      json_object *ag = json_object_new_object();
      json_object_object_add(ag, "items", json_object_new_int((int)compared));
      json_object_object_add(ag, "same_bin", json_object_get(same));
      json_object_object_add(ag, "flagged", json_object_get(flagged));
      json_object_object_add(ag, "different", json_object_get(different));
      json_object_object_add(ag, "median_ratio_to_published", isnan(ratio) ? NULL : json_object_new_double(ratio));
      json_object_object_add(o, "agreement", ag);
    }
    puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
    json_object_put(o);
  } else {
    printf("%-16s", "bin (s)");
    for (int s = 0; s < 3; s++)
      if (have[s]) printf(" %14s", sources[s]);
    printf("\n");
    for (int b = 0; b <= ne; b++) {
      char label[48];
      if (b == 0) snprintf(label, sizeof label, "< %g", edges[0]);
      else if (b == ne) snprintf(label, sizeof label, ">= %g", edges[ne - 1]);
      else snprintf(label, sizeof label, "[%g, %g)", edges[b - 1], edges[b]);
      printf("%-16s", label);
      for (int s = 0; s < 3; s++)
        if (have[s]) printf(" %14d", hist[s][b]);
      printf("\n");
    }
    if (compared) {
      printf("agreement with SURGE's bins over %zu timed items: %zu same bin, %zu flagged, %zu different\n", compared,
             json_object_array_length(same), json_object_array_length(flagged), json_object_array_length(different));
      print_indices("flagged (an edge within the spread the repeats measured):", flagged);
      print_indices("different:", different);
      if (!isnan(ratio)) printf("  median time here / SURGE's (items >= 0.1 s): %.2f\n", ratio);
    }
  }
  json_object_put(same);
  json_object_put(flagged);
  json_object_put(different);
  json_object_put(items);
  return 0;
}
