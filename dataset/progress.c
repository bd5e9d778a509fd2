/* A resumable verify run's progress file and the merge of its shards
 * (progress.h). */
#include "progress.h"
#include "driver.h" /* sbr_write_json_atomic */
#include "sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sbr_progress_write(const char *path, const char *benchmark, const char *field, json_object *values, int flags) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "benchmark", json_object_new_string(benchmark));
  json_object_object_add(o, field, json_object_get(values));
  int rc = sbr_write_json_atomic_ext(path, o, flags);
  json_object_put(o);
  return rc;
}

void sbr_progress_save(const char *path, const char *benchmark, const char *field, json_object *values, time_t *saved) {
  if (sbr_progress_write(path, benchmark, field, values, JSON_C_TO_STRING_PLAIN) < 0)
    fprintf(stderr, "verify: cannot write %s\n", path);
  json_object_put(values);
  *saved = time(NULL);
}

json_object *sbr_progress_read(const char *path, const char *field) {
  json_object *o = path ? json_object_from_file(path) : NULL, *v = NULL;
  if (!o) return NULL;
  if (!json_object_object_get_ex(o, field, &v) || !json_object_is_type(v, json_type_object)) v = NULL;
  json_object_get(v);
  json_object_put(o);
  return v;
}

int sbr_progress_by_hash(const void *a, const void *b) { return strcmp(a, b); }

void *sbr_progress_find(void *progs, size_t n, size_t size, const char *hash) {
  return bsearch(hash, progs, n, size, sbr_progress_by_hash);
}

void sbr_progress_resume(const char *path, const char *field, json_type type, const char *what, sbr_progress_take_fn take,
                         void *arg) {
  json_object *v = sbr_progress_read(path, field);
  if (!v) return;
  size_t reused = 0;
  json_object_object_foreach(v, hash, val) reused += json_object_is_type(val, type) && take(arg, hash, val);
  json_object_put(v);
  fprintf(stderr, "verify: %zu %s from an earlier run (%s)\n", reused, what, path);
}

/* the first 64 bits of a program's SHA-256 (hex) */
static uint64_t key_of(const char *hex) {
  char head[17];
  snprintf(head, sizeof head, "%s", hex);
  return strtoull(head, NULL, 16);
}

int sbr_progress_shard_plan(const sbr_shard *sh, json_object *m, const char *const *hashes, size_t n, bool *mine,
                            const char *out) {
  uint64_t *k = calloc(n + 1, sizeof *k);
  if (!k) abort();
  for (size_t i = 0; i < n; i++) k[i] = key_of(hashes[i]);
  int rc = sbr_shard_finish_by_count(sh, m, "programs", k, hashes, n, mine, out, "verify");
  free(k);
  return rc;
}

/* the file the shards hashed as name still has that hash */
static bool unchanged(json_object *m, const char *name) {
  char hk[64], hex[65];
  snprintf(hk, sizeof hk, "%s_sha256", name);
  const char *path = sbr_shard_file_path(m, name);
  if (!path || sbu_sha256_file_hex(path, hex) < 0) {
    fprintf(stderr, "merge: cannot read %s (the shards' %s)\n", path ? path : "?", name);
    return false;
  }
  const char *was = json_object_get_string(json_object_object_get(m, hk));
  if (!was || strcmp(hex, was)) {
    fprintf(stderr, "merge: %s changed since the shards ran (%s differs)\n", path, hk);
    return false;
  }
  return true;
}

/* every program shard sh owns, with its value from the shard's progress, into all: 0, or 2 said */
static int join_shard(const sbr_merge_shard *sh, const sbr_progress_kind *kind, json_object *all) {
  char path[4200];
  snprintf(path, sizeof path, "%s.progress", sh->dir);
  json_object *values = sbr_progress_read(path, kind->field);
  json_object *owned = json_object_object_get(json_object_object_get(sh->manifest, "items"), "programs");
  int rc = 0;
  for (size_t k = 0; json_object_is_type(owned, json_type_array) && k < json_object_array_length(owned) && !rc; k++) {
    const char *h = json_object_get_string(json_object_array_get_idx(owned, k));
    json_object *v = values && h ? json_object_object_get(values, h) : NULL;
    if (!v || !json_object_is_type(v, kind->type)) {
      fprintf(stderr, "merge: shard %d/%d (%s) is unfinished: program %.12s has no %s (run it again to resume)\n",
              sh->index, sh->count, sh->dir, h ? h : "?", kind->what);
      rc = 2;
    } else {
      json_object_object_add(all, h, json_object_get(v));
    }
  }
  json_object_put(values);
  return rc;
}

int sbr_progress_merge(const sbr_merge_shard *sh, size_t n, const char *out, const sbr_progress_kind *kind) {
  json_object *m = sh[0].manifest;
  for (size_t i = 0; kind->files[i]; i++)
    if (!unchanged(m, kind->files[i])) return 2;
  json_object *all = json_object_new_object();
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) rc = join_shard(&sh[i], kind, all);
  char progress[4200];
  snprintf(progress, sizeof progress, "%s.progress", out);
  if (!rc && sbr_progress_write(progress, kind->benchmark, kind->field, all, JSON_C_TO_STRING_PRETTY) < 0) {
    fprintf(stderr, "merge: cannot write %s\n", progress);
    rc = 2;
  }
  json_object_put(all);
  if (rc) return rc;
  sbc_ctx ctx;
  sbc_ctx_init(&ctx);
  ctx.autostart = false; /* every value is known: no daemon */
  rc = kind->score(&ctx, m, out);
  if (rc) unlink(progress);
  return rc ? 2 : 0;
}
