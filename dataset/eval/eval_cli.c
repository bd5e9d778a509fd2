/* `surgebox eval` argument handling and flow. */
#include "eval_cli.h"
#include "cliopt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval_run.h"

/* What the options set (--execute's are eval_execute.c's). */
typedef struct {
  const char *data, *preds, *items, *by;
  bool json, strict, fl_extract, refs_given;
  const char **refs; /* argc + 1 entries */
  int nrefs;
} eval_args;

static int add_reference(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)p, (void)o;
  eval_args *a = opts;
  a->refs[a->nrefs++] = val;
  a->refs_given = true;
  return 0;
}
/* --execute, --subset, --jobs: eval --execute's (cli/surgebox.c sends it there) */
static int not_here(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)o, (void)val, (void)opts;
  return sbo_usage_error(p, "--execute, --subset and --jobs go together");
}

#define AT(F) SBO_AT(eval_args, F)
const sbo_opt sbe_eval_opts[] = {
    {"references", SBE_O_REFS, "FILE...", "SURGE dataset files (lists of items; subset from each item's category)", SBO_CALL,
     .call = add_reference},
    {"data", SBE_O_DATA, "DIR", "DIR/ml.json ... DIR/fl.json (with --execute: the data to run)", SBO_STR, AT(data)},
    SBE_SCORING_OPTS(eval_args, SBO_STR),
    {"execute", SBE_O_EXECUTE, NULL, "score against references regenerated right then (runs the items)", SBO_CALL,
     .call = not_here},
    {"subset", SBE_O_SUBSET, "LIST", "with --execute: the subsets to run (default all)", SBO_CALL, .call = not_here},
    {"jobs", SBE_O_JOBS, "N", "with --execute: jobs in flight", SBO_CALL, .call = not_here},
    {"strict", SBE_O_STRICT, NULL, "exit 2 when a prediction line was not scored (unmatched, malformed, duplicate, "
     "excluded: with --execute, an item not regenerated) or nothing was", SBO_FLAG, AT(strict)},
    {NULL, 0, NULL, NULL}};
const sbo_cmd sbe_eval_cmd = {"surgebox eval",
                              "(--references FILE... | --data DIR) --predictions FILE [options]\n"
                              "--execute --data DIR --predictions FILE [--subset LIST] [--jobs N] [options]",
                              "Score LLM predictions with SURGE's metrics (no daemon needed without --execute).",
                              sbe_eval_opts, NULL, NULL, false, NULL};

int sbe_eval_main(const sbc_ctx *ctx, int argc, char **argv) {
  (void)ctx;
  sbe_run run = {0};
  eval_args a = {.refs = calloc((size_t)argc + 1, sizeof *a.refs)};
  if (!a.refs) return 2;
  sbo_parser p;
  int rc = sbo_parse(&p, &sbe_eval_cmd, argc, argv, &a, NULL, NULL);
  /* --references A B C: the files after the first are positionals */
  if (rc == 0 && p.n_pos && !a.refs_given) rc = sbo_usage_error(&p, "unexpected argument '%s'", p.pos[0]);
  else if (rc == 0 && p.dashdash) rc = sbo_usage_error(&p, "unexpected '--'");
  for (int i = 0; rc == 0 && i < p.n_pos; i++) a.refs[a.nrefs++] = p.pos[i];
  sbo_done(&p);
  const char *data = a.data, *preds = a.preds, *items = a.items, *by = a.by, **refs = a.refs;
  int nrefs = a.nrefs, status = rc < 0 ? 0 : rc; /* -1: after --help */
  bool json = a.json, strict = a.strict;
  if (a.fl_extract) run.options |= SBE_SCORE_FL_EXTRACT;
  if (rc != 0) goto out;
  status = 1;
  if ((nrefs == 0) == (data == NULL) || !preds || (items && !*items) || (data && !*data) || !*preds) {
    fprintf(stderr, "surgebox eval: give --references FILE... or --data DIR, and --predictions FILE (see surgebox eval --help)\n");
    goto out;
  }
  if (by && strcmp(by, "language") && strcmp(by, "difficulty") && strcmp(by, "config")) {
    fprintf(stderr, "surgebox eval: --by takes language, difficulty or config (see surgebox eval --help)\n");
    goto out;
  }
  status = 2; /* from here on, a failure is an unreadable input */
  for (int i = 0; i < nrefs; i++)
    if (sbe_refs_load_file(&run.refs, refs[i]) != 0) goto out;
  if (data && sbe_refs_load_dir(&run.refs, data) != 0) goto out;
  if (sbe_run_predictions(&run, preds) != 0) goto out;
  sbe_report_missing(&run, stderr);
  if (items && sbe_write_items(&run, items) != 0) goto out;
  if (json) {
    sbe_print_json(&run, by, stdout);
  } else {
    sbe_print_table(&run, stdout);
    if (by) sbe_print_by(&run, by, stdout);
  }
  status = fflush(stdout) == 0 ? 0 : 2;
  if (!status && strict) status = sbe_strict_status(&run, "eval", stderr);
out:
  free(a.refs);
  sbe_run_free(&run);
  return status;
}
