/* The CRUXEval data file and the check of a generations file against it. */
#include "cruxeval.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool str_field(json_object *o, const char *k, const char **s, size_t *len) {
  json_object *v;
  if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string)) return false;
  *s = json_object_get_string(v);
  if (len) *len = (size_t)json_object_get_string_len(v);
  return true;
}

static int cmp_ids(const void *a, const void *b) {
  return strcmp(((const sbx_sample *)a)->id, ((const sbx_sample *)b)->id);
}

int sbx_data_load(const char *path, sbx_data *d, char *err, size_t err_len) {
  memset(d, 0, sizeof *d);
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, err_len, "cannot read %s: %s", path, strerror(errno));
    return -1;
  }
  d->lines = json_object_new_array();
  char *line = NULL;
  size_t cap = 0, lineno = 0;
  ssize_t got;
  int rc = 0;
  while ((got = getline(&line, &cap, f)) >= 0) {
    lineno++;
    if (got == 0 || strspn(line, " \t\r\n") == (size_t)got) continue;
    json_object *o = json_tokener_parse(line);
    sbx_sample s;
    if (!o || !str_field(o, "id", &s.id, NULL) || !str_field(o, "code", &s.code, &s.code_len) ||
        !str_field(o, "input", &s.input, &s.input_len) || !str_field(o, "output", &s.output, &s.output_len)) {
      snprintf(err, err_len, "%s line %zu: not {\"code\",\"input\",\"output\",\"id\"} with string values", path, lineno);
      json_object_put(o);
      rc = -1;
      break;
    }
    json_object_array_add(d->lines, o);
    d->v = realloc(d->v, (d->n + 1) * sizeof *d->v);
    d->v[d->n++] = s;
  }
  free(line);
  fclose(f);
  if (rc == 0 && d->n == 0) {
    snprintf(err, err_len, "%s: no samples", path);
    rc = -1;
  }
  if (rc == 0) { /* distinct ids */
    sbx_sample *sorted = malloc(d->n * sizeof *sorted);
    memcpy(sorted, d->v, d->n * sizeof *sorted);
    qsort(sorted, d->n, sizeof *sorted, cmp_ids);
    for (size_t i = 1; i < d->n && rc == 0; i++)
      if (!strcmp(sorted[i].id, sorted[i - 1].id)) {
        snprintf(err, err_len, "%s: sample id %s appears twice", path, sorted[i].id);
        rc = -1;
      }
    free(sorted);
  }
  if (rc) sbx_data_free(d);
  return rc;
}

void sbx_data_free(sbx_data *d) {
  json_object_put(d->lines);
  free(d->v);
  memset(d, 0, sizeof *d);
}

int sbx_generations_check(json_object *gens, const sbx_data *d, char *err, size_t err_len) {
  if (!json_object_is_type(gens, json_type_object)) {
    snprintf(err, err_len, "the generations file must be a JSON object {\"sample_0\": [\"...\", ...], ...}");
    return -1;
  }
  json_object_object_foreach(gens, key, val) {
    bool known = false;
    for (size_t i = 0; i < d->n && !known; i++) known = !strcmp(d->v[i].id, key);
    if (!known) {
      snprintf(err, err_len, "unknown sample id \"%.100s\" (the data's ids are sample_0 ... sample_%zu)", key, d->n - 1);
      return -1;
    }
    if (!json_object_is_type(val, json_type_array)) {
      snprintf(err, err_len, "%s: the generations must be a list of strings", key);
      return -1;
    }
    size_t n = json_object_array_length(val);
    /* upstream would score an empty list 1.0 (n - c < k): refuse it */
    if (n == 0) {
      snprintf(err, err_len, "%s: empty list (at least one generation per sample)", key);
      return -1;
    }
    for (size_t j = 0; j < n; j++)
      if (!json_object_is_type(json_object_array_get_idx(val, j), json_type_string)) {
        snprintf(err, err_len, "%s[%zu]: not a string", key, j);
        return -1;
      }
  }
  /* SCORING.md scores every sample of the data: a missing one is an error,
   * as upstream (which stops on it), never a silent zero */
  for (size_t i = 0; i < d->n; i++)
    if (!json_object_object_get_ex(gens, d->v[i].id, NULL)) {
      snprintf(err, err_len, "%s has no generations (every sample of the data must be present; for part of it, give --samples LIST or --limit N)", d->v[i].id);
      return -1;
    }
  return 0;
}
