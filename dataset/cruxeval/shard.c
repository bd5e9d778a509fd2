/* verify --benchmark cruxeval --shard I/N and the merge of such shards.
 *
 * The unit is the distinct program (what verify runs once), keyed by the
 * SHA-256 of its text; programs cost about the same, so the shards are
 * balanced by count. A shard's output is OUT.progress (its verdicts) and
 * OUT.shard.json; the merge joins the verdicts and scores them with the
 * very code a single run uses. */
#include "cruxeval.h"
#include "driver.h" /* sbr_write_json_atomic */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the first 64 bits of a program's SHA-256 (hex) */
static uint64_t key_of(const char *hex) {
  char head[17];
  snprintf(head, sizeof head, "%s", hex);
  return strtoull(head, NULL, 16);
}

int sbx_shard_plan(const sbr_shard *sh, const char *out, const char *mode, const char *data, const char *gens,
                   const char *const *hashes, size_t n, bool *mine) {
  uint64_t *k = calloc(n + 1, sizeof *k);
  for (size_t i = 0; i < n; i++) k[i] = key_of(hashes[i]);
  json_object *m = sbr_shard_manifest_new("verify-cruxeval", sh);
  json_object_object_add(m, "mode", json_object_new_string(mode));
  sbr_shard_add_file(m, "data", data);
  sbr_shard_add_file(m, "generations", gens);
  int rc = sbr_shard_finish_by_count(sh, m, "programs", k, hashes, n, mine, out, "verify");
  free(k);
  return rc;
}

/* the file at path still has the hash the shards recorded */
static bool unchanged(json_object *m, const char *path_key, const char *hash_key) {
  const char *path = json_object_get_string(json_object_object_get(m, path_key));
  char hex[65];
  if (!path || sbu_sha256_file_hex(path, hex) < 0) {
    fprintf(stderr, "merge: cannot read %s (%s of the shards)\n", path ? path : "?", path_key);
    return false;
  }
  if (strcmp(hex, json_object_get_string(json_object_object_get(m, hash_key)))) {
    fprintf(stderr, "merge: %s changed since the shards ran (%s differs)\n", path, hash_key);
    return false;
  }
  return true;
}

int sbx_merge(const sbr_merge_shard *sh, size_t n, const char *out) {
  json_object *m = sh[0].manifest;
  if (!unchanged(m, "data_path", "data_sha256") || !unchanged(m, "generations_path", "generations_sha256")) return 2;
  json_object *all = json_object_new_object();
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    char path[4200];
    snprintf(path, sizeof path, "%s.progress", sh[i].dir);
    json_object *p = json_object_from_file(path), *v = NULL;
    if (p) json_object_object_get_ex(p, "verdicts", &v);
    json_object *owned = json_object_object_get(json_object_object_get(sh[i].manifest, "items"), "programs");
    for (size_t k = 0; k < json_object_array_length(owned) && !rc; k++) {
      const char *h = json_object_get_string(json_object_array_get_idx(owned, k));
      json_object *verdict = v && h ? json_object_object_get(v, h) : NULL;
      if (!verdict || !json_object_is_type(verdict, json_type_boolean)) {
        fprintf(stderr, "merge: shard %d/%d (%s) is unfinished: program %.12s has no verdict (run it again to resume)\n",
                sh[i].index, sh[i].count, sh[i].dir, h ? h : "?");
        rc = 2;
      } else {
        json_object_object_add(all, h, json_object_new_boolean(json_object_get_boolean(verdict)));
      }
    }
    if (p) json_object_put(p);
  }
  char progress[4200];
  snprintf(progress, sizeof progress, "%s.progress", out);
  if (!rc) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "benchmark", json_object_new_string("cruxeval"));
    json_object_object_add(o, "verdicts", json_object_get(all));
    if (sbr_write_json_atomic(progress, o) < 0) {
      fprintf(stderr, "merge: cannot write %s\n", progress);
      rc = 2;
    }
    json_object_put(o);
  }
  json_object_put(all);
  if (rc) return rc;
  /* the single run's own scoring, with every verdict known: nothing runs
   * (no daemon: one is never started for a merge) */
  sbx_verify_opts o = {.mode = json_object_get_string(json_object_object_get(m, "mode")),
                       .gens = json_object_get_string(json_object_object_get(m, "generations_path")),
                       .data = json_object_get_string(json_object_object_get(m, "data_path")),
                       .out = out};
  sbc_ctx ctx;
  sbc_ctx_init(&ctx);
  ctx.autostart = false;
  rc = sbx_verify_run(&ctx, &o);
  if (rc) unlink(progress);
  return rc ? 2 : 0;
}
