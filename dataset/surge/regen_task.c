/* A regen task: responses in, the --out record out. */
#include "regen_task.h"

#include "adapt_internal.h"
#include "failure.h"
#include "fidelity.h"
#include "protocol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sbs_regen_task_init(sbs_regen_task *t, sbs_subset s, size_t index, json_object *item, const sbs_env *env,
                        int repeat) {
  memset(t, 0, sizeof *t);
  t->subset = s;
  t->index = index;
  t->item = item;
  t->wanted = repeat;
  t->refs = calloc((size_t)repeat, sizeof *t->refs);
  t->cpu = calloc(3 * (size_t)repeat, sizeof(double)); /* the three figures of every repeat, one block */
  if (!t->refs || !t->cpu) return -1;
  t->wall = t->cpu + repeat;
  t->inproc = t->wall + repeat;
  if (sbs_adapt(s, index, item, env, &t->job, t->error, sizeof t->error) < 0) t->wanted = 0;
  if (t->job.missing[0]) t->wanted = 0;
  return 0;
}

void sbs_regen_task_free(sbs_regen_task *t) {
  for (int r = 0; t->refs && r < t->got; r++) free(t->refs[r]);
  free(t->refs);
  free(t->cpu); /* wall's and inproc's too */
  json_object_put(t->toolchain);
  json_object_put(t->profile);
  sbs_job_free(&t->job);
}

/* A figure the daemon did not send is 0 here, as it always was in --out. */
static double seconds(double v) { return v < 0 ? 0 : v; }

static void read_steps(sbs_regen_task *t, const sbc_result *res, int r) {
  t->compile_failed |= sbc_result_compile_failed(res);
  for (size_t si = 0; t->job.out_step && si < res->n_steps; si++) { /* the last step of that name */
    const sbc_step *sd = &res->steps[si];
    if (strcmp(sd->name, t->job.out_step)) continue;
    t->cpu[r] = seconds(sd->cpu_time_s);
    t->wall[r] = seconds(sd->wall_time_s);
    t->rss = sd->max_rss_kb < 0 ? 0 : sd->max_rss_kb;
  }
}

