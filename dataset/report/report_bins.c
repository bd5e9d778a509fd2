/* surgebox report: the CPU-time bins of every subset whose items SURGE
 * timed (TC, SC), computed by bins_items.c exactly as `surgebox bins`
 * does: a chart of measured (raw and calibrated) against published time
 * per item, the histogram, and every item's times, bins and agreement. */
#include "bins_items.h"
#include "html.h"
#include "report.h"
#include "svg_chart.h"

#include <math.h>
#include <stdlib.h>

static const double default_edges[] = {0.001, 0.01, 0.1, 1};
static const char *const series_names[] = {"raw (here)", "calibrated"};
static const char *const series_colors[] = {"#d62728", "#1f77b4"};

static void chart(const sbs_bins *b, const char *sn, FILE *f) {
  sbg_point *pts = calloc(2 * b->n + 1, sizeof *pts);
  if (!pts) return;
  size_t n = 0;
  for (size_t i = 0; i < b->n; i++) {
    const sbs_bin_item *x = &b->items[i];
    pts[n] = (sbg_point){.x = x->published, .y = x->ours, .series = 0};
    snprintf(pts[n++].label, sizeof pts->label, "%s %d: SURGE %.4f s, raw %.4f s (%s)", sn, x->index, x->published,
             x->ours, sbs_bin_agreement_name(x->raw));
    if (!b->calibrated) continue;
    pts[n] = (sbg_point){.x = x->published, .y = x->cal, .series = 1};
    snprintf(pts[n++].label, sizeof pts->label, "%s %d: SURGE %.4f s, calibrated %.4f s (%s)", sn, x->index,
             x->published, x->cal, sbs_bin_agreement_name(x->calibrated));
  }
  char title[128];
  snprintf(title, sizeof title, "%s: CPU time per item, measured against published (log scale)", sn);
  sbg_chart c = {.title = title, .xlabel = "published by SURGE (s)", .ylabel = "measured here (s)",
                 .edges = b->edges, .ne = b->ne, .pts = pts, .n = n, .series_names = series_names,
                 .series_colors = series_colors, .n_series = b->calibrated ? 2 : 1, .floor = 1e-5};
  sbg_loglog(f, &c);
  free(pts);
}

