/* surgebox batch --shard I/N and the merge of such shards.
 *
 * An item is what batch answers once: its key is its id's JSON text (a
 * line's number when it has no id; "line:N" for a line that cannot run),
 * the partition balances by count. A shard's OUT holds its answers and
 * OUT.shard.json its ids; the merge writes every answer in input order
 * (what `batch --order input` writes on one machine). */
#include "atomic_write.h"
#include "cleanup.h"
#include "batch.h"
#include "merge.h"
#include "shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sbr_batch_shard_plan(const sbr_shard *sh, const char *in, const char *out, const char *const *keys, size_t n,
                         bool *mine) {
  uint64_t *k = calloc(n + 1, sizeof *k);
  for (size_t i = 0; i < n; i++) k[i] = sbr_shard_key("batch", 5, keys[i], strlen(keys[i]));
  json_object *m = sbr_shard_manifest_new("batch", sh);
  sbr_shard_add_file(m, "input", in);
  int rc = sbr_shard_finish_by_count(sh, m, "ids", k, keys, n, mine, out, "batch");
  free(k);
  return rc;
}

typedef struct {
  int64_t line;
  char *text;
} answer;

static int by_line(const void *a, const void *b) {
  int64_t x = ((const answer *)a)->line, y = ((const answer *)b)->line;
  return (x > y) - (x < y);
}

static int by_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* the key an answer is for (as batch_cli.c keys its items) */
static char *answer_key(json_object *a, int64_t line) {
  json_object *id = json_object_object_get(a, "id");
  char buf[40];
  if (!id) {
    snprintf(buf, sizeof buf, "line:%lld", (long long)line);
    return strdup(buf);
  }
  return strdup(json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* shard i's answers appended to *all; -1 with a message */
static int read_shard(const sbr_merge_shard *s, answer **all, size_t *n, size_t *cap) {
  json_object *ids = json_object_object_get(json_object_object_get(s->manifest, "items"), "ids");
  size_t n_ids = json_object_array_length(ids), found = 0;
  SBU_AUTOFREE const char **owned = calloc(n_ids + 1, sizeof *owned);
  SBU_AUTOFREE bool *seen = calloc(n_ids + 1, sizeof *seen);
  if (!owned || !seen) {
    fprintf(stderr, "merge: out of memory reading shard %d/%d\n", s->index, s->count);
    return -1;
  }
  for (size_t k = 0; k < n_ids; k++) owned[k] = json_object_get_string(json_object_array_get_idx(ids, k));
  qsort(owned, n_ids, sizeof *owned, by_str);
  SBU_AUTOFCLOSE FILE *f = fopen(s->dir, "r");
  SBU_AUTOFREE char *buf = NULL;
  size_t bufcap = 0;
  int rc = f ? 0 : -1;
  if (!f) fprintf(stderr, "merge: cannot read %s (shard %d/%d)\n", s->dir, s->index, s->count);
  while (!rc && getline(&buf, &bufcap, f) > 0) {
    SBU_AUTOPUT json_object *a = json_tokener_parse(buf);
    json_object *l;
    if (!a || !json_object_object_get_ex(a, "line", &l)) continue; /* a partial last line: unfinished */
    int64_t line = json_object_get_int64(l);
    SBU_AUTOFREE char *key = answer_key(a, line);
    const char **hit = bsearch(&key, owned, n_ids, sizeof *owned, by_str);
    if (!hit) {
      fprintf(stderr, "merge: %s answers %s, which is not shard %d/%d's\n", s->dir, key, s->index, s->count);
      rc = -1;
      break;
    }
    if (seen[hit - owned]) continue;
    seen[hit - owned] = true;
    found++;
    if (*n == *cap) *all = realloc(*all, (*cap = *cap ? *cap * 2 : 256) * sizeof **all);
    size_t len = strlen(buf);
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
    (*all)[(*n)++] = (answer){line, strdup(buf)};
  }
  if (!rc && found < n_ids) {
    fprintf(stderr, "merge: shard %d/%d (%s) is unfinished: %zu of its %zu items have no answer (run it again to resume)\n",
            s->index, s->count, s->dir, n_ids - found, n_ids);
    rc = -1;
  }
  return rc;
}

int sbr_batch_merge(const sbr_merge_shard *sh, size_t n, const char *out) {
  answer *all = NULL;
  size_t na = 0, cap = 0;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) rc = read_shard(&sh[i], &all, &na, &cap);
  if (!rc) {
    qsort(all, na, sizeof *all, by_line);
    sbu_atomic a;
    FILE *f = sbu_atomic_open(&a, out, 0666) == 0 ? a.f : NULL;
    for (size_t k = 0; f && k < na; k++) fprintf(f, "%s\n", all[k].text);
    if (!f || sbu_atomic_commit(&a) < 0) {
      fprintf(stderr, "merge: cannot write %s\n", out);
      rc = -1;
    } else {
      printf("%zu shards merged: %zu answers in input order in %s\n", n, na, out);
    }
  }
  for (size_t k = 0; k < na; k++) free(all[k].text);
  free(all);
  return rc ? 2 : 0;
}
