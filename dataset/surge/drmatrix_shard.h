/* surgebox dr-matrix --shard I/N and the merge of such shards
 * (drmatrix_shard.c). */
#ifndef SURGEBOX_DRMATRIX_SHARD_H
#define SURGEBOX_DRMATRIX_SHARD_H

#include "command.h"
#include "merge.h"
#include "shard.h"

#include <stdbool.h>

typedef struct {
  const char *dr_json, *compilers, *stds, *opts, *only, *out;
} sbs_drmatrix_plan_args;

/* surgebox dr-matrix's options (drmatrix.c). */
typedef struct {
  const char *data, *out, *only, *dump;
  const char *compilers, *stds, *opts; /* comma-separated lists */
  int jobs;                            /* 0: the CPUs */
  sbr_shard shard;                     /* count 0: not sharded */
  bool offline;                        /* every cell must be in --out already: no daemon (the merge) */
} sbs_drmatrix_opts;
/* The defaults: g++,clang++ x 03,11,14,17 x O0,O1,O2,O3,Os. */
void sbs_drmatrix_opts_init(sbs_drmatrix_opts *o);
/* The run on the driver, then the report on stdout. 0, 1, 2 (also when a
 * failure of surgebox met any cell: no line written for it), 130. */
int sbs_drmatrix_run(const sbc_ctx *ctx, const sbs_drmatrix_opts *o);

/* The unit is the cell (snippet, configuration): mine[s * n_cfg + c] says
 * whether cell (s, c) is this shard's (configs[c] NULL: nobody's, it cannot
 * run here); <out>.shard.json written (or an
 * existing one checked for a resume). 0, or -1 with a message. */
int sbs_drmatrix_shard_plan(const sbr_shard *sh, const sbs_drmatrix_plan_args *run, json_object *toolchains,
                            const char *const *questions, size_t n_snips, const char *const *configs, size_t n_cfg,
                            bool *mine);

/* Shards already checked to be one run, complete and disjoint: every
 * owned cell's line into the file out, in matrix order, then the report a
 * single run prints (nothing runs). 0, or 2 with a message. */
int sbs_drmatrix_merge(const sbr_merge_shard *sh, size_t n, const char *out);

#endif
