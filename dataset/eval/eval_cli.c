/* `surgebox eval` argument handling and flow. */
#include "eval_cli.h"
#include "cliopt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval_run.h"

const sbo_opt sbe_eval_opts[] = {
    {"references", SBE_O_REFS, "FILE...", "SURGE dataset files (lists of items; subset from each item's category)"},
    {"data", SBE_O_DATA, "DIR", "DIR/ml.json ... DIR/fl.json (with --execute: the data to run)"},
    {"predictions", SBE_O_PREDS, "FILE", "JSON Lines {\"subset\",\"index\"|\"question\",\"model\"?,\"prediction\"}, "
     "or SURGE's layout (items with one extra key per model)"},
    {"items", SBE_O_ITEMS, "FILE", "per-item scores as JSON Lines {\"subset\",\"index\",\"model\",\"score\"}"},
    {"json", SBE_O_JSON, NULL, "aggregate as JSON instead of a table"},
    {"by", SBE_O_BY, "KEY", "breakdown: language (ML/CL/BG), difficulty (CL), config (DR)"},
    {"fl-extract", SBE_O_FL, NULL, "apply SURGE's extract_code() to FL predictions (not the published scoring)"},
    {"execute", SBE_O_EXECUTE, NULL, "score against references regenerated right then (runs the items)"},
    {"subset", SBE_O_SUBSET, "LIST", "with --execute: the subsets to run (default all)"},
    {"jobs", SBE_O_JOBS, "N", "with --execute: jobs in flight"},
    {"strict", SBE_O_STRICT, NULL, "exit 2 when a prediction line was not scored (unmatched, malformed, duplicate, "
     "excluded: with --execute, an item not regenerated) or nothing was"},
    {NULL, 0, NULL, NULL}};
const sbo_cmd sbe_eval_cmd = {"surgebox eval",
                              "(--references FILE... | --data DIR) --predictions FILE [options]\n"
                              "--execute --data DIR --predictions FILE [--subset LIST] [--jobs N] [options]",
                              "Score LLM predictions with SURGE's metrics (no daemon needed without --execute).",
                              sbe_eval_opts, NULL, NULL, false, NULL};

int sbe_eval_main(const sbc_ctx *ctx, int argc, char **argv) {
  sbe_run run = {0};
  const char *data = NULL, *preds = NULL, *items = NULL, *by = NULL;
  int json = 0, strict = 0, nrefs = 0, status = 1; /* usage error until the arguments are good */
  const char **refs = calloc((size_t)argc + 1, sizeof *refs);
  if (!refs) return 2;
  sbo_parser p;
  sbo_init(&p, &sbe_eval_cmd, argc, argv);
  int k;
  const char *v;
  bool refs_given = false;
  while ((k = sbo_next(&p, &v)) > 0) {
    switch (k) {
    case SBE_O_REFS: refs[nrefs++] = v, refs_given = true; break;
    case SBE_O_DATA: data = v; break;
    case SBE_O_PREDS: preds = v; break;
    case SBE_O_ITEMS: items = v; break;
    case SBE_O_BY: by = v; break;
    case SBE_O_JSON: json = 1; break;
    case SBE_O_STRICT: strict = 1; break;
    case SBE_O_FL: run.options |= SBE_SCORE_FL_EXTRACT; break;
    default: k = SBO_STOP, p.status = sbo_usage_error(&p, "--execute, --subset and --jobs go together"); break;
    }
    if (k == SBO_STOP) break;
  }
  /* --references A B C: the files after the first are positionals */
  if (k != SBO_STOP && p.n_pos && !refs_given) p.status = sbo_usage_error(&p, "unexpected argument '%s'", p.pos[0]);
  else if (k != SBO_STOP && p.dashdash) p.status = sbo_usage_error(&p, "unexpected '--'");
  for (int i = 0; k != SBO_STOP && i < p.n_pos; i++) refs[nrefs++] = p.pos[i];
  status = p.status;
  sbo_done(&p);
  if (k == SBO_STOP || status) goto out;
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
  free(refs);
  sbe_run_free(&run);
  return status;
}
