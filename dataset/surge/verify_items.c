/* verify --benchmark surge: which items run (those predicted, not already in
 * --out), running them through `surgebox regen --only`, and which are
 * excluded from the scores because no reference was regenerated here. */
#include "verify_surge.h"
#include "cleanup.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static json_object *get(json_object *o, const char *key) {
  json_object *v = NULL;
  return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

int sbs_vs_items_init(sbs_vs_items *it, const sbe_run *check, json_object *const *published) {
  memset(it, 0, sizeof *it);
  it->reasons = json_object_new_object();
  for (int s = 0; s < SBS_N_SUBSETS; s++) {
    if (!published[s]) continue;
    size_t n = json_object_array_length(published[s]);
    sbe_category c = sbe_subset_category(sbs_subset_name((sbs_subset)s));
    it->len[s] = n;
    it->needed[s] = calloc(n + 1, 1);
    it->to_run[s] = calloc(n + 1, 1);
    it->excluded[s] = calloc(n + 1, 1);
    if (!it->needed[s] || !it->to_run[s] || !it->excluded[s]) return -1;
    for (size_t m = 0; m < check->nmodels; m++)
      for (size_t i = 0; i < n && i < check->refs.count[c]; i++)
        if (check->models[m].present[c][i] && !it->needed[s][i]) it->needed[s][i] = 1, it->n_needed[s]++;
    it->total_needed += it->n_needed[s];
  }
  return 0;
}

static bool complete(json_object *item) {
  json_object *c = get(get(item, "exec"), "complete");
  return c && json_object_get_boolean(c);
}

int sbs_vs_items_resume(sbs_vs_items *it, const char *out, json_object *const *published) {
  for (int s = 0; s < SBS_N_SUBSETS; s++) {
    if (!it->n_needed[s]) continue;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", out, sbs_subset_name((sbs_subset)s));
    SBU_AUTOPUT json_object *prev = access(path, F_OK) == 0 ? json_object_from_file(path) : NULL;
    if (access(path, F_OK) == 0 &&
        (!prev || !json_object_is_type(prev, json_type_array) || json_object_array_length(prev) != it->len[s])) {
      fprintf(stderr, "verify: %s is not a regeneration of %zu %s items; give another --out\n", path, it->len[s],
              sbs_subset_name((sbs_subset)s));
      return -1;
    }
    for (size_t i = 0; i < it->len[s]; i++) {
      if (!it->needed[s][i]) continue;
      json_object *mine = prev ? json_object_array_get_idx(prev, i) : NULL;
      json_object *pub = json_object_array_get_idx(published[s], i);
      if (mine && !json_object_equal(get(mine, "question"), get(pub, "question"))) {
        fprintf(stderr, "verify: %s: item %zu is another program than --data's; give another --out\n", path, i);
        return -1;
      }
      if (mine && complete(mine)) {
        it->reused++;
      } else {
        it->to_run[s][i] = 1;
        it->n_to_run[s]++;
      }
    }
  }
  return 0;
}

/* One subset's items through regen's run on d's connection, its table sent
 * to stderr (stdout is the verdict's alone). */
static int regen_subset(sbr_driver *d, const sbs_vs_opts *o, sbs_vs_items *it, int s, const char *out, bool first) {
  size_t cap = it->n_to_run[s] * 21 + 1, len = 0;
  char *only = malloc(cap);
  if (!only) return 2;
  only[0] = '\0';
  for (size_t i = 0; i < it->len[s]; i++)
    if (it->to_run[s][i]) len += (size_t)snprintf(only + len, cap - len, "%s%zu", len ? "," : "", i);
  sbs_regen_opts ro;
  sbs_regen_opts_init(&ro);
  ro.data = o->data;
  ro.subsets[0] = (sbs_subset)s;
  ro.n_subsets = 1;
  ro.out = out;
  ro.only = only;
  ro.jobs = o->jobs;
  ro.report = stderr;
  ro.quiet_environment = !first; /* the choice per group is the same for every subset: said once */
  int rc = sbs_regen_on(d, &ro);
  free(only);
  it->ran += it->n_to_run[s];
  return rc;
}

