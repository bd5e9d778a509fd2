/* surgebox trace-dataset: programs traced through the daemon as ground
 * truth (issue 24), and surgebox verify --benchmark traces, which scores
 * predictions against them (prefix sbtd_). A folder of its own on the
 * driver, like a benchmark: items (programs.c: a JSON Lines file of
 * programs, or CRUXEval's reference checks), the run (run.c: resume, shard,
 * pump, one trace and one index record per item, the summary), its merge
 * (merge.c) and the scorer's command (verify.c: the Python client's
 * surgebox.trace_verify). docs/cli.md "trace-dataset" and docs/verify.md
 * "traces" say what the files hold. */
#ifndef SURGEBOX_TRACES_H
#define SURGEBOX_TRACES_H
#include "command.h"
#include "merge.h"
#include "shard.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* One program to trace. */
typedef struct {
  char *id;          /* a file name: [A-Za-z0-9._-], not starting with '.', at most 128 bytes */
  json_object *req;  /* the exec request, "trace" not yet added (owned) */
  json_object *info; /* what the index record repeats: toolchain, entry, files, args, stdin (owned) */
  char sha[65];      /* SHA-256 of the request's canonical text: an item changed since OUT was written reruns */
} sbtd_item;

typedef struct {
  sbtd_item *v;
  size_t n;
} sbtd_items;

/* ---- programs.c ---- */
/* --programs FILE: JSON Lines, one program a line (docs/cli.md). 0, or -1
 * with err naming the line and the field. */
int sbtd_programs_load(const char *path, sbtd_items *items, char *err, size_t err_len);
/* --benchmark cruxeval: each sample's reference check (the function, then
 * `assert <output> == f(<input>)`), as verify runs it; --samples/--limit as
 * verify's. 0, or -1 with err. */
int sbtd_cruxeval_load(const char *data, const char *samples, long limit, sbtd_items *items, char *err,
                       size_t err_len);
void sbtd_items_free(sbtd_items *items);

/* ---- run.c ---- */
typedef struct {
  const char *benchmark, *programs, *data, *out, *samples, *cache_dir, *dump;
  long limit;
  int jobs;
  sbr_shard shard;
  json_object *trace; /* the trace option's limits (owned by the caller); "check" is always added */
} sbtd_opts;
/* 0 every item traced complete (truncated items said, not failed), 1 bad
 * input, 2 anything not done (no trace, tampered, crashed, a traced run
 * whose stdout or exit differ, a failure of surgebox), 130 interrupted. */
int sbtd_run(const sbc_ctx *ctx, const sbtd_opts *o);
/* The summary of OUT's records (index order) into OUT/summary.json, the
 * lines on stderr; the exit status sbtd_run gives for them. */
int sbtd_summarize(const char *out, json_object *records, size_t internal_errors, const char *label);

/* ---- cli.c ---- */
int sbtd_main(const sbc_ctx *ctx, int argc, char **argv);

/* ---- merge.c ---- */
int sbtd_merge(const sbr_merge_shard *sh, size_t n, const char *out);

/* ---- verify.c ---- */
int sbtd_verify_cmdline(const sbc_ctx *ctx, int argc, char **argv);
#endif
