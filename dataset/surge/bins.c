/* surgebox bins: the CPU-time histogram of SURGE's Figure 4.
 *
 *   surgebox bins --data FILE [--edges 0.001,0.01,0.1,1] [--json]
 *
 * FILE is a TC (or SC) file: the shipped one (custom_features.time, SURGE's
 * "%.4f seconds" measured inside the process) or one written by `surgebox
 * regen` (exec.inproc_cpu_s and exec.cpu_time_s as well). Prints items per
 * bin for every time source present, how many regenerated times fall into
 * the same bin as SURGE's, and the items within 30 % of a bin edge, which
 * may land on either side from one run to the next. */
#include "cliopt.h"
#include "regen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EDGES 32

static int bin_of(double t, const double *edges, int n) {
  int b = 0;
  while (b < n && t >= edges[b]) b++;
  return b;
}

static bool near_edge(double t, const double *edges, int n) {
  for (int i = 0; i < n; i++)
    if (t >= edges[i] / 1.3 && t <= edges[i] * 1.3) return true;
  return false;
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
                                 false};

int sbr_bins_main(int argc, char **argv) {
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
  int hist[3][MAX_EDGES + 1] = {{0}}, have[3] = {0}, same[3] = {0}, both[3] = {0};
  json_object *near = json_object_new_array();
  size_t n = json_object_array_length(items);
  for (size_t i = 0; i < n; i++) {
    json_object *it = json_object_array_get_idx(items, i);
    double t[3] = {published_time(it), exec_time(it, "inproc_cpu_s"), exec_time(it, "cpu_time_s")};
    for (int s = 0; s < 3; s++) {
      if (isnan(t[s])) continue;
      hist[s][bin_of(t[s], edges, ne)]++;
      have[s]++;
      if (s > 0 && !isnan(t[0])) {
        both[s]++;
        same[s] += bin_of(t[s], edges, ne) == bin_of(t[0], edges, ne);
      }
    }
    double ours = !isnan(t[1]) ? t[1] : t[2];
    if (!isnan(ours) && near_edge(ours, edges, ne)) json_object_array_add(near, json_object_new_int((int)i));
  }
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
      if (s > 0 && both[s]) {
        json_object_object_add(so, "with_published", json_object_new_int(both[s]));
        json_object_object_add(so, "same_bin_as_published", json_object_new_int(same[s]));
      }
      json_object_object_add(o, sources[s], so);
    }
    json_object_object_add(o, "near_an_edge", json_object_get(near));
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
    for (int s = 1; s < 3; s++)
      if (both[s]) printf("%s: %d of %d items in the same bin as SURGE's own time\n", sources[s], same[s], both[s]);
    size_t nn = json_object_array_length(near);
    if (nn) {
      printf("within 30%% of a bin edge (may land on either side): %zu items:", nn);
      for (size_t i = 0; i < nn; i++) printf("%s%d", i ? "," : " ", json_object_get_int(json_object_array_get_idx(near, i)));
      printf("\n");
    }
  }
  json_object_put(near);
  json_object_put(items);
  return 0;
}
