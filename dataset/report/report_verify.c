/* surgebox report: verify's scores, from the files given with --verify and
 * OUT/verify*.json: a `verify --benchmark surge --json` document (scores per
 * model and group, the --by sections, what was excluded) or a CRUXEval
 * scored file (`verify --benchmark cruxeval --out FILE`: pass@1, pass@5). */
#include "html.h"
#include "report.h"

/* The files are read as they are: a missing or mistyped field is empty, never a crash. */
static size_t alen(json_object *a) { return json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0; }
static bool is_obj(json_object *o) { return json_object_is_type(o, json_type_object); }

static void num_or_dash(FILE *f, json_object *v) {
  if (!v) fputs("<td>-</td>", f);
  else fprintf(f, "<td>%.1f</td>", json_object_get_double(v));
}

/* one table: models x groups (scores, counts under each) */
static void scores_table(FILE *f, json_object *groups, json_object *models, bool with_avg) {
  fputs("<table><tr><th class=\"l\">model</th>", f);
  for (size_t g = 0; g < alen(groups); g++) {
    fputs("<th>", f);
    sbh_text(f, json_object_get_string(json_object_array_get_idx(groups, g)));
    fputs("</th>", f);
  }
  if (with_avg) fputs("<th>Avg.</th><th>scored</th>", f);
  fputs("</tr>\n", f);
  for (size_t m = 0; m < alen(models); m++) {
    json_object *mo = json_object_array_get_idx(models, m), *sc = json_object_object_get(mo, "scores"),
                *cn = json_object_object_get(mo, "counts");
    fputs("<tr><td class=\"l\">", f);
    sbh_text(f, json_object_get_string(json_object_object_get(mo, "model")));
    fputs("</td>", f);
    for (size_t g = 0; g < alen(groups); g++) {
      const char *k = json_object_get_string(json_object_array_get_idx(groups, g));
      json_object *v = k ? json_object_object_get(sc, k) : NULL;
      if (!v) fputs("<td>-</td>", f);
      else fprintf(f, "<td>%.1f <span class=\"note\">(%d)</span></td>", json_object_get_double(v),
                   json_object_get_int(json_object_object_get(cn, k)));
    }
    if (with_avg) {
      num_or_dash(f, json_object_object_get(mo, "avg"));
      fprintf(f, "<td>%d</td>", json_object_get_int(json_object_object_get(mo, "scored")));
    }
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
}

static void surge(FILE *f, json_object *doc) {
  scores_table(f, json_object_object_get(doc, "columns"), json_object_object_get(doc, "models"), true);
  json_object *by = json_object_object_get(doc, "by");
  for (size_t s = 0; s < alen(by); s++) {
    json_object *sec = json_object_array_get_idx(by, s);
    fputs("<h4>", f);
    sbh_text(f, json_object_get_string(json_object_object_get(sec, "title")));
    fputs("</h4>\n", f);
    scores_table(f, json_object_object_get(sec, "groups"), json_object_object_get(sec, "models"), false);
  }
  json_object *ex = json_object_object_get(doc, "excluded");
  if (is_obj(ex) && json_object_object_length(ex)) {
    fprintf(f, "<p>Scored items: %d. Excluded (no reference regenerated here, not scored):", 
            json_object_get_int(json_object_object_get(doc, "scored_items")));
    const char *sep = " ";
    json_object_object_foreach(ex, why, n) {
      fputs(sep, f);
      sbh_text(f, why);
      fputs(" ", f);
      sbh_text(f, json_object_get_string(n));
      sep = ", ";
    }
    fputs(".</p>\n", f);
  }
}

static void cruxeval(FILE *f, json_object *doc) {
  json_object *scored = json_object_object_get(doc, "raw_scored_generations");
  size_t samples = 0, programs = 0, passed = 0;
  if (!is_obj(scored)) scored = json_object_new_object(); /* none: counted as none */
  else json_object_get(scored);
  json_object_object_foreach(scored, id, list) {
    (void)id;
    samples++;
    for (size_t i = 0; i < alen(list); i++) {
      programs++;
      passed += json_object_get_boolean(json_object_array_get_idx(list, i));
    }
  }
  json_object_put(scored);
  fputs("<table><tr><th>pass@1</th><th>pass@5</th><th>samples</th><th>generations run</th><th>passed</th></tr><tr>", f);
  num_or_dash(f, json_object_object_get(doc, "pass_at_1"));
  num_or_dash(f, json_object_object_get(doc, "pass_at_5"));
  fprintf(f, "<td>%zu</td><td>%zu</td><td>%zu</td></tr></table>\n", samples, programs, passed);
  json_object *note = json_object_object_get(doc, "pass_at_k_note");
  if (note && json_object_is_type(note, json_type_string)) { /* verify's own words beside upstream's figure */
    fputs("<p class=\"note\">", f);
    sbh_text(f, json_object_get_string(note));
    fputs("</p>\n", f);
  }
}

void sbrp_write_verify(const sbrp_report *r, FILE *f) {
  fputs("<h2 id=\"verify\">Verify scores</h2>\n", f);
  if (!r->n_verify) {
    fputs("<p class=\"note\">None given: save <code>surgebox verify --benchmark surge --json</code> as OUT/verify*.json "
          "or pass it (or a CRUXEval scored file) with --verify FILE.</p>\n",
          f);
    return;
  }
  for (size_t i = 0; i < r->n_verify; i++) {
    json_object *doc = r->verify[i].doc;
    bool is_surge = json_object_object_get_ex(doc, "models", NULL);
    fprintf(f, "<h3>%s: ", is_surge ? "SURGE" : "CRUXEval");
    sbh_text(f, r->verify[i].path);
    fputs("</h3>\n", f);
    if (is_surge) surge(f, doc);
    else cruxeval(f, doc);
  }
}
