/* A log-log scatter chart as inline SVG (prefix sbg_): measured against
 * published time per item, the diagonal where they agree, bin edges drawn
 * on both axes. No script, no external resource. */
#ifndef SURGEBOX_SVG_CHART_H
#define SURGEBOX_SVG_CHART_H

#include <stddef.h>
#include <stdio.h>

typedef struct {
  double x, y;   /* seconds; <= the floor is drawn on the floor, hollow */
  int series;    /* index into the chart's series */
  char label[96];/* the point's tooltip (escaped when written) */
} sbg_point;

typedef struct {
  const char *title, *xlabel, *ylabel;
  const double *edges; /* drawn as dashed lines on both axes */
  int ne;
  const sbg_point *pts;
  size_t n;
  const char *const *series_names;  /* legend */
  const char *const *series_colors; /* CSS colours, ours */
  int n_series;
  double floor;  /* the smallest value drawn (SURGE printed 4 decimals: 0.0000 happens) */
} sbg_chart;

void sbg_loglog(FILE *f, const sbg_chart *c);

#endif
