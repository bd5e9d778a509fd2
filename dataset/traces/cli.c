/* surgebox trace-dataset: the command line (traces.h; docs/cli.md). */
#include "traces.h"
#include "cli.h"
#include "cliopt.h"
#include "cruxeval.h"
#include "driver.h"
#include "protocol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SBX_DEFAULT_DATA
#define SBX_DEFAULT_DATA "../shared/cruxeval/cruxeval.jsonl"
#endif

static int benchmark(const sbo_parser *p, const sbo_opt *o, const char *v, void *arg);
#define TRACE_LIMIT(NAME, HELP, MIN, MAX) SBC_TRACE_LIMIT(NAME, HELP, MIN, MAX, SBO_AT(sbtd_opts, trace))
#define AT(F) SBO_AT(sbtd_opts, F)
static const sbo_opt opts[] = {
    {"benchmark", 0, "cruxeval", "trace CRUXEval's reference checks (the function, then assert <output> == f(<input>))", SBO_CALL, .call = benchmark},
    {"programs", 0, "FILE.jsonl", "trace these programs instead (one JSON object a line: docs/cli.md)", SBO_STR, AT(programs)},
    {"out", 0, "DIR", "traces, records, index.jsonl and summary.json go here (default ./traces); a run resumes from it", SBO_STR, AT(out)},
    {"data", 0, "CRUXEVAL.jsonl", "CRUXEval's data (default $CRUXEVAL_DATA, else " SBX_DEFAULT_DATA ")", SBO_STR, AT(data)},
    SBR_CACHE_DIR_OPT(sbtd_opts),
    SBX_SUBSET_OPTS(sbtd_opts, "cruxeval: only these samples (indices or ids)", "cruxeval: only the first N samples"),
    TRACE_LIMIT("events", "the tracer's event cap (its default: 1000000)", 1, __LONG_MAX__),
    TRACE_LIMIT("bytes", "each trace's byte cap (4096 ... 268435456; default 16777216)", (long)SBP_TRACE_MIN_BYTES, (long)SBP_TRACE_MAX_BYTES),
    TRACE_LIMIT("value-chars", "characters of a string value recorded (default 256)", 1, __LONG_MAX__),
    TRACE_LIMIT("depth", "traced call depth (default 256)", 1, __LONG_MAX__),
    {NULL, 0, NULL, NULL}};
#undef AT
static const sbo_cmd cmd = {
    "surgebox trace-dataset", "--benchmark cruxeval | --programs FILE.jsonl [--out DIR] [options]",
    "Trace every program through the daemon (the trace option with check: each also runs untraced and\n"
    "its stdout and exit are compared) and write one trace per item, index.jsonl and summary.json to DIR.\n"
    "Items already traced in DIR are skipped (a run resumes); --shard I/N traces one part, surgebox merge\n"
    "joins the parts.",
    opts, NULL,
    "exit: 0 every item traced (truncated traces are counted and said), 1 bad arguments or input,\n"
    "2 an item without a trace, tampered, crashed, a traced run whose stdout or exit differ from the\n"
    "untraced run's, or a failure of surgebox (counted and said), 130 interrupted\n",
    false, sbr_run_groups};

static int benchmark(const sbo_parser *p, const sbo_opt *o, const char *v, void *arg) {
  if (strcmp(v, "cruxeval")) return sbo_usage_error(p, "--benchmark: only cruxeval is known (or give --programs FILE)");
  ((sbtd_opts *)arg)->benchmark = v;
  return 0;
}

int sbtd_main(const sbc_ctx *ctx, int argc, char **argv) {
  sbc_ctx c = *ctx;
  sbtd_opts o = {.trace = json_object_new_object()};
  sbr_run_opts run = {0};
  sbo_parser p;
  int rc = sbr_parse(&p, &cmd, argc, argv, &c, &run, NULL, &o);
  if (rc == 0) rc = sbo_no_args(&p);
  if (rc == 0 && !o.benchmark == !o.programs) rc = sbo_usage_error(&p, "give --benchmark cruxeval or --programs FILE.jsonl");
  if (rc == 0 && o.programs && (o.samples || o.limit || o.data))
    rc = sbo_usage_error(&p, "--samples, --limit and --data are for --benchmark cruxeval");
  if (rc == 0) rc = sbx_subset_given(&p, o.samples, o.limit);
  sbo_done(&p);
  o.jobs = run.jobs;
  o.dump = run.dump;
  if (rc == 0 && sbr_shard_from_args("trace-dataset", run.shard.shard, run.shard.shards, &o.shard) < 0) rc = 1;
  if (!o.out) o.out = "traces";
  if (!o.data) o.data = getenv("CRUXEVAL_DATA") ? getenv("CRUXEVAL_DATA") : SBX_DEFAULT_DATA;
  if (rc == 0) rc = sbtd_run(&c, &o);
  json_object_put(o.trace);
  return rc < 0 ? 0 : rc;
}
