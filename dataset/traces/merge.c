/* surgebox merge of trace-dataset shards (checked by merge_cli.c to be one
 * run, complete and disjoint): each item's record and trace copied from the
 * shard that owns it into OUT, which then holds what one machine would have
 * written (index.jsonl in input order, summary.json). */
#include "traces.h"
#include "atomic_write.h"
#include "sha256.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int copy_file(const char *from, const char *to) {
  FILE *f = fopen(from, "rb");
  if (!f) return -1;
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) fwrite(chunk, 1, got, m);
  bool err = ferror(f);
  fclose(f);
  fclose(m);
  int rc = err ? -1 : sbu_write_atomic(to, buf, len, 0644);
  free(buf);
  return rc;
}

/* the items file the shards read: the same bytes still (its SHA-256) */
static int items_of(json_object *m, sbtd_items *items) {
  const char *which = json_object_object_get_ex(m, "programs_path", NULL) ? "programs" : "data";
  char pk[32], hk[32], hex[65], err[1024];
  snprintf(pk, sizeof pk, "%s_path", which);
  snprintf(hk, sizeof hk, "%s_sha256", which);
  const char *path = json_object_get_string(json_object_object_get(m, pk)),
             *want = json_object_get_string(json_object_object_get(m, hk));
  if (!path || !want || sbu_sha256_file_hex(path, hex) < 0 || strcmp(hex, want)) {
    fprintf(stderr, "merge: %s (the shards' %s) is unreadable or changed since they ran\n", path ? path : "?", which);
    return -1;
  }
  const char *samples = json_object_get_string(json_object_object_get(m, "samples"));
  long limit = (long)json_object_get_int64(json_object_object_get(m, "limit"));
  int rc = strcmp(which, "programs") ? sbtd_cruxeval_load(path, samples, limit, items, err, sizeof err)
                                     : sbtd_programs_load(path, items, err, sizeof err);
  if (rc < 0) fprintf(stderr, "merge: %s\n", err);
  return rc;
}

int sbtd_merge(const sbr_merge_shard *sh, size_t n, const char *out) {
  sbtd_items items;
  if (items_of(sh[0].manifest, &items) < 0) return 2;
  char p[4400];
  int rc = 0;
  for (size_t k = 0; k < 3 && !rc; k++) {
    snprintf(p, sizeof p, "%s%s", out, k == 0 ? "" : k == 1 ? "/traces" : "/items");
    if (mkdir(p, 0755) < 0 && errno != EEXIST) fprintf(stderr, "merge: cannot create %s: %s\n", p, strerror(errno)), rc = 2;
  }
  json_object *all = json_object_new_array();
  for (size_t i = 0; i < items.n && !rc; i++) {
    const char *id = items.v[i].id, *dir = NULL;
    for (size_t s = 0; s < n && !dir; s++) {
      json_object *owned = json_object_object_get(json_object_object_get(sh[s].manifest, "items"), "items");
      for (size_t j = 0; j < json_object_array_length(owned) && !dir; j++)
        if (!strcmp(json_object_get_string(json_object_array_get_idx(owned, j)), id)) dir = sh[s].dir;
    }
    char from[4400], to[4400];
    snprintf(from, sizeof from, "%s/items/%s.json", dir ? dir : "?", id);
    json_object *rec = dir ? json_object_from_file(from) : NULL, *ts;
    const char *sha = rec ? json_object_get_string(json_object_object_get(rec, "program_sha256")) : NULL;
    if (!sha || strcmp(sha, items.v[i].sha)) {
      fprintf(stderr, "merge: %s is unfinished: item %s was not run (run that shard again to resume)\n", dir ? dir : "no shard", id);
      json_object_put(rec);
      rc = 2;
      break;
    }
    snprintf(to, sizeof to, "%s/items/%s.json", out, id);
    int c = copy_file(from, to);
    bool traced = json_object_object_get_ex(rec, "trace_status", &ts) && json_object_is_type(ts, json_type_string);
    snprintf(from, sizeof from, "%s/traces/%s.jsonl", dir, id);
    snprintf(to, sizeof to, "%s/traces/%s.jsonl", out, id);
    if (c < 0 || (traced && copy_file(from, to) < 0)) {
      fprintf(stderr, "merge: cannot copy %s's files from %s to %s\n", id, dir, out);
      rc = 2;
    }
    json_object_array_add(all, rec);
  }
  if (!rc) {
    snprintf(p, sizeof p, "%s/index.jsonl", out);
    sbu_atomic a;
    if (sbu_atomic_open(&a, p, 0644) < 0) rc = 2;
    for (size_t i = 0; !rc && i < json_object_array_length(all); i++)
      fprintf(a.f, "%s\n", json_object_to_json_string_ext(json_object_array_get_idx(all, i), JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    if (!rc && sbu_atomic_commit(&a) < 0) rc = 2;
    if (rc) fprintf(stderr, "merge: cannot write %s\n", p);
  }
  /* what the shards did not trace is said by the summary; the merge itself was done */
  if (!rc) sbtd_summarize(out, all, 0, "merge");
  json_object_put(all);
  sbtd_items_free(&items);
  return rc;
}