static void histogram(const sbs_bins *b, FILE *f) {
  static const char *const src[] = {"published", "inproc_cpu_s (raw)", "cpu_time_s (whole process tree)", "calibrated"};
  fputs("<table><tr><th class=\"l\">bin (s)</th>", f);
  for (int s = 0; s <= SBS_N_SRC; s++)
    if (b->have[s]) fprintf(f, "<th>%s</th>", src[s]);
  fputs("</tr>\n", f);
  int most = 1;
  for (int s = 0; s <= SBS_N_SRC; s++)
    for (int i = 0; i <= b->ne; i++)
      if (b->hist[s][i] > most) most = b->hist[s][i];
  for (int i = 0; i <= b->ne; i++) {
    char label[48];
    sbs_bin_label(b, i, label, sizeof label);
    fprintf(f, "<tr><td class=\"l\">%s</td>", label);
    for (int s = 0; s <= SBS_N_SRC; s++) {
      if (!b->have[s]) continue;
      int w = (b->hist[s][i] * 20 + most - 1) / most;
      fprintf(f, "<td>%d <span class=\"bar\">%.*s</span></td>", b->hist[s][i], w, "####################");
    }
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
}

static void items_table(const sbs_bins *b, const char *sn, FILE *f) {
  fputs("<table><tr><th>item</th><th>SURGE (s)</th><th>bin</th><th>raw (s)</th><th>bin</th><th>raw agreement</th>"
        "<th>calibrated (s)</th><th>bin</th><th>agreement</th></tr>\n",
        f);
  for (size_t i = 0; i < b->n; i++) {
    const sbs_bin_item *x = &b->items[i];
    fprintf(f, "<tr id=\"bins-%s-%d\"><td>%d</td><td>%.4f</td><td>%d</td><td>%.4f</td><td>%d</td><td>%s</td>", sn, x->index,
            x->index, x->published, x->published_bin, x->ours, x->raw_bin, sbs_bin_agreement_name(x->raw));
    if (b->calibrated)
      fprintf(f, "<td>%.4f</td><td>%d</td><td>%s</td></tr>\n", x->cal, x->cal_bin, sbs_bin_agreement_name(x->calibrated));
    else
      fprintf(f, "<td>-</td><td>-</td><td>%s</td></tr>\n", sbs_bin_agreement_name(x->calibrated));
  }
  fputs("</table>\n", f);
}

static size_t count(const sbs_bins *b, bool cal, sbs_bin_agreement a) {
  size_t n = 0;
  for (size_t i = 0; i < b->n; i++) n += (cal ? b->items[i].calibrated : b->items[i].raw) == a;
  return n;
}

void sbrp_write_bins(const sbrp_report *r, FILE *f) {
  fputs("<h2 id=\"bins\">CPU-time bins</h2>\n<p class=\"note\">SURGE's Figure 4: items per CPU-time bin, as "
        "<code>surgebox bins --data OUT/&lt;subset&gt;.json</code> computes them. Raw: the span SURGE timed, measured "
        "here (the median of the repeats). Calibrated: divided by this machine's speed against SURGE's (the median "
        "ratio of our time to SURGE's over the items SURGE timed at least 0.1 s, each of them calibrated by the "
        "others). Agreement: the same bin as SURGE's, flagged (a bin edge lies within the spread of the repeats and "
        "of the calibration's single runs, so either side is a fair outcome) or different.</p>\n",
        f);
  int shown = 0;
  for (size_t k = 0; k < r->n; k++) {
    sbs_bins b = {.scale = 1, .ne = (int)(sizeof default_edges / sizeof *default_edges)};
    for (int e = 0; e < b.ne; e++) b.edges[e] = default_edges[e];
    if (sbs_bins_compute(&b, r->items[k]) < 0 || !b.n) {
      sbs_bins_free(&b);
      continue;
    }
    const char *sn = sbs_subset_name(r->subsets[k]);
    shown++;
    fprintf(f, "<h3>%s: %zu items timed by SURGE and here (every column below counts these)</h3>\n", sn, b.n);
    if (b.calibrated)
      fprintf(f, "<p>Calibration: our time / SURGE's over the %zu items SURGE timed &gt;= %g s: median %.3f (quartiles "
                 "%.3f-%.3f; single runs %.3f-%.3f).</p>\n", b.cal.used, SBS_CALIBRATION_MIN_PUBLISHED, b.cal.factor, b.cal.lo,
              b.cal.hi, b.cal.run_lo, b.cal.run_hi);
    else
      fprintf(f, "<p class=\"warn\">Calibration not applied: %zu item(s) SURGE timed &gt;= %g s, %d needed; agreement is on "
                 "raw times.</p>\n", b.cal.used, SBS_CALIBRATION_MIN_PUBLISHED, SBS_CALIBRATION_MIN_ITEMS);
    fprintf(f, "<p>Agreement with SURGE's bins%s: <b>%zu same bin, %zu flagged, %zu different</b>; raw: %zu same, %zu "
               "flagged, %zu different.</p>\n",
            b.calibrated ? " (calibrated)" : "", count(&b, true, SBS_BIN_SAME), count(&b, true, SBS_BIN_FLAGGED),
            count(&b, true, SBS_BIN_DIFFERENT), count(&b, false, SBS_BIN_SAME), count(&b, false, SBS_BIN_FLAGGED),
            count(&b, false, SBS_BIN_DIFFERENT));
    chart(&b, sn, f);
    histogram(&b, f);
    items_table(&b, sn, f);
    sbs_bins_free(&b);
  }
  if (!shown) fputs("<p>No item here was timed both by SURGE and by this run (TC and SC carry SURGE's times).</p>\n", f);
}