int sbs_vs_regenerate(sbr_driver *d, const sbs_vs_opts *o, sbs_vs_items *it, const char *out) {
  size_t to_run = 0;
  for (int s = 0; s < SBS_N_SUBSETS; s++) to_run += it->n_to_run[s];
  fprintf(stderr, "verify: %zu item(s) predicted; %zu to run, %zu already regenerated in %s\n", it->total_needed, to_run,
          it->reused, o->out ? o->out : "(a private directory)");
  if (!to_run) return 0;
  /* one connection for every subset: the running daemon, else an embedded one */
  int rc = 0;
  bool first = true;
  for (int s = 0; s < SBS_N_SUBSETS && !rc; s++)
    if (it->n_to_run[s]) {
      rc = regen_subset(d, o, it, s, out, first);
      first = false;
    }
  if (rc == 130) fprintf(stderr, "verify: interrupted; run again with the same --out to resume\n");
  else if (rc) fprintf(stderr, "verify: regeneration failed (exit %d); nothing scored\n", rc);
  return rc == 0 ? 0 : rc == 130 ? 130 : 2;
}

/* Why item's reference does not count as regenerated here, or NULL: eval's
 * rule for a regen output (an item regen has not written yet: not_run). */
static const char *exclusion(json_object *item, char *buf, size_t n) { return sbe_not_regenerated(item, true, buf, n); }

int sbs_vs_exclusions(sbs_vs_items *it, const char *out) {
  for (int s = 0; s < SBS_N_SUBSETS; s++) {
    if (!it->n_needed[s]) continue;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", out, sbs_subset_name((sbs_subset)s));
    json_object *regen = json_object_from_file(path);
    if (!regen || !json_object_is_type(regen, json_type_array) || json_object_array_length(regen) != it->len[s]) {
      fprintf(stderr, "verify: %s: the regenerated items are unreadable\n", path);
      json_object_put(regen);
      return -1;
    }
    for (size_t i = 0; i < it->len[s]; i++) {
      char buf[300];
      const char *why = it->needed[s][i] ? exclusion(json_object_array_get_idx(regen, i), buf, sizeof buf) : NULL;
      if (!why) continue;
      it->excluded[s][i] = 1;
      it->excluded_total++;
      json_object *n = get(it->reasons, why);
      json_object_object_add(it->reasons, why, json_object_new_int64(n ? json_object_get_int64(n) + 1 : 1));
    }
    json_object_put(regen);
  }
  return 0;
}

void sbs_vs_report_json(const sbs_vs_items *it, json_object *root, const char *out) {
  json_object *refs = json_object_new_object();
  json_object_object_add(refs, "predicted_items", json_object_new_int64((int64_t)it->total_needed));
  json_object_object_add(refs, "attempted", json_object_new_int64((int64_t)it->ran));
  json_object_object_add(refs, "reused", json_object_new_int64((int64_t)it->reused));
  json_object_object_add(refs, "dir", out ? json_object_new_string(out) : NULL);
  json_object_object_add(root, "references", refs);
  json_object_object_add(root, "scored_items", json_object_new_int64((int64_t)(it->total_needed - it->excluded_total)));
  json_object_object_add(root, "excluded", json_object_get(it->reasons));
}

void sbs_vs_report_text(const sbs_vs_items *it, FILE *f, const char *out) {
  fprintf(f, "references regenerated here: %zu item(s) predicted, %zu attempted now, %zu reused%s%s\n", it->total_needed, it->ran,
          it->reused, out ? " from " : "", out ? out : "");
  fprintf(f, "excluded (no reference regenerated here, not scored): %zu", it->excluded_total);
  const char *sep = " (";
  json_object_object_foreach(it->reasons, why, n) {
    fprintf(f, "%s%s %" PRId64, sep, why, json_object_get_int64(n));
    sep = ", ";
  }
  fprintf(f, "%s\n", it->excluded_total ? ")" : "");
}

void sbs_vs_items_free(sbs_vs_items *it) {
  for (int s = 0; s < SBS_N_SUBSETS; s++) {
    free(it->needed[s]);
    free(it->to_run[s]);
    free(it->excluded[s]);
  }
  json_object_put(it->reasons);
  memset(it, 0, sizeof *it);
}

void sbs_vs_remove_dir(const char *dir) {
  for (int s = 0; s < SBS_N_SUBSETS; s++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", dir, sbs_subset_name((sbs_subset)s));
    unlink(path);
  }
  rmdir(dir);
}
