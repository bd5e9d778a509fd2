/* verify --benchmark surge --shard I/N, and `surgebox merge` of its shards.
 *
 * The partition is regen --shard I/N's over every item of the loaded
 * subsets (keyed by the item, weighted by its expected cost), not over the
 * predicted items alone: a shard then owns the same items whichever
 * prediction file it verifies, so one machine's --out keeps serving the
 * next model's predictions (the regenerated references are the costly part
 * and do not depend on the model): its shard.json is replaced when only the
 * predictions (or scoring options) differ. A shard runs the predicted items
 * it owns.
 *
 * A shard's --out DIR holds <subset>.json for every predicted subset (the
 * shard's items regenerated, the rest as published) and shard.json; the
 * merge joins the subsets as regen's merge does, then scores them with the
 * very code an unsharded verify uses (nothing runs). */
#include "atomic_write.h"
#include "merge.h"
#include "regen_shard.h"
#include "verify_surge.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The toolchains' identity of the daemon (and profile) the shard runs on,
 * as regen's shard.json records it. 0, or -1 (said why). */
static int toolchains_identity(sbr_driver *d, char hex[65]) {
  if (sbr_driver_connect(d) != 0) return -1;
  sbs_toolchains_sha256(d->toolchains, hex);
  return 0;
}

/* An --out that already has a shard.json serves the same shard of the same
 * data, profile and toolchains; other predictions may follow. 0, or -1. */
static int check_resume(const char *path, json_object *m) {
  static const char *const same[] = {"surgebox_shard", "command", "shard", "shards", "data_sha256", "profile",
                                     "toolchains_sha256"};
  json_object *prev = json_object_from_file(path);
  int rc = 0;
  for (size_t k = 0; prev && k < sizeof same / sizeof *same && !rc; k++)
    if (!json_object_equal(json_object_object_get(prev, same[k]), json_object_object_get(m, same[k]))) {
      fprintf(stderr, "verify: %s belongs to another run (its \"%s\" differs: another shard, data, profile or "
                      "toolchains): give each shard its own --out\n", path, same[k]);
      rc = -1;
    }
  json_object_put(prev);
  return rc;
}

int sbs_vs_shard_begin(sbr_driver *d, const sbs_vs_opts *o, sbs_vs_items *it, json_object *const *published,
                       const char *out) {
  const sbr_shard *sh = &o->shard;
  sbs_subset subs[SBS_N_SUBSETS];
  json_object *pubs[SBS_N_SUBSETS];
  size_t ns = 0;
  for (int s = 0; s < SBS_N_SUBSETS; s++)
    if (published[s]) subs[ns] = (sbs_subset)s, pubs[ns++] = published[s];
  bool *mine[SBS_N_SUBSETS] = {0};
  json_object *all_owned;
  double share;
  sbs_regen_shard_plan(sh, pubs, subs, ns, NULL, mine, &all_owned, &share);
  json_object_put(all_owned);

  json_object *m = sbr_shard_manifest_new("verify-surge", sh), *data = json_object_new_object(),
              *predicted = json_object_new_array(), *owned = json_object_new_object();
  int rc = 0;
  for (size_t k = 0; k < ns; k++) {
    int s = subs[k];
    const char *name = sbs_subset_name(subs[k]);
    char path[4200], hex[65];
    snprintf(path, sizeof path, "%s/%s.json", o->data, name);
    if (sbu_sha256_file_hex(path, hex) < 0) snprintf(hex, sizeof hex, "unreadable");
    json_object_object_add(data, name, json_object_new_string(hex));
    if (it->n_needed[s]) { /* a predicted subset: this shard's part of it */
      json_object *list = json_object_new_array();
      for (size_t i = 0; i < it->len[s]; i++) {
        if (!it->needed[s][i]) continue;
        if (mine[k][i]) {
          json_object_array_add(list, json_object_new_int64((int64_t)i));
        } else {
          it->needed[s][i] = 0;
          it->n_needed[s]--;
          it->total_needed--;
        }
      }
      json_object_array_add(predicted, json_object_new_string(name));
      json_object_object_add(owned, name, list);
    }
    free(mine[k]);
  }
  json_object_object_add(m, "data_sha256", data);
  char *abs = realpath(o->data, NULL);
  json_object_object_add(m, "data_path", json_object_new_string(abs ? abs : o->data));
  free(abs);
  sbr_shard_add_file(m, "predictions", o->preds);
  json_object_object_add(m, "subsets", predicted);
  json_object *opts = json_object_new_object();
  json_object_object_add(opts, "fl_extract", json_object_new_boolean(o->fl_extract));
  json_object_object_add(opts, "by", o->by ? json_object_new_string(o->by) : NULL);
  json_object_object_add(m, "options", opts);
  json_object_object_add(m, "profile", json_object_new_string(d->ctx.profile ? d->ctx.profile : "host"));
  char hex[65];
  if (!rc && toolchains_identity(d, hex) < 0) rc = -1;
  json_object_object_add(m, "toolchains_sha256", json_object_new_string(rc ? "" : hex));
  json_object_object_add(m, "items", owned);
  char path[4200];
  snprintf(path, sizeof path, "%s/shard.json", out);
  if (!rc) rc = check_resume(path, m);
  /* the merge reads every predicted subset from every shard, also one that
   * owns none of its items: the published items, as regen keeps them */
  for (size_t k = 0; k < ns && !rc; k++) {
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/%s.json", out, sbs_subset_name(subs[k]));
    if (json_object_object_get_ex(owned, sbs_subset_name(subs[k]), NULL) && access(sub, F_OK) != 0 &&
        sbr_write_json_atomic(sub, published[subs[k]]) < 0) {
      fprintf(stderr, "verify: cannot write %s: %s\n", sub, strerror(errno));
      rc = -1;
    }
  }
  if (!rc && sbr_write_json_atomic(path, m) < 0) {
    fprintf(stderr, "verify: cannot write %s: %s\n", path, strerror(errno));
    rc = -1;
  }
  if (!rc)
    fprintf(stderr, "verify: shard %u/%u: %zu of the predicted items are this shard's\n", sh->index, sh->count,
            it->total_needed);
  json_object_put(m);
  return rc;
}

