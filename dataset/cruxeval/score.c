/* The CRUXEval scorer: result lists, pass@k, the scored file (SCORING.md). */
#include "cruxeval.h"
#include "passk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the unbiased estimator, shared with the other benchmarks (passk.h) */
double sbx_pass_at_k(size_t n, size_t c, size_t k) { return sbr_pass_at_k(n, c, k); }

bool sbx_pass_at_k_note(size_t below_k, size_t samples, char *buf, size_t n) {
  if (!below_k) return false;
  snprintf(buf, n,
           "pass@5 is not meaningful: %zu of %zu samples have fewer than 5 generations, which CRUXEval's formula "
           "counts as passing (1.0)",
           below_k, samples);
  return true;
}

json_object *sbx_sample_list(const int *verdicts, size_t n) {
  json_object *l = json_object_new_array();
  bool any = false;
  for (size_t j = 0; j < n; j++) {
    if (verdicts[j] < 0) continue; /* dropped: no entry */
    any |= verdicts[j] == 1;
    json_object_array_add(l, json_object_new_boolean(verdicts[j] == 1));
  }
  if (!any) { /* nothing passed: [false] * n, dropped ones counted */
    json_object_put(l);
    l = json_object_new_array();
    for (size_t j = 0; j < n; j++) json_object_array_add(l, json_object_new_boolean(false));
  }
  return l;
}

json_object *sbx_pyfloat(double v) {
  char s[64], e[40];
  int prec = 1;
  for (; prec < 17; prec++) { /* the fewest digits that read back as v */
    snprintf(e, sizeof e, "%.*e", prec - 1, v);
    if (strtod(e, NULL) == v) break;
  }
  snprintf(e, sizeof e, "%.*e", prec - 1, v);
  int exp10 = atoi(strchr(e, 'e') + 1);
  if (v != v || v - v != 0 || exp10 < -4 || exp10 >= 16) { /* repr's exponent form */
    snprintf(s, sizeof s, "%.*g", prec, v);
  } else {
    int decimals = prec - 1 - exp10;
    snprintf(s, sizeof s, "%.*f", decimals > 0 ? decimals : 0, v);
    if (!strchr(s, '.')) snprintf(s + strlen(s), sizeof s - strlen(s), ".0");
  }
  return json_object_new_double_s(v, s);
}

json_object *sbx_scored_file(json_object *gens, const sbx_data *d, json_object **lists) {
  json_object *out = json_object_new_object(), *scored = json_object_new_object();
  double p1 = 0, p5 = 0;
  size_t below_k = 0; /* samples with fewer than 5 results: upstream counts each 1.0 for pass@5 */
  for (size_t i = 0; i < d->n; i++) {
    size_t n = json_object_array_length(lists[i]), c = 0;
    below_k += n < 5;
    for (size_t j = 0; j < n; j++) c += json_object_get_boolean(json_object_array_get_idx(lists[i], j));
    p1 += sbx_pass_at_k(n, c, 1);
    p5 += sbx_pass_at_k(n, c, 5);
    json_object_object_add(scored, d->v[i].id, lists[i]);
  }
  json_object_object_add(out, "raw_generations", json_object_get(gens));
  json_object_object_add(out, "raw_scored_generations", scored);
  /* sum / count * 100, in upstream's order of operations */
  json_object_object_add(out, "pass_at_1", sbx_pyfloat(p1 / (double)d->n * 100));
  json_object_object_add(out, "pass_at_5", sbx_pyfloat(p5 / (double)d->n * 100));
  char note[SBX_PASS_AT_K_NOTE_MAX];
  if (sbx_pass_at_k_note(below_k, d->n, note, sizeof note))
    json_object_object_add(out, "pass_at_k_note", json_object_new_string(note));
  return out;
}
