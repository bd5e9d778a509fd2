/* The CPU-time chart: inline SVG, log scale on both axes. */
#include "svg_chart.h"
#include "html.h"

#include <math.h>

enum { W = 720, H = 520, ML = 70, MR = 170, MT = 36, MB = 56 };

typedef struct {
  double lo, hi; /* decades: log10 of the axis' ends */
} axis;

static double clampv(const sbg_chart *c, double v) { return !(v > c->floor) ? c->floor : v; }

static double px(axis a, double v) { return ML + (log10(v) - a.lo) / (a.hi - a.lo) * (W - ML - MR); }
static double py(axis a, double v) { return H - MB - (log10(v) - a.lo) / (a.hi - a.lo) * (H - MT - MB); }

void sbg_loglog(FILE *f, const sbg_chart *c) {
  double lo = c->floor, hi = c->floor * 10;
  for (size_t i = 0; i < c->n; i++) {
    double x = clampv(c, c->pts[i].x), y = clampv(c, c->pts[i].y);
    if (x > hi) hi = x;
    if (y > hi) hi = y;
  }
  for (int e = 0; e < c->ne; e++)
    if (c->edges[e] > hi) hi = c->edges[e];
  axis a = {floor(log10(lo)), ceil(log10(hi))};
  if (a.hi <= a.lo) a.hi = a.lo + 1;
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
          W, H, W, H);
  fputs("<title>", f);
  sbh_text(f, c->title);
  fputs("</title>\n", f);
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fff\" stroke=\"#999\"/>\n", ML, MT, W - ML - MR,
          H - MT - MB);
  /* decades: grid and labels */
  for (int d = (int)a.lo; d <= (int)a.hi; d++) {
    double v = pow(10, d), x = px(a, v), y = py(a, v);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>", x, MT, x, H - MB);
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>\n", ML, y, W - MR, y);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" class=\"tick\">%g</text>", x, H - MB + 16, v);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" class=\"tick\">%g</text>\n", ML - 6, y + 4, v);
  }
  /* the bin edges, on both axes */
  for (int e = 0; e < c->ne; e++) {
    double v = c->edges[e];
    if (v < pow(10, a.lo) || v > pow(10, a.hi)) continue;
    fprintf(f, "<line class=\"edge\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", px(a, v), MT, px(a, v), H - MB);
    fprintf(f, "<line class=\"edge\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", ML, py(a, v), W - MR, py(a, v));
  }
  /* where measured equals published */
  fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" stroke-width=\"1\"/>\n",
          px(a, pow(10, a.lo)), py(a, pow(10, a.lo)), px(a, pow(10, a.hi)), py(a, pow(10, a.hi)));
  for (size_t i = 0; i < c->n; i++) {
    const sbg_point *p = &c->pts[i];
    if (p->series < 0 || p->series >= c->n_series) continue;
    bool floored = !(p->x > c->floor) || !(p->y > c->floor);
    const char *col = c->series_colors[p->series];
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" stroke=\"%s\" fill-opacity=\"%s\"><title>", px(a, clampv(c, p->x)),
            py(a, clampv(c, p->y)), floored ? "none" : col, col, floored ? "0" : "0.7");
    sbh_text(f, p->label);
    fputs("</title></circle>\n", f);
  }
  fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (ML + W - MR) / 2, H - 14);
  sbh_text(f, c->xlabel);
  fprintf(f, "</text>\n<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">", (MT + H - MB) / 2);
  sbh_text(f, c->ylabel);
  fprintf(f, "</text>\n<text x=\"%d\" y=\"22\" class=\"charttitle\">", ML);
  sbh_text(f, c->title);
  fputs("</text>\n", f);
  for (int s = 0; s < c->n_series; s++) {
    int y = MT + 14 + 20 * s;
    fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"5\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">", W - MR + 16, y,
            c->series_colors[s], W - MR + 26, y + 4);
    sbh_text(f, c->series_names[s]);
    fputs("</text>\n", f);
  }
  int y = MT + 14 + 20 * c->n_series;
  fprintf(f, "<line class=\"edge\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/><text x=\"%d\" y=\"%d\">bin edge</text>\n",
          W - MR + 8, y, W - MR + 22, y, W - MR + 26, y + 4);
  fprintf(f, "<line stroke=\"#888\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/><text x=\"%d\" y=\"%d\">measured = published</text>\n",
          W - MR + 8, y + 20, W - MR + 22, y + 20, W - MR + 26, y + 24);
  fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"none\" stroke=\"#555\"/><text x=\"%d\" y=\"%d\">at or below %g s</text>\n",
          W - MR + 16, y + 40, W - MR + 26, y + 44, c->floor);
  fputs("</svg>\n", f);
}
