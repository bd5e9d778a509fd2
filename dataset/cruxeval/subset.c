/* verify --samples LIST / --limit N: a smoke test on a few samples. The
 * data is cut to the chosen samples (in the data's order) and the
 * generations file to their keys, before its check: it must have each
 * chosen sample, and may have the others (a full 800-sample file works).
 * pass@k is then over the chosen samples only (the run says so). */
#include "cruxeval.h"
#include "cleanup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sample index of one --samples item ("3" or "sample_3"), or -1 */
static long item_index(const sbx_data *d, const char *s, size_t len) {
  char buf[64];
  if (!len || len >= sizeof buf) return -1;
  memcpy(buf, s, len);
  buf[len] = 0;
  for (size_t i = 0; i < d->n; i++)
    if (!strcmp(d->v[i].id, buf)) return (long)i;
  char *end;
  if (buf[0] < '0' || buf[0] > '9') return -1;
  long v = strtol(buf, &end, 10);
  return *end || v < 0 || (size_t)v >= d->n ? -1 : v;
}

int sbx_subset(sbx_data *d, json_object **gens, const char *samples, long limit, char *err, size_t err_len) {
  if (!samples && limit <= 0) return 0;
  SBU_AUTOFREE bool *keep = calloc(d->n + 1, sizeof *keep);
  if (!keep) {
    snprintf(err, err_len, "out of memory");
    return -1;
  }
  if (samples) {
    for (const char *p = samples; *p;) {
      size_t len = strcspn(p, ",");
      long i = item_index(d, p, len);
      if (i < 0) {
        snprintf(err, err_len, "--samples: %.*s is not a sample of the data (an index 0-%zu or an id such as sample_0)",
                 (int)len, p, d->n ? d->n - 1 : 0);
        return -1;
      }
      keep[i] = true;
      p += len + (p[len] == ',');
    }
  } else {
    for (size_t i = 0; i < d->n && i < (size_t)limit; i++) keep[i] = true;
  }
  json_object *cut = json_object_new_object();
  size_t w = 0;
  for (size_t i = 0; i < d->n; i++) {
    if (!keep[i]) continue;
    json_object *l;
    if (json_object_is_type(*gens, json_type_object) && json_object_object_get_ex(*gens, d->v[i].id, &l))
      json_object_object_add(cut, d->v[i].id, json_object_get(l));
    d->v[w++] = d->v[i];
  }
  d->n = w;
  json_object_put(*gens);
  *gens = cut;
  return 0;
}

int sbx_samples_option(const sbo_parser *p, const sbo_opt *o, const char *v, void *opts) {
  if (!*v || strspn(v, ",") == strlen(v)) return sbo_opt_bad_value(p, o, v);
  memcpy((char *)opts + o->at, &v, sizeof v);
  return 0;
}

int sbx_subset_given(const sbo_parser *p, const char *samples, long limit) {
  return samples && limit ? sbo_usage_error(p, "--samples and --limit: give one of them") : 0;
}
