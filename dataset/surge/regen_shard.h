/* surgebox regen --shard I/N: the SURGE side of shard.h (regen_shard.c). */
#ifndef SURGEBOX_REGEN_SHARD_H
#define SURGEBOX_REGEN_SHARD_H

#include "regen.h"
#include "shard.h"

#include <stdio.h>

double sbs_surge_item_cost(sbs_subset s, json_object *item); /* expected seconds on one core */
uint64_t sbs_surge_item_key(sbs_subset s, json_object *item);

/* mine[s][i]: item i of subsets[s] is this shard's (each mine[s] malloc'd);
 * *owned = {"<subset>": [indices]}; *share = this shard's expected cost
 * over all selected items'. */
int sbs_regen_shard_plan(const sbr_shard *sh, json_object *const *published, const sbs_subset *subsets, size_t n_subsets,
                         const char *only, bool **mine, json_object **owned, double *share);

typedef struct {
  const char *only, *profile;
  int repeat;
  bool inproc, mimic;
} sbs_regen_manifest_opts;

/* The toolchains' identity (name, version, availability of each, in the
 * daemon's order) as SHA-256 hex: shards of one run must agree on it. */
void sbs_toolchains_sha256(json_object *toolchains, char hex[65]);

/* The manifest written to <out>/shard.json (owned: from the plan). */
json_object *sbs_regen_manifest(const sbr_shard *sh, const char *data_dir, const sbs_subset *subsets, size_t n_subsets,
                                const sbs_regen_manifest_opts *o, json_object *toolchains, json_object *owned,
                                double share);

/* An --out that already has a shard.json resumes only the same shard of
 * the same run: 0, or -1 with a message. */
int sbs_regen_shard_check_resume(const char *path, json_object *manifest);

/* regen --plan: every shard's item count and expected cost, and the largest
 * shard's share of the total against the ideal 1/N; as_json: one JSON
 * document that also names each shard's items (bench/shards.sh sums
 * measured item costs with it). */
int sbs_regen_shard_print_plan(unsigned count, json_object *const *published, const sbs_subset *subsets,
                               size_t n_subsets, const char *only, bool as_json, FILE *f);

#endif
