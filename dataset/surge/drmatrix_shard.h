/* surgebox dr-matrix --shard I/N and the merge of such shards
 * (drmatrix_shard.c). */
#ifndef SURGEBOX_DRMATRIX_SHARD_H
#define SURGEBOX_DRMATRIX_SHARD_H

#include "merge.h"
#include "shard.h"

#include <stdbool.h>

typedef struct {
  const char *dr_json, *compilers, *stds, *opts, *only, *out;
} sbr_drmatrix_run;

/* The unit is the cell (snippet, configuration): mine[s * n_cfg + c] says
 * whether cell (s, c) is this shard's (configs[c] NULL: nobody's, it cannot
 * run here); <out>.shard.json written (or an
 * existing one checked for a resume). 0, or -1 with a message. */
int sbr_drmatrix_shard_plan(const sbr_shard *sh, const sbr_drmatrix_run *run, json_object *toolchains,
                            const char *const *questions, size_t n_snips, const char *const *configs, size_t n_cfg,
                            bool *mine);

/* Shards already checked to be one run, complete and disjoint: every
 * owned cell's line into the file out, in matrix order, then the report a
 * single run prints (nothing runs). 0, or 2 with a message. */
int sbr_drmatrix_merge(const sbr_merge_shard *sh, size_t n, const char *out);

#endif