void sbs_regen_task_answer(sbs_regen_task *t, const sbc_result *res, const sbs_env *env) {
  snprintf(t->status, sizeof t->status, "%s", res->is_error ? "error" : res->status);
  if (!res->is_error && !strcmp(t->status, SBP_STATUS_TOOLCHAIN_MISSING)) { /* the daemon lacks what the adapter chose */
    snprintf(t->job.missing, sizeof t->job.missing, "%s", t->job.toolchain);
    t->got = t->wanted = 0;
    return;
  }
  if (sbr_failure_of(res, t->error, sizeof t->error)) { /* never a reference: no more repeats */
    t->failed = true;
    t->wanted = t->got;
    if (!res->is_error && !strcmp(t->status, SBP_STATUS_HOST_KILLED))
      snprintf(t->unfinished, sizeof t->unfinished, "%s", t->status);
    return;
  }
  if (sbr_unfinished_status(t->status)) { /* cut off: not the program's answer, no more repeats */
    snprintf(t->unfinished, sizeof t->unfinished, "%s", t->status);
    t->wanted = t->got;
    read_steps(t, res, 0);
    return;
  }
  int r = t->got++;
  t->refs[r] = sbs_reference(&t->job, res, &t->inproc[r]);
  read_steps(t, res, r);
  if (res->toolchain && !t->toolchain) t->toolchain = json_object_get(res->toolchain);
  if (res->profile && !t->profile) t->profile = json_object_get(res->profile);
  if (!t->toolchain && t->job.toolchain[0]) { /* raw steps: the chosen one, as the daemon lists it */
    json_object *id = json_object_new_object();
    json_object_object_add(id, "name", json_object_new_string(t->job.toolchain));
    const sbs_env *where = t->job.profile[0] && env->alt ? env->alt : env; /* built in the best profile */
    const char *ver = sbs_env_version(where, t->job.toolchain);
    json_object_object_add(id, "version", ver ? json_object_new_string(ver) : NULL);
    t->toolchain = id;
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(const double *v, int n) {
  if (n <= 0) return -1;
  double *c = malloc((size_t)n * sizeof *c);
  if (!c) return -1;
  memcpy(c, v, (size_t)n * sizeof *c);
  qsort(c, (size_t)n, sizeof *c, cmp_double);
  double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
  free(c);
  return m;
}

/* A number printed with 6 decimals (more would be noise). */
static json_object *num(double v) {
  char s[32];
  snprintf(s, sizeof s, "%.6f", v);
  return json_object_new_double_s(strtod(s, NULL), s);
}

static void add_times(const sbs_regen_task *t, json_object *exec) {
  json_object_object_add(exec, "cpu_time_s", num(median(t->cpu, t->got)));
  json_object_object_add(exec, "wall_time_s", num(median(t->wall, t->got)));
  json_object_object_add(exec, "max_rss_kb", json_object_new_int64(t->rss));
  if (!t->job.inproc_marker || median(t->inproc, t->got) < 0) return;
  double in = median(t->inproc, t->got);
  json_object_object_add(exec, "inproc_cpu_s", num(in));
  char fmt[48];
  snprintf(fmt, sizeof fmt, "%.4f seconds", in); /* SURGE's own format */
  json_object_object_add(exec, "time", json_object_new_string(fmt));
  json_object *runs = json_object_new_array(); /* every repeat: the spread `surgebox bins` flags edges with */
  for (int r = 0; r < t->got; r++)
    if (t->inproc[r] >= 0) json_object_array_add(runs, num(t->inproc[r]));
  json_object_object_add(exec, "inproc_cpu_s_runs", runs);
}

static json_object *toolchain_of(const sbs_regen_task *t, bool missing) {
  if (t->toolchain) return json_object_get(t->toolchain);
  json_object *tc = json_object_new_object();
  json_object_object_add(tc, "name", json_object_new_string(missing ? t->job.missing : t->job.toolchain));
  json_object_object_add(tc, "version", NULL);
  return tc;
}

void sbs_regen_task_record(const sbs_regen_task *t, json_object *out_item) {
  const char *published = sbs_item_str(t->item, "gt");
  json_object *exec = json_object_new_object();
  bool missing = t->job.missing[0] != '\0';
  bool ran = !missing && !t->failed && !t->unfinished[0] && t->got > 0 && t->refs[0];
  bool deterministic = true;
  for (int r = 1; ran && r < t->got; r++)
    if (!t->refs[r] || strcmp(t->refs[r], t->refs[0]) != 0) deterministic = false;
  sbs_compare_result c = {0};
  if (ran) sbs_compare(published, t->refs[0], t->job.whitespace_free, t->compile_failed, &c);
  const char *cls = sbs_classify(t->status, missing || !ran, deterministic, &c);
  if (!ran && !missing) cls = t->unfinished[0] ? t->unfinished : t->failed ? SBR_FAILURE_CLASS : "other";
  json_object_object_add(exec, "status", json_object_new_string(missing ? "missing_toolchain" : t->status[0] ? t->status : "not_run"));
  json_object_object_add(exec, "regenerated", json_object_new_boolean(ran));
  json_object_object_add(exec, "group", json_object_new_string(t->job.group));
  json_object_object_add(exec, "toolchain", toolchain_of(t, missing));
  if (t->profile) json_object_object_add(exec, "profile", json_object_get(t->profile));
  if (missing) json_object_object_add(exec, "missing", json_object_new_string(t->job.missing));
  if (ran) {
    add_times(t, exec);
    json_object_object_add(exec, "matched", json_object_new_string(c.exact ? "exact" : c.normalized ? "normalized" : "no"));
    json_object_object_add(exec, "jaccard", num(c.jaccard));
    json_object_object_add(exec, "repeats", json_object_new_int(t->got));
    json_object_object_add(exec, "deterministic", json_object_new_boolean(deterministic));
  }
  json_object_object_add(exec, "class", cls ? json_object_new_string(cls) : NULL);
  if (t->error[0]) json_object_object_add(exec, "error", json_object_new_string(t->error));
  if (t->unfinished[0] && !t->failed) { /* what the cut-off run used: never bins' time */
    json_object_object_add(exec, "cpu_time_s_unfinished", num(t->cpu[0]));
    json_object_object_add(exec, "max_rss_kb", json_object_new_int64(t->rss));
  }
  sbs_exec_substitution(exec, &t->job);
  json_object *final = json_object_object_get(exec, "class"); /* after a substitution's toolchain_drift */
  if (ran && final && !strcmp(json_object_get_string(final), "other") && t->got < 2) /* one run: not checked */
    json_object_object_add(exec, "class", json_object_new_string("unchecked"));
  json_object_object_add(exec, "complete", json_object_new_boolean(!t->failed));
  json_object_object_add(out_item, "gt", json_object_new_string(ran ? t->refs[0] : published ? published : ""));
  json_object_object_add(out_item, "gt_published", published ? json_object_new_string(published) : NULL);
  json_object_object_add(out_item, "exec", exec);
}

json_object *sbs_regen_summary(json_object *const *outs, const sbs_subset *subsets, size_t n, size_t *failed) {
  json_object *summary = sbs_summary(outs, subsets, n);
  size_t total = 0;
  for (size_t s = 0; s < n; s++) {
    json_object *o = json_object_object_get(summary, sbs_subset_name(subsets[s])), *idx = json_object_new_array();
    for (size_t i = 0; i < json_object_array_length(outs[s]); i++) {
      json_object *exec = json_object_object_get(json_object_array_get_idx(outs[s], i), "exec");
      const char *cls = json_object_get_string(json_object_object_get(exec, "class"));
      if (cls && !strcmp(cls, SBR_FAILURE_CLASS)) json_object_array_add(idx, json_object_new_int((int)i));
    }
    total += json_object_array_length(idx);
    if (!o) {
      json_object_put(idx);
      continue;
    }
    json_object_object_add(o, SBR_FAILURE_CLASS, json_object_new_int((int)json_object_array_length(idx)));
    json_object *mm = json_object_object_get(o, "mismatches");
    if (mm) json_object_object_add(mm, SBR_FAILURE_CLASS, idx);
    else json_object_put(idx);
  }
  if (failed) *failed = total;
  return summary;
}
