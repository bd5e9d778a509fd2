/* surgebox merge: the shards of one run into one output (merge_cli.c);
 * each command's own merge beside its driver (surge/regen_merge.c). */
#ifndef SURGEBOX_MERGE_H
#define SURGEBOX_MERGE_H
#include "command.h"

#include <json-c/json.h>
#include <stddef.h>

typedef struct {
  const char *dir;       /* the shard's --out */
  json_object *manifest; /* its shard.json */
  int index, count;
} sbr_merge_shard;

int sbr_merge_main(const sbc_ctx *ctx, int argc, char **argv);

/* Shards already checked to be one run, complete and disjoint. Writes out
 * (and summary when not NULL); 0, or 2 with a message. */
int sbs_regen_merge(const sbr_merge_shard *sh, size_t n, const char *out, const char *summary);

/* One <subset>.json of every shard's --out joined: each item the shard's
 * that owns it (manifest "items": {"<subset>": [indices]}, each complete),
 * the rest shard 0's. NULL with a message (unreadable, unfinished). Used by
 * regen's merge and verify --benchmark surge's (surge/verify_shard.c). */
json_object *sbs_regen_merge_subset(const sbr_merge_shard *sh, size_t n, const char *name);

/* verify --benchmark surge shards: the scored report (verify --json's) into the file out. */
int sbs_vs_merge(const sbr_merge_shard *sh, size_t n, const char *out);

/* Batch shards: every answer, in input order, into the file out. */
int sbr_batch_merge(const sbr_merge_shard *sh, size_t n, const char *out);

#endif
