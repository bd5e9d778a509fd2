/* batch --brief / --fields: smaller answer lines for a table or a data frame.
 *
 * --brief drops from every step what repeats on every line of a run: the
 * `enforced` prose (how each limit is enforced) and `limits` (the limits in
 * force, as the request asked). --fields NAME,... keeps only those fields of
 * the answer; `steps.NAME` keeps that field of each step (then `steps` holds
 * only the named step fields), plain `steps` keeps the steps whole. `id`,
 * `line`, `type` and `status` are always kept (resume and --retry-failed read
 * them), and `daemon` (on a fleet: which daemon ran it), and an error answer is written whole (its `error` says why). */
#include "batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool named(char *const *names, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(names[i], key)) return true;
  return false;
}

static bool valid_name(const char *s, size_t len) {
  if (!len) return false;
  for (size_t i = 0; i < len; i++)
    if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
      return false;
  return true;
}

int sbr_batch_shape_fields(sbr_batch_shape *s, const char *fields, char *err, size_t err_len) {
  s->fields = true;
  for (const char *p = fields; *p;) {
    size_t len = strcspn(p, ",");
    bool step = len > 6 && !strncmp(p, "steps.", 6);
    const char *name = step ? p + 6 : p;
    size_t nlen = step ? len - 6 : len;
    if (!valid_name(name, nlen)) {
      snprintf(err, err_len, "--fields: '%.*s' is not a field name (NAME or steps.NAME, comma-separated)", (int)len, p);
      return -1;
    }
    char ***v = step ? &s->step : &s->top;
    size_t *n = step ? &s->n_step : &s->n_top;
    *v = realloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = strndup(name, nlen);
    p += len + (p[len] == ',');
  }
  if (!s->n_top && !s->n_step) {
    snprintf(err, err_len, "--fields: no field named (e.g. --fields status,steps.exit_code,steps.stdout)");
    return -1;
  }
  return 0;
}

/* Deletes the keys of o for which keep(...) is false (collected first: no
 * deletion while iterating). */
static void drop_keys(json_object *o, const sbr_batch_shape *s, bool (*keep)(const sbr_batch_shape *, const char *)) {
  size_t n = 0, cap = (size_t)json_object_object_length(o) + 1;
  const char **doomed = malloc(cap * sizeof *doomed);
  if (!doomed) return;
  json_object_object_foreach(o, k, v) {
    (void)v;
    if (!keep(s, k) && n < cap) doomed[n++] = k;
  }
  for (size_t i = 0; i < n; i++) json_object_object_del(o, doomed[i]);
  free(doomed);
}

static bool keep_top(const sbr_batch_shape *s, const char *k) {
  return !strcmp(k, "id") || !strcmp(k, "line") || !strcmp(k, "type") || !strcmp(k, "status") ||
         !strcmp(k, "daemon") || named(s->top, s->n_top, k) || (!strcmp(k, "steps") && s->n_step);
}

static bool keep_step(const sbr_batch_shape *s, const char *k) { return named(s->step, s->n_step, k); }

static void shape_step(const sbr_batch_shape *s, json_object *step) {
  if (s->brief) {
    json_object_object_del(step, "enforced");
    json_object_object_del(step, "limits");
  }
  if (s->n_step && !named(s->top, s->n_top, "steps")) drop_keys(step, s, keep_step);
}

void sbr_batch_shape_apply(const sbr_batch_shape *s, json_object *answer) {
  if (!s->brief && !s->fields) return;
  const char *type = json_object_get_string(json_object_object_get(answer, "type"));
  if (type && !strcmp(type, "error")) return;
  if (s->fields) drop_keys(answer, s, keep_top);
  json_object *steps;
  if (json_object_object_get_ex(answer, "steps", &steps) && json_object_is_type(steps, json_type_array))
    for (size_t i = 0; i < json_object_array_length(steps); i++) shape_step(s, json_object_array_get_idx(steps, i));
}

void sbr_batch_shape_free(sbr_batch_shape *s) {
  for (size_t i = 0; i < s->n_top; i++) free(s->top[i]);
  for (size_t i = 0; i < s->n_step; i++) free(s->step[i]);
  free(s->top);
  free(s->step);
}
