/* surgebox verify --benchmark traces: predictions scored against the traces
 * trace-dataset recorded. The scorer is the Python client's
 * surgebox.trace_verify (pure functions in trace_score.py and
 * trace_questions.py): the metrics read traces through the client's Trace
 * class and its debugger views, the very code users and its tests share; a
 * C copy of those views could drift from them. Nothing runs in a sandbox:
 * no daemon is asked for. */
#include "traces.h"
#include "cliopt.h"
#include "verify.h"
#include "pyclient.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  const char *pred, *refs, *out, *gold;
} verify_args;

#define AT(F) SBO_AT(verify_args, F)
static const sbo_opt opts[] = {
    SBR_VERIFY_BENCHMARK_OPT("traces"),
    {"predictions", 0, "P.jsonl", "predicted traces or answers, one JSON object a line (docs/verify.md)", SBO_STR, AT(pred)},
    {"references", 0, "DIR", "the --out of surgebox trace-dataset (index.jsonl, traces/)", SBO_STR, AT(refs)},
    {"out", 0, "REPORT.json", "the report with every item's scores", SBO_STR, AT(out)},
    {"gold-out", 0, "ANSWERS.jsonl", "write the default questions with the recorded answers instead of scoring", SBO_STR, AT(gold)},
    {NULL, 0, NULL, NULL}};
#undef AT
static const sbo_cmd cmd = {
    "surgebox verify", "--benchmark traces --references DIR (--predictions P.jsonl [--out REPORT.json] | --gold-out FILE)",
    "Score predicted execution traces (surgebox's JSON Lines or CWM's format) or per-question answers\n"
    "(coverage, path, next lines, state, debugger steps) against the traces trace-dataset recorded.",
    opts, NULL,
    "exit: 0 scored (bad or missing predictions are counted and said, and score 0), 1 bad arguments,\n"
    "2 the references or predictions cannot be read, or python3 cannot run the scorer\n",
    false, NULL};

int sbtd_verify_cmdline(const sbc_ctx *ctx, int argc, char **argv) {
  const char *bad = sbc_refused_option(ctx->given, 0);
  if (bad) {
    fprintf(stderr, "surgebox verify: %s does not apply to --benchmark traces (it runs nothing); drop it\n", bad);
    return SBO_EXIT_USAGE;
  }
  verify_args a = {0};
  sbo_parser p;
  int rc = sbo_parse(&p, &cmd, argc, argv, &a, NULL, NULL);
  const char *pred = a.pred, *refs = a.refs, *out = a.out, *gold = a.gold;
  if (rc == 0) rc = sbo_no_args(&p);
  if (rc == 0 && !refs) rc = sbo_usage_error(&p, "--references DIR is required (the --out of surgebox trace-dataset)");
  if (rc == 0 && !pred == !gold) rc = sbo_usage_error(&p, "give --predictions P.jsonl, or --gold-out FILE");
  if (rc == 0 && gold && out) rc = sbo_usage_error(&p, "--out is for scoring predictions, not with --gold-out");
  sbo_done(&p);
  if (rc) return rc < 0 ? 0 : rc;
  const char *args[9] = {"--references", refs};
  size_t n = 2;
  if (pred) args[n++] = "--predictions", args[n++] = pred;
  if (out) args[n++] = "--out", args[n++] = out;
  if (gold) args[n++] = "--gold-out", args[n++] = gold;
  char err[1024];
  fflush(stdout);
  int st = sbc_py_module("surgebox.trace_verify", args, NULL, err, sizeof err);
  if (st < 0) fprintf(stderr, "surgebox verify: %s\n", err);
  return st < 0 ? 2 : st;
}
