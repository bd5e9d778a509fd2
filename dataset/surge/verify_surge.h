/* verify --benchmark surge, internals (eval_execute.c the command,
 * verify_items.c which items run, which are excluded, and the report,
 * verify_shard.c --shard I/N and the merge of its shards). */
#ifndef SURGEBOX_VERIFY_SURGE_H
#define SURGEBOX_VERIFY_SURGE_H
#include "command.h"
#include "eval_run.h"
#include "regen.h"
#include "shard.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct {
  const char *data, *preds, *out, *items, *by;
  const char *subsets; /* --subset LIST as given (NULL: all) */
  int jobs;        /* 0: the CPUs */
  sbr_shard shard; /* count 0: not sharded */
  bool json, fl_extract, subsets_given, strict;
  bool via_eval; /* `surgebox eval --execute` (messages name eval) */
  bool want[SBS_N_SUBSETS];
} sbs_vs_opts;

/* Per subset, by item index (the position in <subset>.json). */
typedef struct {
  size_t len[SBS_N_SUBSETS];
  unsigned char *needed[SBS_N_SUBSETS];   /* has a prediction */
  unsigned char *to_run[SBS_N_SUBSETS];   /* needed and not yet complete in --out */
  unsigned char *excluded[SBS_N_SUBSETS]; /* needed, but no reference regenerated here */
  size_t n_needed[SBS_N_SUBSETS], n_to_run[SBS_N_SUBSETS];
  size_t total_needed, reused, excluded_total;
  size_t ran; /* handed to regen in this run (missing toolchains are recorded, not run) */
  json_object *reasons; /* {"missing_toolchain:lean4": n, "timeout": n, ...} */
} sbs_vs_items;

/* The items that have a prediction in `check` (predictions matched to the data). */
int sbs_vs_items_init(sbs_vs_items *it, const sbe_run *check, json_object *const *published);
/* What --out DIR already holds: 0, or -1 when it holds another dataset. */
int sbs_vs_items_resume(sbs_vs_items *it, const char *out, json_object *const *published);
/* Runs the items to run (regen's run with --only, per subset, on d's
 * connection) into out: 0, 2 on a failure, 130 when interrupted. Failures
 * of surgebox are counted in d (their items are excluded from the scores). */
int sbs_vs_regenerate(sbr_driver *d, const sbs_vs_opts *o, sbs_vs_items *it, const char *out);
/* Reads out's records of the predicted items; marks those not regenerated. */
int sbs_vs_exclusions(sbs_vs_items *it, const char *out);
void sbs_vs_report_json(const sbs_vs_items *it, json_object *root, const char *out);
void sbs_vs_report_text(const sbs_vs_items *it, FILE *f, const char *out);
void sbs_vs_items_free(sbs_vs_items *it);
void sbs_vs_remove_dir(const char *dir); /* a private --out: its <subset>.json, then itself */
/* verify --benchmark surge (= eval --execute): the command line (parsed into
 * sbs_vs_opts, then run), and the run. */
int sbs_verify_surge_cmdline(const sbc_ctx *ctx, int argc, char **argv);
int sbs_verify_surge_run(const sbc_ctx *ctx, const sbs_vs_opts *o);

/* Scores the predictions against dir, where every predicted item is already
 * regenerated (nothing runs), writing what verify prints to f (the merge of
 * shards). 0, or 2 with a message. */
int sbs_vs_score_dir(const sbs_vs_opts *o, const char *dir, FILE *f);

/* --shard: keeps in `it` only this shard's predicted items (the partition
 * of regen --shard I/N over every item of the loaded subsets, so that it does
 * not depend on which items a prediction file covers), gives out a
 * <subset>.json for every predicted subset, and writes out/shard.json (or
 * refuses one of another run); the toolchains' identity from d (connected
 * here). 0, or -1 with a message. */
int sbs_vs_shard_begin(sbr_driver *d, const sbs_vs_opts *o, sbs_vs_items *it, json_object *const *published,
                       const char *out);
#endif