/* the data and predictions the shards recorded are still what they read */
static bool inputs_unchanged(json_object *m, const char *shard_dir) {
  const char *dir = json_object_get_string(json_object_object_get(m, "data_path"));
  const char *preds = json_object_get_string(json_object_object_get(m, "predictions_path"));
  char path[4200], hex[65];
  json_object *data = json_object_object_get(m, "data_sha256");
  bool ok = dir && preds && json_object_is_type(data, json_type_object);
  if (!ok) {
    fprintf(stderr, "merge: %s/shard.json lacks data_path, predictions_path or data_sha256\n", shard_dir);
    return false;
  }
  json_object_object_foreach(data, name, hash) {
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    const char *h = json_object_get_string(hash);
    if (ok && (sbu_sha256_file_hex(path, hex) < 0 || !h || strcmp(hex, h))) {
      fprintf(stderr, "merge: %s is not the file the shards read (missing or changed since)\n", path);
      ok = false;
    }
  }
  const char *want = json_object_get_string(json_object_object_get(m, "predictions_sha256"));
  if (ok && (sbu_sha256_file_hex(preds, hex) < 0 || !want || strcmp(hex, want))) {
    fprintf(stderr, "merge: %s is not the prediction file the shards read (missing or changed since)\n", preds);
    ok = false;
  }
  return ok;
}

int sbs_vs_merge(const sbr_merge_shard *sh, size_t n, const char *out) {
  json_object *m = sh[0].manifest, *opts = json_object_object_get(m, "options");
  if (!inputs_unchanged(m, sh[0].dir)) return 2;
  const char *by = json_object_get_string(json_object_object_get(opts, "by"));
  if (by && strcmp(by, "language") && strcmp(by, "difficulty") && strcmp(by, "config")) {
    fprintf(stderr, "merge: %s/shard.json: options.by %s is not one verify takes\n", sh[0].dir, by);
    return 2;
  }
  char tmp[] = "/tmp/surgebox-vsmerge-XXXXXX";
  if (!mkdtemp(tmp)) {
    fprintf(stderr, "merge: mkdtemp: %s\n", strerror(errno));
    return 2;
  }
  int rc = 0;
  json_object *subsets = json_object_object_get(m, "subsets");
  for (size_t k = 0; k < json_object_array_length(subsets) && !rc; k++) {
    const char *name = json_object_get_string(json_object_array_get_idx(subsets, k));
    sbs_subset s;
    json_object *merged = NULL;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", tmp, name ? name : "?");
    if (!name || sbs_subset_parse(name, &s) < 0) {
      fprintf(stderr, "merge: %s/shard.json: unknown subset %s\n", sh[0].dir, name ? name : "?");
      rc = 2;
    } else if (!(merged = sbs_regen_merge_subset(sh, n, name)) || sbr_write_json_atomic(path, merged) < 0) {
      if (merged) fprintf(stderr, "merge: cannot write %s: %s\n", path, strerror(errno));
      rc = 2;
    }
    json_object_put(merged);
  }
  /* the options of the shards' runs; the data's subsets as they loaded them */
  sbs_vs_opts o = {.data = json_object_get_string(json_object_object_get(m, "data_path")),
                   .preds = json_object_get_string(json_object_object_get(m, "predictions_path")),
                   .by = by,
                   .json = true,
                   .fl_extract = json_object_get_boolean(json_object_object_get(opts, "fl_extract")),
                   .subsets_given = true,
                   .jobs = 1};
  json_object_object_foreach(json_object_object_get(m, "data_sha256"), name, v) { /* an object: checked above */
    (void)v;
    sbs_subset s;
    if (sbs_subset_parse(name, &s) == 0) o.want[s] = true;
  }
  sbu_atomic part;
  FILE *f = rc || sbu_atomic_open(&part, out, 0666) < 0 ? NULL : part.f;
  if (!rc && !f) {
    fprintf(stderr, "merge: cannot write %s: %s\n", out, strerror(errno));
    rc = 2;
  }
  if (f) {
    rc = sbs_vs_score_dir(&o, tmp, f);
    if (rc) sbu_atomic_abort(&part);
    else if (sbu_atomic_commit(&part) < 0) {
      fprintf(stderr, "merge: cannot write %s: %s\n", out, strerror(errno));
      rc = 2;
    }
  }
  sbs_vs_remove_dir(tmp);
  if (!rc) printf("%zu shards of verify --benchmark surge merged and scored into %s\n", n, out);
  return rc;
}
