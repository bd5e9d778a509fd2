/* surgebox regen: the command line. Runs SURGE items through the daemon,
 * writes the regenerated dataset and the fidelity report (regen_run.c).
 *
 *   surgebox regen --data DIR [--subset dr,bg,tc | all] [--out DIR] [--summary FILE]
 *                  [--jobs N] [--repeat K] [--check-determinism] [--only I,J,...]
 *                  [--no-inproc-time] [--no-gcc9-mimic] [--strict] [--shard I/N|auto [--shards N]]
 *                  (and the daemon's --socket, --no-autostart, --profile)
 *
 * --out DIR receives <subset>.json in SURGE's own shape: "gt" is the
 * regenerated reference, "gt_published" the shipped one, and "exec" what
 * happened. It is rewritten as items finish, so an interrupted run resumes:
 * items whose "exec" is complete are not run again. With --shard only this
 * shard's items run (shard.h) and --out also gets shard.json, what
 * `surgebox merge` checks. */
#include "regen.h"

#include "cliopt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int subsets(const sbo_parser *p, const sbo_opt *o, const char *v, void *arg);
static int determinism(const sbo_parser *p, const sbo_opt *o, const char *v, void *arg);
static int plan_json(const sbo_parser *p, const sbo_opt *o, const char *v, void *arg);
#define AT(F) SBO_AT(sbs_regen_opts, F)
static const sbo_opt regen_opts[] = {
    {"data", 0, "DIR", "SURGE's <subset>.json files (required)", SBO_STR, AT(data)},
    {"subset", 0, "LIST", "comma-separated subsets, or all (default dr,bg,tc)", SBO_CALL, .call = subsets},
    {"out", 0, "DIR", "write <subset>.json there (an interrupted run resumes)", SBO_STR, AT(out)},
    {"summary", 0, "FILE", "the fidelity report as JSON", SBO_STR, AT(summary)},
    {"repeat", 0, "K", "run every item K times", SBO_INT, AT(repeat), .min = 1, .max = 1000},
    {"check-determinism", 0, NULL, "run every item at least twice and compare", SBO_CALL, .call = determinism},
    SBS_ONLY_OPT(sbs_regen_opts),
    {"retry-failed", 0, NULL, "rerun items a resumed run recorded as unfinished (timeout, memory_limit) or failed", SBO_FLAG, AT(retry_failed)},
    {"no-inproc-time", 0, NULL, "do not use the in-process timers of timed items", SBO_CLEAR, AT(inproc)},
    {"no-gcc9-mimic", 0, NULL, "do not mimic gcc 9's diagnostics", SBO_CLEAR, AT(mimic)},
    {"strict", 0, NULL, "run nothing when a toolchain is not SURGE's (Python 3.8, GCC 9, JDK 11, ...)", SBO_FLAG, AT(strict)},
    {"plan", 0, NULL, "print every shard's item count and expected cost, run nothing (no daemon)", SBO_FLAG, AT(plan)},
    {"plan-json", 0, NULL, "like --plan, as JSON naming every shard's items (subset: indices)", SBO_CALL, .call = plan_json},
    {NULL, 0, NULL, NULL}};
#undef AT
static const sbo_cmd regen_cmd = {"surgebox regen", "--data DIR [options]",
                                  "Regenerate SURGE's references by running every item; a fidelity report.",
                                  regen_opts, NULL,
                                  "exit: 0 done, 1 bad arguments, 2 a failure (a failure of surgebox for any item: "
                                  "counted as internal_error, never a reference), 130 interrupted\n",
                                  false, sbr_run_groups};

void sbs_regen_opts_init(sbs_regen_opts *o) {
  memset(o, 0, sizeof *o);
  o->subsets[0] = SBS_DR, o->subsets[1] = SBS_BG, o->subsets[2] = SBS_TC;
  o->n_subsets = 3;
  o->repeat = 1;
  o->inproc = o->mimic = true;
}

/* "dr,bg" or "all" into o->subsets: 0, or -1 naming the bad one in *bad. */
static int subsets_of(const char *arg, sbs_regen_opts *o, char *bad, size_t n) {
  o->n_subsets = 0;
  if (!strcmp(arg, "all")) {
    for (int s = 0; s < SBS_N_SUBSETS; s++) o->subsets[o->n_subsets++] = (sbs_subset)s;
    return 0;
  }
  char buf[128];
  snprintf(buf, sizeof buf, "%s", arg);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
    if (o->n_subsets == SBS_N_SUBSETS || sbs_subset_parse(tok, &o->subsets[o->n_subsets++]) < 0) {
      snprintf(bad, n, "%s", tok);
      return -1;
    }
  return o->n_subsets ? 0 : -1;
}

static int subsets(const sbo_parser *p, const sbo_opt *o, const char *v, void *arg) {
  char bad[128] = "";
  if (subsets_of(v, arg, bad, sizeof bad) < 0)
    return sbo_usage_error(p, "unknown subset '%s' (ml cl rl sc tc bg dr fl, or all)", bad[0] ? bad : v);
  return 0;
}

/* non-negative indices separated by commas, checked here (0,abc ran item 0 alone) */
int sbs_only_parse(const sbo_parser *p, const sbo_opt *o, const char *v, void *opts) {
  const char *q = v;
  while (*q) {
    char *end;
    errno = 0;
    long i = strtol(q, &end, 10);
    if (end == q || i < 0 || errno || (*end && *end != ',') || (*end == ',' && !end[1]))
      return sbo_usage_error(p, "bad value '%s' for --only: item indices separated by commas (0,1,2)", v);
    q = *end ? end + 1 : end;
  }
  if (!*v) return sbo_opt_bad_value(p, o, v);
  *(const char **)((char *)opts + o->at) = v;
  return 0;
}

static int determinism(const sbo_parser *p, const sbo_opt *o, const char *v, void *arg) {
  sbs_regen_opts *r = arg;
  r->repeat = r->repeat < 2 ? 2 : r->repeat;
  return 0;
}

static int plan_json(const sbo_parser *p, const sbo_opt *o, const char *v, void *arg) {
  sbs_regen_opts *r = arg;
  r->plan = r->plan_json = true;
  return 0;
}

/* 0 parsed; -1 after --help; else the exit status of a mistake. */
static int parse(int argc, char **argv, sbc_ctx *ctx, sbs_regen_opts *o) {
  sbs_regen_opts_init(o);
  sbr_run_opts run = {0};
  sbo_parser p;
  int rc = sbr_parse(&p, &regen_cmd, argc, argv, ctx, &run, NULL, o);
  if (rc == 0) rc = sbo_no_args(&p);
  if (rc == 0 && !o->data) rc = sbo_usage_error(&p, "--data DIR is required (SURGE's <subset>.json files)");
  sbo_done(&p);
  o->jobs = run.jobs;
  o->dump = run.dump;
  if (rc == 0)
    rc = sbr_run_shard("regen", &run, o->out || o->dump || o->plan, "--out DIR (what surgebox merge reads)", &o->shard);
  if (rc == 0 && o->plan && !o->shard.count) {
    fprintf(stderr, "regen: --plan needs --shard I/N (or --shard auto --shards N)\n");
    rc = 1;
  }
  return rc;
}

bool sbs_in_only(const char *only, size_t index) {
  if (!only) return true;
  for (const char *p = only; *p;) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p) break;
    if ((size_t)v == index) return true;
    p = *end == ',' ? end + 1 : end;
  }
  return false;
}

SBR_COMMAND(sbs_regen_main, sbs_regen_opts, parse, sbs_regen_run)
