/* surgebox verify --benchmark traces: predictions scored against the traces
 * trace-dataset recorded. The scorer is the Python client's
 * surgebox.trace_verify (pure functions in trace_score.py and
 * trace_questions.py): the metrics read traces through the client's Trace
 * class and its debugger views, the very code users and its tests share; a
 * C copy of those views could drift from them. Nothing runs in a sandbox:
 * no daemon is asked for. */
#include "traces.h"
#include "cliopt.h"
#include "pyclient.h"

#include <stdio.h>
#include <string.h>

enum { O_BENCH = 256, O_PRED, O_REFS, O_OUT, O_GOLD };
static const sbo_opt opts[] = {
    {"benchmark", O_BENCH, "traces", "this benchmark (surgebox verify's dispatch)"},
    {"predictions", O_PRED, "P.jsonl", "predicted traces or answers, one JSON object a line (docs/verify.md)"},
    {"references", O_REFS, "DIR", "the --out of surgebox trace-dataset (index.jsonl, traces/)"},
    {"out", O_OUT, "REPORT.json", "the report with every item's scores"},
    {"gold-out", O_GOLD, "ANSWERS.jsonl", "write the default questions with the recorded answers instead of scoring"},
    {NULL, 0, NULL, NULL}};
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
  const char *pred = NULL, *refs = NULL, *out = NULL, *gold = NULL;
  sbo_parser p;
  sbo_init(&p, &cmd, argc, argv);
  int k = SBO_END, rc = 0;
  const char *v;
  while (rc == 0 && (k = sbo_next(&p, &v)) > 0) {
    if (k == O_BENCH) continue;
    if (k == O_PRED) pred = v;
    else if (k == O_REFS) refs = v;
    else if (k == O_OUT) out = v;
    else if (k == O_GOLD) gold = v;
  }
  if (rc == 0 && k == SBO_STOP) rc = p.status ? p.status : -1;
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
