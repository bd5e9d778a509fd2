/* sbg_loglog: decades as ticks, a dashed line per bin edge on each axis, a
 * point per item with its label escaped, values at or below the floor drawn
 * hollow on it. */
#include "check.h"
#include "svg_chart.h"

#include <stdlib.h>
#include <string.h>

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

int main(void) {
  static const double edges[] = {0.001, 0.01, 0.1, 1};
  static const char *const names[] = {"raw", "calibrated"}, *const colors[] = {"#d62728", "#1f77b4"};
  sbg_point pts[3] = {{.x = 0.5, .y = 0.25, .series = 0}, {.x = 0, .y = 0.00002, .series = 1}, {.x = 2, .y = 3, .series = 0}};
  strcpy(pts[0].label, "<b>item</b>");
  sbg_chart c = {.title = "t & t", .xlabel = "x", .ylabel = "y", .edges = edges, .ne = 4, .pts = pts, .n = 3,
                 .series_names = names, .series_colors = colors, .n_series = 2, .floor = 1e-5};
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  sbg_loglog(f, &c);
  fclose(f);
  CHECK(strncmp(out, "<svg ", 5) == 0 && strstr(out, "</svg>\n"));
  CHECK(count(out, "class=\"edge\" x1") == 2 * 4 + 1);   /* each edge on both axes, and the legend's */
  CHECK(count(out, "<circle ") == 3 + 2 + 1);            /* points, legend per series, the floor's legend */
  CHECK(count(out, "fill-opacity=\"0\"") == 1);          /* SURGE's 0.0000: hollow on the floor */
  CHECK(strstr(out, "&lt;b&gt;item&lt;/b&gt;") != NULL && strstr(out, "<b>") == NULL);
  CHECK(strstr(out, "t &amp; t") != NULL);
  /* the axes run over whole decades from the floor (1e-05) to 10 (the point at 3 s) */
  CHECK(strstr(out, ">1e-05</text>") != NULL && strstr(out, ">10</text>") != NULL && strstr(out, ">100</text>") == NULL);
  free(out);
  return check_exit();
}
