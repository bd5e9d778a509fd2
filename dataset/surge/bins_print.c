/* surgebox bins' output: the histograms, the calibration, the agreement
 * (calibrated, and raw beside it) and every timed item, as text or JSON. */
#include "bins_items.h"

#include <math.h>
#include <string.h>

static const char *const src_names[SBS_N_SRC + 1] = {"published", "inproc_cpu_s", "cpu_time_s", "calibrated"};
static const char *const agreement_names[] = {"same", "flagged", "different"};

static size_t count(const sbs_bins *b, bool calibrated, sbs_bin_agreement a) {
  size_t n = 0;
  for (size_t i = 0; i < b->n; i++) n += (calibrated ? b->items[i].calibrated : b->items[i].raw) == a;
  return n;
}

static json_object *indices(const sbs_bins *b, bool calibrated, sbs_bin_agreement a) {
  json_object *arr = json_object_new_array();
  for (size_t i = 0; i < b->n; i++)
    if ((calibrated ? b->items[i].calibrated : b->items[i].raw) == a)
      json_object_array_add(arr, json_object_new_int(b->items[i].index));
  return arr;
}

static json_object *agreement_json(const sbs_bins *b, bool calibrated) {
  json_object *ag = json_object_new_object();
  json_object_object_add(ag, "items", json_object_new_int((int)b->n));
  json_object_object_add(ag, "same_bin", indices(b, calibrated, SBS_BIN_SAME));
  json_object_object_add(ag, "flagged", indices(b, calibrated, SBS_BIN_FLAGGED));
  json_object_object_add(ag, "different", indices(b, calibrated, SBS_BIN_DIFFERENT));
  return ag;
}

static json_object *number_or_null(double v) { return isnan(v) ? NULL : json_object_new_double(v); }

void sbs_bins_print_json(const sbs_bins *b, FILE *f) {
  json_object *o = json_object_new_object(), *e = json_object_new_array();
  for (int i = 0; i < b->ne; i++) json_object_array_add(e, json_object_new_double(b->edges[i]));
  json_object_object_add(o, "edges", e);
  json_object_object_add(o, "time_scale", json_object_new_double(b->scale));
  json_object_object_add(o, "not_regenerated", json_object_new_int64((int64_t)b->excluded));
  json_object *set = json_object_new_object(); /* the one item set every column counts */
  json_object_object_add(set, "which", json_object_new_string(b->set_both ? "timed both by SURGE and here" : "timed here"));
  json_object_object_add(set, "items", json_object_new_int64((int64_t)b->set_n));
  json_object_object_add(set, "timed_by_surge_only", json_object_new_int64((int64_t)b->surge_only));
  json_object_object_add(set, "timed_here_only", json_object_new_int64((int64_t)b->ours_only));
  json_object_object_add(o, "item_set", set);
  for (int s = 0; s <= SBS_N_SRC; s++) {
    if (!b->have[s]) continue;
    json_object *so = json_object_new_object(), *h = json_object_new_array();
    for (int i = 0; i <= b->ne; i++) json_object_array_add(h, json_object_new_int(b->hist[s][i]));
    json_object_object_add(so, "items", json_object_new_int(b->have[s]));
    json_object_object_add(so, "histogram", h);
    json_object_object_add(o, src_names[s], so);
  }
  json_object *c = json_object_new_object();
  json_object_object_add(c, "factor", number_or_null(b->cal.factor));
  json_object *spread = json_object_new_array();
  json_object_array_add(spread, number_or_null(b->cal.lo));
  json_object_array_add(spread, number_or_null(b->cal.hi));
  json_object_object_add(c, "spread", spread);
  json_object *runs = json_object_new_array(); /* the fastest and slowest single run: the flags' band */
  json_object_array_add(runs, number_or_null(b->cal.run_lo));
  json_object_array_add(runs, number_or_null(b->cal.run_hi));
  json_object_object_add(c, "runs", runs);
  json_object_object_add(c, "items", json_object_new_int((int)b->cal.used));
  json_object_object_add(c, "min_published_s", json_object_new_double(SBS_CALIBRATION_MIN_PUBLISHED));
  json_object_object_add(c, "applied", json_object_new_boolean(b->calibrated));
  json_object_object_add(o, "calibration", c);
  if (b->n) {
    json_object *ag = agreement_json(b, true);
    json_object_object_add(ag, "calibrated", json_object_new_boolean(b->calibrated));
    json_object_object_add(ag, "median_ratio_to_published", number_or_null(b->raw_ratio));
    json_object_object_add(o, "agreement", ag);
    json_object_object_add(o, "raw_agreement", agreement_json(b, false));
  }
  json_object *arr = json_object_new_array();
  for (size_t i = 0; i < b->n; i++) {
    const sbs_bin_item *x = &b->items[i];
    json_object *it = json_object_new_object();
    json_object_object_add(it, "index", json_object_new_int(x->index));
    json_object_object_add(it, "published_s", json_object_new_double(x->published));
    json_object_object_add(it, "published_bin", json_object_new_int(x->published_bin));
    json_object_object_add(it, "raw_s", json_object_new_double(x->ours));
    json_object_object_add(it, "raw_bin", json_object_new_int(x->raw_bin));
    json_object_object_add(it, "raw_agreement", json_object_new_string(agreement_names[x->raw]));
    json_object_object_add(it, "calibrated_s", number_or_null(x->cal));
    json_object_object_add(it, "calibrated_bin", b->calibrated ? json_object_new_int(x->cal_bin) : NULL);
    json_object_object_add(it, "agreement", json_object_new_string(agreement_names[x->calibrated]));
    json_object_array_add(arr, it);
  }
  json_object_object_add(o, "items", arr);
  fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
  json_object_put(o);
}

