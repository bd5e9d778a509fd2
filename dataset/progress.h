/* A resumable verify run's progress (cruxeval, tests; prefix sbr_progress):
 * OUT.progress is {"benchmark": NAME, FIELD: {program's SHA-256: what it
 * gave}} (cruxeval's verdicts, tests' records), written as programs
 * finish, read back to resume, joined by the merge of shards. The unit is
 * the distinct program: keyed by its hash, shards balanced by count. */
#ifndef SURGEBOX_PROGRESS_H
#define SURGEBOX_PROGRESS_H

#include "merge.h"
#include "shard.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* {"benchmark", field: values} to path, atomically, as json-c's flags say
 * (values is not taken over). 0, or -1. */
int sbr_progress_write(const char *path, const char *benchmark, const char *field, json_object *values, int flags);
/* A run's progress as it goes: values ({hash: value}, taken over) written
 * plainly to path, a failure said ("verify: cannot write PATH");
 * *saved = now. */
void sbr_progress_save(const char *path, const char *benchmark, const char *field, json_object *values, time_t *saved);
/* path's field object (a reference of the caller's), or NULL: no readable
 * file, or no such object in it. */
json_object *sbr_progress_read(const char *path, const char *field);

/* A run's programs are structs whose first member is the program's hex
 * SHA-256 (char hash[65]): sorted by it (qsort with sbr_progress_by_hash),
 * one found by it in n of size bytes each (NULL: none). */
int sbr_progress_by_hash(const void *a, const void *b);
void *sbr_progress_find(void *progs, size_t n, size_t size, const char *hash);
/* Resume a run: each value of path's field (sbr_progress_read) that is of
 * type is offered to take(arg, its hash, it), true when kept (a reference
 * of take's own); then "verify: N WHAT from an earlier run (PATH)". */
typedef bool (*sbr_progress_take_fn)(void *arg, const char *hash, json_object *value);
void sbr_progress_resume(const char *path, const char *field, json_type type, const char *what, sbr_progress_take_fn take,
                         void *arg);

/* A shard's manifest m (sbr_shard_manifest_new and the run's own fields,
 * taken over): mine[i] = program i (hex SHA-256 hashes[i]) is this shard's,
 * the manifest written to <out>.shard.json. 0, or -1 with a message. */
int sbr_progress_shard_plan(const sbr_shard *sh, json_object *m, const char *const *hashes, size_t n, bool *mine,
                            const char *out);

/* A benchmark's scoring of a merged run: the single run's own, with every
 * program's value known (ctx starts no daemon): 0, or its exit status. */
typedef int (*sbr_progress_score_fn)(const sbc_ctx *ctx, json_object *manifest, const char *out);
/* What a benchmark's progress holds and how its shards merge: its name,
 * the field, the json type of a program's value, what a message calls it
 * ("verdict"), the files its shards hashed (NULL-terminated names of
 * sbr_shard_add_file) and its scoring. */
typedef struct {
  const char *benchmark, *field;
  json_type type;
  const char *what;
  const char *const *files;
  sbr_progress_score_fn score;
} sbr_progress_kind;
/* The merge of verify shards: the files the shards hashed unchanged, each
 * program's value from the shard that owns it joined into <out>.progress,
 * then the scoring: 0, or 2 with a message (<out>.progress removed when
 * the scoring failed). */
int sbr_progress_merge(const sbr_merge_shard *sh, size_t n, const char *out, const sbr_progress_kind *kind);

#endif
