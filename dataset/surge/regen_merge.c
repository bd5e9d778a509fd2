/* surgebox merge of regen shards: each subset's items taken from the shard
 * that owns them (the others keep the published item, as a run that did
 * not select them would), then the summary and the fidelity table. */
#include "fidelity.h"
#include "fs_tree.h"
#include "merge.h"
#include "regen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool complete(json_object *item) {
  json_object *exec, *c;
  return json_object_object_get_ex(item, "exec", &exec) && json_object_object_get_ex(exec, "complete", &c) &&
         json_object_get_boolean(c);
}

json_object *sbs_regen_merge_subset(const sbr_merge_shard *sh, size_t n, const char *name) {
  json_object **arr = calloc(n, sizeof *arr), *merged = NULL;
  size_t len = 0;
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", sh[i].dir, name);
    arr[i] = json_object_from_file(path);
    if (!arr[i] || !json_object_is_type(arr[i], json_type_array)) {
      fprintf(stderr, "merge: cannot read %s (shard %d/%d): %s\n", path, sh[i].index, sh[i].count,
              arr[i] ? "not a list" : json_util_get_last_err());
      ok = false;
    } else if (i == 0) {
      len = json_object_array_length(arr[0]);
    } else if (json_object_array_length(arr[i]) != len) {
      fprintf(stderr, "merge: %s has %zu items, %s/%s.json %zu\n", path, json_object_array_length(arr[i]), sh[0].dir, name,
              len);
      ok = false;
    }
  }
  if (ok) merged = json_tokener_parse(json_object_to_json_string_ext(arr[0], JSON_C_TO_STRING_PLAIN));
  for (size_t i = 0; i < n && ok; i++) {
    json_object *owned = json_object_object_get(json_object_object_get(sh[i].manifest, "items"), name);
    for (size_t k = 0; k < json_object_array_length(owned) && ok; k++) {
      int64_t idx = json_object_get_int64(json_object_array_get_idx(owned, k));
      json_object *it = idx >= 0 && (size_t)idx < len ? json_object_array_get_idx(arr[i], (size_t)idx) : NULL;
      if (!it || !complete(it)) {
        fprintf(stderr, "merge: shard %d/%d (%s) is unfinished: %s item %lld has no result (run it again to resume)\n",
                sh[i].index, sh[i].count, sh[i].dir, name, (long long)idx);
        ok = false;
      } else {
        json_object_array_put_idx(merged, (size_t)idx, json_object_get(it));
      }
    }
  }
  for (size_t i = 0; i < n; i++)
    if (arr[i]) json_object_put(arr[i]);
  free(arr);
  if (!ok && merged) {
    json_object_put(merged);
    merged = NULL;
  }
  return merged;
}

int sbs_regen_merge(const sbr_merge_shard *sh, size_t n, const char *out, const char *summary_path) {
  json_object *names = json_object_object_get(sh[0].manifest, "subsets");
  sbs_subset subsets[SBS_N_SUBSETS];
  json_object *merged[SBS_N_SUBSETS] = {0};
  size_t ns = 0;
  int rc = 0;
  for (size_t k = 0; k < json_object_array_length(names) && !rc; k++) {
    const char *name = json_object_get_string(json_object_array_get_idx(names, k));
    if (ns == SBS_N_SUBSETS || !name || sbs_subset_parse(name, &subsets[ns]) < 0) {
      fprintf(stderr, "merge: %s/shard.json: unknown subset %s\n", sh[0].dir, name ? name : "?");
      rc = 2;
    } else if (!(merged[ns++] = sbs_regen_merge_subset(sh, n, name))) {
      rc = 2;
    }
  }
  if (!rc && sb_mkdir_p(out, 0755) < 0) {
    fprintf(stderr, "merge: cannot create %s: %s\n", out, strerror(errno));
    rc = 2;
  }
  for (size_t s = 0; s < ns && !rc; s++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", out, sbs_subset_name(subsets[s]));
    if (sbr_write_json_atomic(path, merged[s]) < 0) {
      fprintf(stderr, "merge: cannot write %s: %s\n", path, strerror(errno));
      rc = 2;
    }
  }
  if (!rc) {
    json_object *summary = sbs_regen_summary(merged, subsets, ns, NULL);
    sbs_print_table(summary, stdout);
    printf("\n%zu shards merged into %s\n", n, out);
    if (summary_path && sbr_write_json_atomic(summary_path, summary) < 0) {
      fprintf(stderr, "merge: cannot write %s: %s\n", summary_path, strerror(errno));
      rc = 2;
    }
    json_object_put(summary);
  }
  for (size_t s = 0; s < ns; s++)
    if (merged[s]) json_object_put(merged[s]);
  return rc;
}