static void print_list(FILE *f, const char *label, const sbs_bins *b, bool calibrated, sbs_bin_agreement a) {
  size_t n = count(b, calibrated, a), k = 0;
  fprintf(f, "  %s %zu%s", label, n, n ? ":" : "");
  for (size_t i = 0; i < b->n; i++)
    if ((calibrated ? b->items[i].calibrated : b->items[i].raw) == a) fprintf(f, "%s%d", k++ ? "," : " ", b->items[i].index);
  fprintf(f, "\n");
}

const char *sbs_bin_agreement_name(sbs_bin_agreement a) { return agreement_names[a]; }

void sbs_bin_label(const sbs_bins *b, int i, char *out, size_t len) {
  if (i == 0) snprintf(out, len, "< %g", b->edges[0]);
  else if (i == b->ne) snprintf(out, len, ">= %g", b->edges[b->ne - 1]);
  else snprintf(out, len, "[%g, %g)", b->edges[i - 1], b->edges[i]);
}

/* The histogram drawn beside the counts: per bin one bar per time source,
 * BAR_WIDTH characters for the fullest bin, each source its own character. */
enum { BAR_WIDTH = 12 };
static const char bar_chars[SBS_N_SRC + 1] = {'#', '+', '.', '='};

static void print_histogram(const sbs_bins *b, FILE *f) {
  int most = 1;
  for (int s = 0; s <= SBS_N_SRC; s++)
    for (int i = 0; b->have[s] && i <= b->ne; i++)
      if (b->hist[s][i] > most) most = b->hist[s][i];
  fprintf(f, "%-16s", "bin (s)");
  for (int s = 0; s <= SBS_N_SRC; s++)
    if (b->have[s]) fprintf(f, " %14s", src_names[s]);
  fprintf(f, "  histogram (");
  for (int s = 0, k = 0; s <= SBS_N_SRC; s++)
    if (b->have[s]) fprintf(f, "%s%c %s", k++ ? ", " : "", bar_chars[s], src_names[s]);
  fprintf(f, "; %d = %d items)\n", BAR_WIDTH, most);
  for (int i = 0; i <= b->ne; i++) {
    char label[48];
    sbs_bin_label(b, i, label, sizeof label);
    fprintf(f, "%-16s", label);
    for (int s = 0; s <= SBS_N_SRC; s++)
      if (b->have[s]) fprintf(f, " %14d", b->hist[s][i]);
    fprintf(f, " ");
    for (int s = 0; s <= SBS_N_SRC; s++) {
      if (!b->have[s]) continue;
      int w = (b->hist[s][i] * BAR_WIDTH + most - 1) / most; /* a bin with an item shows at least one */
      fprintf(f, " |");
      for (int c = 0; c < BAR_WIDTH; c++) fputc(c < w ? bar_chars[s] : ' ', f);
    }
    fprintf(f, "\n");
  }
}

