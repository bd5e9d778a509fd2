/* verify --benchmark tests --shard I/N and the merge of such shards.
 *
 * The unit is the distinct program (what the run sends once), keyed by its
 * SHA-256, balanced by count. A shard writes OUT.progress (its programs'
 * records) and OUT.shard.json; the merge joins the records and scores them
 * with the very code a single run uses (sbtb_verify_run, nothing to run). */
#include "tests_bench.h"
#include "driver.h" /* sbr_write_json_atomic */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t key_of(const char *hex) {
  char head[17];
  snprintf(head, sizeof head, "%s", hex);
  return strtoull(head, NULL, 16);
}

int sbtb_shard_plan(const sbr_shard *sh, const sbtb_opts *o, const char *const *hashes, size_t n, bool *mine) {
  uint64_t *k = calloc(n + 1, sizeof *k);
  for (size_t i = 0; i < n; i++) k[i] = key_of(hashes[i]);
  json_object *m = sbr_shard_manifest_new("verify-tests", sh);
  /* what changes a record or the score: the same in every shard */
  json_object_object_add(m, "stop", json_object_new_string(o->stop));
  json_object_object_add(m, "k", o->k ? json_object_new_string(o->k) : NULL);
  json_object_object_add(m, "language", o->language ? json_object_new_string(o->language) : NULL);
  json_object_object_add(m, "time_limit_s", json_object_new_double(o->time_limit));
  sbr_shard_add_file(m, "problems", o->problems);
  sbr_shard_add_file(m, "solutions", o->solutions);
  int rc = sbr_shard_finish_by_count(sh, m, "programs", k, hashes, n, mine, o->out, "verify");
  free(k);
  return rc;
}

static bool unchanged(json_object *m, const char *name) {
  char pk[64], hk[64], hex[65];
  snprintf(pk, sizeof pk, "%s_path", name);
  snprintf(hk, sizeof hk, "%s_sha256", name);
  const char *path = json_object_get_string(json_object_object_get(m, pk));
  if (!path || sbu_sha256_file_hex(path, hex) < 0) {
    fprintf(stderr, "merge: cannot read %s (the shards' %s)\n", path ? path : "?", name);
    return false;
  }
  if (strcmp(hex, json_object_get_string(json_object_object_get(m, hk)))) {
    fprintf(stderr, "merge: %s changed since the shards ran (%s differs)\n", path, hk);
    return false;
  }
  return true;
}

int sbtb_merge(const sbr_merge_shard *sh, size_t n, const char *out) {
  json_object *m = sh[0].manifest;
  if (!unchanged(m, "problems") || !unchanged(m, "solutions")) return 2;
  json_object *all = json_object_new_object();
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    char path[4200];
    snprintf(path, sizeof path, "%s.progress", sh[i].dir);
    json_object *p = json_object_from_file(path), *recs = NULL;
    if (p) json_object_object_get_ex(p, "records", &recs);
    json_object *owned = json_object_object_get(json_object_object_get(sh[i].manifest, "items"), "programs");
    for (size_t k = 0; json_object_is_type(owned, json_type_array) && k < json_object_array_length(owned) && !rc; k++) {
      const char *h = json_object_get_string(json_object_array_get_idx(owned, k));
      json_object *rec = recs && h ? json_object_object_get(recs, h) : NULL;
      if (!json_object_is_type(rec, json_type_object)) {
        fprintf(stderr, "merge: shard %d/%d (%s) is unfinished: program %.12s has no result (run it again to resume)\n",
                sh[i].index, sh[i].count, sh[i].dir, h ? h : "?");
        rc = 2;
      } else {
        json_object_object_add(all, h, json_object_get(rec));
      }
    }
    json_object_put(p);
  }
  char progress[4200];
  snprintf(progress, sizeof progress, "%s.progress", out);
  if (!rc) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "benchmark", json_object_new_string("tests"));
    json_object_object_add(o, "records", json_object_get(all));
    if (sbr_write_json_atomic(progress, o) < 0) fprintf(stderr, "merge: cannot write %s\n", progress), rc = 2;
    json_object_put(o);
  }
  json_object_put(all);
  if (rc) return rc;
  sbtb_opts o = {.problems = json_object_get_string(json_object_object_get(m, "problems_path")),
                 .solutions = json_object_get_string(json_object_object_get(m, "solutions_path")),
                 .stop = json_object_get_string(json_object_object_get(m, "stop")),
                 .k = json_object_get_string(json_object_object_get(m, "k")),
                 .language = json_object_get_string(json_object_object_get(m, "language")),
                 .time_limit = json_object_get_double(json_object_object_get(m, "time_limit_s")),
                 .out = out};
  sbc_ctx ctx;
  sbc_ctx_init(&ctx);
  ctx.autostart = false; /* every result is known: no daemon */
  rc = sbtb_verify_run(&ctx, &o);
  if (rc) unlink(progress);
  return rc ? 2 : 0;
}
