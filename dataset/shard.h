/* Shards: one part of a benchmark run, for a scheduler to run on its own
 * machine (prefix sbr_shard).
 *
 * The partition is deterministic: every item has a key (a hash of what the
 * item is, never of where it sits) and an expected cost; items sorted by
 * (cost descending, key) go one by one to the least loaded shard (greedy
 * longest-processing-time). Equal costs make it a balance by count. Every
 * machine given the same items and N computes the same assignment. */
#ifndef SURGEBOX_SHARD_H
#define SURGEBOX_SHARD_H

#include "cliopt.h"

#include <json-c/json.h>

#include "sha256.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  unsigned index, count; /* count 0: not sharded */
} sbr_shard;

/* "I/N" (0 <= I < N), or "auto": SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN
 * (divided by SLURM_ARRAY_TASK_STEP) of SLURM_ARRAY_TASK_COUNT, else
 * Kubernetes' JOB_COMPLETION_INDEX of `shards` (from --shards N; 0: the
 * SURGEBOX_SHARDS variable). 0, or -1 with err. */
int sbr_shard_parse(const char *arg, unsigned shards, sbr_shard *out, char *err, size_t err_len);

/* The key of an item: the first 8 bytes of SHA-256 over the bytes given
 * (its kind and content). */
uint64_t sbr_shard_key(const void *a, size_t a_len, const void *b, size_t b_len);

typedef struct {
  uint64_t key;
  double cost; /* expected seconds; any positive scale */
} sbr_shard_item;

/* owner[i] = the shard of items[i], for `count` shards. load (optional,
 * `count` entries) receives each shard's expected cost. */
void sbr_shard_assign(const sbr_shard_item *items, size_t n, unsigned count, unsigned *owner, double *load);

/* hashes of a shard's inputs: sbu_sha256_hex, sbu_sha256_file_hex (common/sha256.h) */

/* The shard group (--shard I/N|auto, --shards N), declared once: put it in
 * a shardable command's sbo_cmd.groups and hand its keys to
 * sbr_shard_apply. */
enum { SBR_O_SHARD = 0x7200, SBR_O_SHARDS };
extern const sbo_opt sbr_shard_opts[];
typedef struct {
  const char *shard, *shards; /* as given, NULL when not */
} sbr_shard_args;
/* Keep one of sbr_shard_opts; false if key is not one of them. */
bool sbr_shard_apply(sbr_shard_args *a, int key, const char *val);

/* "--shard I/N" as the option parsers take it: fills *out from the
 * arguments (shard may be NULL: not sharded). Prints the error. 0 or -1. */
int sbr_shard_from_args(const char *prog, const char *shard, const char *shards, sbr_shard *out);

/* Writes a shard's manifest m to path; an existing one must be the same
 * but for *_path fields (a resumed shard), else -1 with a message. */
int sbr_shard_write_manifest(const char *path, json_object *m, const char *prog);

/* m["<name>_sha256"] = the file's SHA-256, m["<name>_path"] its absolute path */
void sbr_shard_add_file(json_object *m, const char *name, const char *path);

/* {"surgebox_shard": 1, "command", "shard", "shards"}: add the run's own
 * fields, then sbr_shard_finish_by_count. */
/* m["<name>_path"]: where a file sbr_shard_add_file hashed was (NULL: none) */
const char *sbr_shard_file_path(json_object *m, const char *name);

json_object *sbr_shard_manifest_new(const char *command, const sbr_shard *sh);
/* Items of equal cost: mine[i] = item i (keys[i], named names[i]) is this
 * shard's; m["items"][part] = the names of this shard's items; m (taken
 * over) written to <out>.shard.json. 0, or -1 with a message. */
int sbr_shard_finish_by_count(const sbr_shard *sh, json_object *m, const char *part, const uint64_t *keys,
                              const char *const *names, size_t n, bool *mine, const char *out, const char *prog);
/* The same, the manifest written to path (a directory's OUT/shard.json). */
int sbr_shard_finish_by_count_at(const sbr_shard *sh, json_object *m, const char *part, const uint64_t *keys,
                                 const char *const *names, size_t n, bool *mine, const char *path, const char *prog);

#endif
