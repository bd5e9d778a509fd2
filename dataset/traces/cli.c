/* surgebox trace-dataset: the command line (traces.h; docs/cli.md). */
#include "traces.h"
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

enum { O_BENCH = 256, O_PROGRAMS, O_OUT, O_DATA, O_CACHE, O_SAMPLES, O_LIMIT, O_EVENTS, O_BYTES, O_VCHARS, O_DEPTH };
static const sbo_opt opts[] = {
    {"benchmark", O_BENCH, "cruxeval", "trace CRUXEval's reference checks (the function, then assert <output> == f(<input>))"},
    {"programs", O_PROGRAMS, "FILE.jsonl", "trace these programs instead (one JSON object a line: docs/cli.md)"},
    {"out", O_OUT, "DIR", "traces, records, index.jsonl and summary.json go here (default ./traces); a run resumes from it"},
    {"data", O_DATA, "CRUXEVAL.jsonl", "CRUXEval's data (default $CRUXEVAL_DATA, else " SBX_DEFAULT_DATA ")"},
    {"cache-dir", O_CACHE, "DIR", "the private daemon's compile cache"},
    {"samples", O_SAMPLES, "0,1,2", "cruxeval: only these samples (indices or ids)"},
    {"limit", O_LIMIT, "N", "cruxeval: only the first N samples"},
    {"events", O_EVENTS, "N", "the tracer's event cap (its default: 1000000)"},
    {"bytes", O_BYTES, "N", "each trace's byte cap (4096 ... 268435456; default 16777216)"},
    {"value-chars", O_VCHARS, "N", "characters of a string value recorded (default 256)"},
    {"depth", O_DEPTH, "N", "traced call depth (default 256)"},
    {NULL, 0, NULL, NULL}};
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

static int count(sbo_parser *p, json_object *t, int k, const char *key, const char *v, long lo, long hi) {
  long n;
  if (sbo_parse_long(v, lo, hi, &n) < 0) return sbo_bad_value(p, k, v);
  json_object_object_add(t, key, json_object_new_int64(n));
  return 0;
}

static int option(sbo_parser *p, void *arg, int k, const char *v) {
  sbtd_opts *o = arg;
  switch (k) {
  case O_BENCH:
    if (strcmp(v, "cruxeval")) return sbo_usage_error(p, "--benchmark: only cruxeval is known (or give --programs FILE)");
    o->benchmark = v;
    break;
  case O_PROGRAMS: o->programs = v; break;
  case O_OUT: o->out = v; break;
  case O_DATA: o->data = v; break;
  case O_CACHE: o->cache_dir = v; break;
  case O_SAMPLES:
  case O_LIMIT: return sbx_subset_option(p, k, k == O_LIMIT, v, &o->samples, &o->limit);
  case O_EVENTS: return count(p, o->trace, k, "events", v, 1, __LONG_MAX__);
  case O_BYTES: return count(p, o->trace, k, "bytes", v, (long)SBP_TRACE_MIN_BYTES, (long)SBP_TRACE_MAX_BYTES);
  case O_VCHARS: return count(p, o->trace, k, "value_chars", v, 1, __LONG_MAX__);
  case O_DEPTH: return count(p, o->trace, k, "depth", v, 1, __LONG_MAX__);
  }
  return 0;
}

int sbtd_main(const sbc_ctx *ctx, int argc, char **argv) {
  sbc_ctx c = *ctx;
  sbtd_opts o = {.trace = json_object_new_object()};
  sbr_run_opts run = {0};
  sbo_parser p;
  int rc = sbr_parse(&p, &cmd, argc, argv, &c, &run, option, &o);
  if (rc == 0) rc = sbo_no_args(&p);
  if (rc == 0 && !o.benchmark == !o.programs) rc = sbo_usage_error(&p, "give --benchmark cruxeval or --programs FILE.jsonl");
  if (rc == 0 && o.programs && (o.samples || o.limit || o.data))
    rc = sbo_usage_error(&p, "--samples, --limit and --data are for --benchmark cruxeval");
  if (rc == 0 && o.samples && o.limit) rc = sbo_usage_error(&p, "--samples and --limit: give one of them");
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
