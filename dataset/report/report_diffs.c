/* surgebox report: each mismatched item's regenerated reference beside the
 * published one, the first differing line highlighted. Bounded: the first
 * --max-items items that ran and missed, --max-bytes per side from a few
 * lines before the first difference; what is cut is said. */
#include "html.h"
#include "report.h"

#include <string.h>

enum { CONTEXT_LINES = 3 };

static json_object *exec_of(const sbrp_report *r, size_t k, size_t i) {
  return json_object_object_get(json_object_array_get_idx(r->items[k], i), "exec");
}

/* ran, and a class: there is a regenerated text that differs */
static bool eligible(const sbrp_report *r, size_t k, size_t i) {
  json_object *e = exec_of(r, k, i), *cls = json_object_object_get(e, "class");
  return e && cls && json_object_get_boolean(json_object_object_get(e, "regenerated"));
}

bool sbrp_diff_shown(const sbrp_report *r, size_t k, size_t i) {
  if (!eligible(r, k, i)) return false;
  long rank = 0;
  for (size_t a = 0; a <= k; a++)
    for (size_t b = 0; b < (a == k ? i : json_object_array_length(r->items[a])); b++) rank += eligible(r, a, b);
  return rank < r->o->max_items;
}

/* the 0-based line where a and b first differ (they differ somewhere) */
static size_t first_diff_line(const char *a, size_t na, const char *b, size_t nb) {
  size_t line = 0, i = 0;
  while (i < na && i < nb && a[i] == b[i]) {
    if (a[i] == '\n') line++;
    i++;
  }
  return line;
}

static void side(FILE *f, const char *title, const char *s, size_t n, size_t diff_line, long max_bytes) {
  fputs("<div><b>", f);
  sbh_text(f, title);
  fprintf(f, "</b> <span class=\"note\">(%zu bytes)</span>\n", n);
  if (!s) {
    fputs("<pre class=\"cut\">absent</pre></div>\n", f);
    return;
  }
  size_t start = diff_line > CONTEXT_LINES ? diff_line - CONTEXT_LINES : 0, line = 0, i = 0;
  while (line < start && i < n) /* skip to the window */
    if (s[i++] == '\n') line++;
  if (start) fprintf(f, "<div class=\"cut\">lines 1-%zu (%zu bytes) not shown</div>\n", start, i);
  fputs("<pre>", f);
  size_t shown = 0;
  while (i < n && (long)shown < max_bytes) {
    const char *nl = memchr(s + i, '\n', n - i);
    size_t len = nl ? (size_t)(nl - (s + i)) + 1 : n - i;
    if ((long)(shown + len) > max_bytes) len = (size_t)max_bytes - shown;
    fprintf(f, "<span class=\"ln\">%5zu </span>", line + 1);
    if (line == diff_line) fputs("<span class=\"first\">", f);
    sbh_text_n(f, s + i, len && s[i + len - 1] == '\n' ? len - 1 : len);
    if (line == diff_line) fputs("</span>", f);
    fputc('\n', f);
    i += len;
    shown += len;
    line++;
  }
  fputs("</pre>", f);
  if (i < n) {
    size_t more_lines = 0;
    for (size_t j = i; j < n; j++) more_lines += s[j] == '\n';
    fprintf(f, "<div class=\"cut\">%zu more bytes (%zu more line breaks) not shown (--max-bytes %ld)</div>\n", n - i,
            more_lines, max_bytes);
  }
  fputs("</div>\n", f);
}

static void item(const sbrp_report *r, size_t k, size_t i, FILE *f) {
  const char *sn = sbs_subset_name(r->subsets[k]);
  json_object *it = json_object_array_get_idx(r->items[k], i), *e = json_object_object_get(it, "exec");
  json_object *gt = json_object_object_get(it, "gt"), *tc = json_object_object_get(e, "toolchain");
  size_t np = 0, nr = gt ? (size_t)json_object_get_string_len(gt) : 0;
  const char *pub = sbrp_published(r, k, i, &np), *reg = gt ? json_object_get_string(gt) : NULL;
  char id[96];
  sbh_id(id, sizeof id, sn, i);
  fprintf(f, "<div class=\"item\" id=\"%s\"><h3>%s %zu: ", id, sn, i);
  sbh_text(f, json_object_get_string(json_object_object_get(e, "class")));
  fputs("</h3>\n<p class=\"note\">group ", f);
  sbh_text(f, json_object_get_string(json_object_object_get(e, "group")));
  fputs(", status ", f);
  sbh_text(f, json_object_get_string(json_object_object_get(e, "status")));
  fputs(", matched ", f);
  sbh_text(f, json_object_get_string(json_object_object_get(e, "matched")));
  fprintf(f, ", Jaccard %.3f, %d repeat(s)%s, toolchain ", json_object_get_double(json_object_object_get(e, "jaccard")),
          json_object_get_int(json_object_object_get(e, "repeats")),
          json_object_get_boolean(json_object_object_get(e, "deterministic")) ? "" : " that differ (the first shown)");
  sbh_text(f, json_object_get_string(json_object_object_get(tc, "name")));
  fputs(" ", f);
  sbh_text(f, json_object_get_string(json_object_object_get(tc, "version")));
  json_object *err = json_object_object_get(e, "error");
  if (err) {
    fputs(", error: ", f);
    sbh_text(f, json_object_get_string(err));
  }
  size_t d = pub && reg ? first_diff_line(pub, np, reg, nr) : 0;
  fprintf(f, "; first difference on line %zu</p>\n<div class=\"diff\">\n", d + 1);
  side(f, "published (SURGE)", pub, np, d, r->o->max_bytes);
  side(f, "regenerated (here)", reg, nr, d, r->o->max_bytes);
  fputs("</div></div>\n", f);
}

void sbrp_write_diffs(const sbrp_report *r, FILE *f) {
  fputs("<h2 id=\"diffs\">Diffs</h2>\n<p class=\"note\">Each item that ran and did not match exactly: SURGE's "
        "published reference beside the one regenerated here, the first differing line highlighted. Bytes that are "
        "not UTF-8 and control characters are shown as <span class=\"bad\">\\xNN</span>.</p>\n",
        f);
  long shown = 0, total = 0;
  for (size_t k = 0; k < r->n; k++)
    for (size_t i = 0; i < json_object_array_length(r->items[k]); i++) {
      if (!eligible(r, k, i)) continue;
      total++;
      if (shown < r->o->max_items) {
        item(r, k, i, f);
        shown++;
      }
    }
  if (!total) fputs("<p>No item that ran differs from its published reference.</p>\n", f);
  else if (shown < total)
    fprintf(f, "<p class=\"cut\">%ld of %ld mismatched items shown; %ld not shown (--max-items %ld).</p>\n", shown, total,
            total - shown, r->o->max_items);
}
