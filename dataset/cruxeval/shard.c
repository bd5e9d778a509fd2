/* verify --benchmark cruxeval --shard I/N and the merge of such shards.
 *
 * The unit is the distinct program (what verify runs once), keyed by the
 * SHA-256 of its text; programs cost about the same, so the shards are
 * balanced by count. A shard's output is OUT.progress (its verdicts) and
 * OUT.shard.json; the merge joins the verdicts and scores them with the
 * very code a single run uses. */
#include "cruxeval.h"
#include "regen.h" /* sbr_write_json_atomic */

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

static void add_file_hash(json_object *m, const char *key, const char *path) {
  char hex[65];
  if (sbr_shard_file_sha256(path, hex) < 0) snprintf(hex, sizeof hex, "unreadable");
  json_object_object_add(m, key, json_object_new_string(hex));
}

static void add_path(json_object *m, const char *key, const char *path) {
  char *abs = realpath(path, NULL);
  json_object_object_add(m, key, json_object_new_string(abs ? abs : path));
  free(abs);
}

/* the manifest without the fields that may differ between machines */
static json_object *without_paths(json_object *m) {
  json_object *c = json_tokener_parse(json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN));
  if (c) {
    json_object_object_del(c, "data_path");
    json_object_object_del(c, "generations_path");
  }
  return c;
}

int sbx_shard_plan(const sbr_shard *sh, const char *out, const char *mode, const char *data, const char *gens,
                   const char *const *hashes, size_t n, bool *mine) {
  sbr_shard_item *items = calloc(n + 1, sizeof *items);
  unsigned *owner = calloc(n + 1, sizeof *owner);
  for (size_t i = 0; i < n; i++) items[i] = (sbr_shard_item){key_of(hashes[i]), 1.0};
  sbr_shard_assign(items, n, sh->count, owner, NULL);
  json_object *m = json_object_new_object(), *progs = json_object_new_array(), *owned = json_object_new_object();
  json_object_object_add(m, "surgebox_shard", json_object_new_int(1));
  json_object_object_add(m, "command", json_object_new_string("verify-cruxeval"));
  json_object_object_add(m, "shard", json_object_new_int((int)sh->index));
  json_object_object_add(m, "shards", json_object_new_int((int)sh->count));
  json_object_object_add(m, "mode", json_object_new_string(mode));
  add_file_hash(m, "data_sha256", data);
  add_file_hash(m, "generations_sha256", gens);
  add_path(m, "data_path", data);
  add_path(m, "generations_path", gens);
  for (size_t i = 0; i < n; i++)
    if ((mine[i] = owner[i] == sh->index)) json_object_array_add(progs, json_object_new_string(hashes[i]));
  json_object_object_add(owned, "programs", progs);
  json_object_object_add(m, "items", owned);
  free(items);
  free(owner);
  char path[4200];
  snprintf(path, sizeof path, "%s.shard.json", out);
  int rc = 0;
  json_object *prev = json_object_from_file(path);
  if (prev) {
    json_object *a = without_paths(prev), *b = without_paths(m);
    if (!json_object_equal(a, b)) {
      fprintf(stderr, "verify: %s belongs to another run (another shard, mode, data or generations): give each shard its own --out\n",
              path);
      rc = -1;
    }
    json_object_put(a);
    json_object_put(b);
    json_object_put(prev);
  }
  if (!rc && sbr_write_json_atomic(path, m) < 0) {
    fprintf(stderr, "verify: cannot write %s\n", path);
    rc = -1;
  }
  json_object_put(m);
  return rc;
}

/* the file at path still has the hash the shards recorded */
static bool unchanged(json_object *m, const char *path_key, const char *hash_key) {
  const char *path = json_object_get_string(json_object_object_get(m, path_key));
  char hex[65];
  if (!path || sbr_shard_file_sha256(path, hex) < 0) {
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
  /* the single run's own scoring, with every verdict known: nothing runs */
  char *argv[] = {"verify", "--mode", (char *)json_object_get_string(json_object_object_get(m, "mode")),
                  "--generations", (char *)json_object_get_string(json_object_object_get(m, "generations_path")),
                  "--data", (char *)json_object_get_string(json_object_object_get(m, "data_path")),
                  "--out", (char *)out, "--no-autostart", NULL};
  rc = sbx_verify_main(10, argv);
  if (rc) unlink(progress);
  return rc ? 2 : 0;
}
