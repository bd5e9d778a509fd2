/* batch lines with test cases (issue 38): a request's "cases" run as the
 * daemon runs them (PROTOCOL.md, "Test cases"); its answer line gains, at
 * its top level, "verdicts" (every case's verdict, in order: the steps'
 * cases, then cases_not_run's one verdict for each of its cases) and
 * "case_counts" (the verdicts counted), so a table reads them without
 * walking the steps; --fields can keep just those. The run's totals go in
 * batch's closing summary. */
#include "batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void count(sbr_batch_cases *t, json_object *counts, const char *verdict, int64_t n) {
  json_object *c = NULL;
  int64_t had = json_object_object_get_ex(counts, verdict, &c) ? json_object_get_int64(c) : 0;
  json_object_object_add(counts, verdict, json_object_new_int64(had + n));
  size_t i = 0;
  while (i < t->n && strcmp(t->names[i], verdict) != 0) i++;
  if (i == t->n) {
    t->names = realloc(t->names, (t->n + 1) * sizeof *t->names);
    t->counts = realloc(t->counts, (t->n + 1) * sizeof *t->counts);
    t->names[t->n] = strdup(verdict);
    t->counts[t->n++] = 0;
  }
  t->counts[i] += (size_t)n;
  t->cases += (size_t)n;
}

static const char *verdict_of(json_object *o) {
  json_object *v = NULL;
  return json_object_object_get_ex(o, "verdict", &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                                  : "?";
}

void sbr_batch_cases_note(sbr_batch_cases *t, json_object *answer) {
  json_object *steps = NULL, *nr = NULL, *verdicts = json_object_new_array(), *counts = json_object_new_object();
  bool any = false;
  if (json_object_object_get_ex(answer, "steps", &steps) && json_object_is_type(steps, json_type_array))
    for (size_t i = 0; i < json_object_array_length(steps); i++) {
      json_object *cases = NULL;
      if (!json_object_object_get_ex(json_object_array_get_idx(steps, i), "cases", &cases) ||
          !json_object_is_type(cases, json_type_array))
        continue;
      any = true;
      for (size_t k = 0; k < json_object_array_length(cases); k++) {
        const char *v = verdict_of(json_object_array_get_idx(cases, k));
        json_object_array_add(verdicts, json_object_new_string(v));
        count(t, counts, v, 1);
      }
    }
  if (json_object_object_get_ex(answer, "cases_not_run", &nr) && json_object_is_type(nr, json_type_array))
    for (size_t i = 0; i < json_object_array_length(nr); i++) {
      json_object *s = json_object_array_get_idx(nr, i), *n = NULL;
      int64_t cases = json_object_object_get_ex(s, "n_cases", &n) ? json_object_get_int64(n) : 0;
      const char *v = verdict_of(s);
      any = true;
      for (int64_t k = 0; k < cases; k++) json_object_array_add(verdicts, json_object_new_string(v));
      if (cases > 0) count(t, counts, v, cases);
    }
  if (!any) {
    json_object_put(verdicts);
    json_object_put(counts);
    return;
  }
  t->items++;
  json_object_object_add(answer, "verdicts", verdicts);
  json_object_object_add(answer, "case_counts", counts);
}

void sbr_batch_cases_say(const sbr_batch_cases *t, FILE *f) {
  if (!t->items) return;
  fprintf(f, "batch: cases: %zu in %zu items", t->cases, t->items);
  for (size_t i = 0; i < t->n; i++) fprintf(f, "%s %s %zu", i ? "," : ":", t->names[i], t->counts[i]);
  fputc('\n', f);
}

void sbr_batch_cases_free(sbr_batch_cases *t) {
  for (size_t i = 0; i < t->n; i++) free(t->names[i]);
  free(t->names);
  free(t->counts);
}