void sbs_bins_print_text(const sbs_bins *b, FILE *f) {
  fprintf(f, "every column counts the same %zu item(s): those timed %s\n", b->set_n,
          b->set_both ? "both by SURGE and here" : "here (SURGE timed none)");
  print_histogram(b, f);
  if (b->excluded) /* unfinished runs (timeout, memory, host kill) have no time of ours: counted here */
    fprintf(f, "%zu item(s) not regenerated here, no time of ours (%s): in no column\n", b->excluded, b->excluded_why);
  if (b->ours_only) fprintf(f, "%zu item(s) timed here but not by SURGE: in no column\n", b->ours_only);
  for (int s = SBS_SRC_INPROC; s < SBS_N_SRC; s++)
    if (b->left_out[s])
      fprintf(f, "column %s left out: %d of the %zu item(s) have no such time\n", src_names[s], b->left_out[s], b->set_n);
  if (b->scale != 1) fprintf(f, "times measured here multiplied by %g (--time-scale)\n", b->scale);
  if (!b->n) return;
  if (b->calibrated)
    fprintf(f, "calibration: our time / SURGE's over the %zu items SURGE timed >= %g s: median %.3f (quartiles %.3f-%.3f; single runs %.3f-%.3f)\n",
            b->cal.used, SBS_CALIBRATION_MIN_PUBLISHED, b->cal.factor, b->cal.lo, b->cal.hi, b->cal.run_lo,
            b->cal.run_hi);
  else
    fprintf(f, "calibration: not applied: %zu item(s) SURGE timed >= %g s, %d needed; agreement below is on raw times\n",
            b->cal.used, SBS_CALIBRATION_MIN_PUBLISHED, SBS_CALIBRATION_MIN_ITEMS);
  fprintf(f, "agreement with SURGE's bins over %zu timed items%s: %zu same bin, %zu flagged, %zu different\n", b->n,
          b->calibrated ? ", calibrated" : "", count(b, true, SBS_BIN_SAME), count(b, true, SBS_BIN_FLAGGED),
          count(b, true, SBS_BIN_DIFFERENT));
  print_list(f, "flagged (an edge within the spread of the repeats and the calibration's runs):", b, true, SBS_BIN_FLAGGED);
  print_list(f, "different:", b, true, SBS_BIN_DIFFERENT);
  if (b->calibrated)
    fprintf(f, "raw (uncalibrated) agreement: %zu same bin, %zu flagged, %zu different\n", count(b, false, SBS_BIN_SAME),
            count(b, false, SBS_BIN_FLAGGED), count(b, false, SBS_BIN_DIFFERENT));
  /* every compared item in every column; "-" only where no calibration was possible (said above) */
  fprintf(f, "%6s %11s %4s %11s %4s %-9s %11s %4s  %s\n", "item", "SURGE (s)", "bin", "raw (s)", "bin", "raw agr.",
          "calibrated", "bin", "agreement");
  for (size_t i = 0; i < b->n; i++) {
    const sbs_bin_item *x = &b->items[i];
    char cal[16] = "-", cbin[8] = "-";
    if (b->calibrated) {
      snprintf(cal, sizeof cal, "%.4f", x->cal);
      snprintf(cbin, sizeof cbin, "%d", x->cal_bin);
    }
    fprintf(f, "%6d %11.4f %4d %11.4f %4d %-9s %11s %4s  %s\n", x->index, x->published, x->published_bin, x->ours,
            x->raw_bin, agreement_names[x->raw], cal, cbin, agreement_names[x->calibrated]);
  }
  if (b->surge_only)
    fprintf(f, "%zu more item(s) SURGE timed were not timed here (not run, or not regenerated): not compared\n",
            b->surge_only);
}
