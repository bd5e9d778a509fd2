/* The generic "tests" benchmark (prefix sbtb_): problems with test cases,
 * solutions to them, each solution one native job whose run step carries
 * the problem's cases (PROTOCOL.md "Test cases"): the build runs once, the
 * daemon judges every case. pass@k over the problems, per-language counts.
 *
 * problems.c  P.jsonl: {id, language, tests} and the layouts public code-RL
 *             data sets carry (input_output, test_cases), made into cases
 * solutions.c S.jsonl: {id, code}, many per id
 * run.c       the run on the driver: resume, shard, pump, the result file
 * shard.c     --shard I/N's plan and surgebox merge of such shards */
#ifndef SURGEBOX_TESTS_BENCH_H
#define SURGEBOX_TESTS_BENCH_H

#include "command.h"
#include "merge.h"
#include "shard.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
  char *id;             /* the problem's id as text */
  size_t line;          /* 1-based line of P.jsonl */
  char *language;       /* as given (or --language) */
  const char *toolchain, *source; /* the job's toolchain and source file name */
  char *fn_name;        /* function-call cases (Python), or NULL */
  char *assert_tail;    /* assert tests (Python): the test code run after the solution's, one case; or NULL */
  json_object *cases;   /* the cases as the protocol takes them (owned) */
  char hash[65];        /* SHA-256 of what the job runs but the code */
} sbtb_problem;

typedef struct {
  sbtb_problem *v;
  size_t n;
} sbtb_problems;

typedef struct {
  size_t line;    /* 1-based line of S.jsonl */
  size_t problem; /* index into the problems */
  char *code;
  size_t code_len;
  char hash[65];  /* the program: SHA-256 of the problem's hash and the code */
} sbtb_solution;

typedef struct {
  sbtb_solution *v;
  size_t n;
} sbtb_solutions;

/* ---- problems.c ---- */
/* P.jsonl, every line checked: 0, or -1 with err naming the file, the line
 * and what is wrong (*unreadable set when the file cannot be read at all).
 * language_default: for lines without "language" (NULL: required). */
int sbtb_problems_load(const char *path, const char *language_default, sbtb_problems *p, bool *unreadable,
                       char *err, size_t err_len);
void sbtb_problems_free(sbtb_problems *p);
/* The exec request (toolchain form, no "id") running code against p's cases;
 * warm: "warm": true (the daemon starts a Python step warm, else cold saying why). */
json_object *sbtb_request(const sbtb_problem *p, const char *code, size_t code_len, const char *stop, double time_limit,
                          bool warm);

/* ---- solutions.c ---- */
/* S.jsonl against the problems: 0, or -1 with err (a line that is not
 * {id, code}, an id no problem has). */
int sbtb_solutions_load(const char *path, const sbtb_problems *p, sbtb_solutions *s, bool *unreadable, char *err,
                        size_t err_len);
void sbtb_solutions_free(sbtb_solutions *s);

/* ---- run.c ---- */
typedef struct {
  const char *problems, *solutions, *out, *cache_dir, *dump;
  const char *k;        /* --k LIST as given, or NULL: 1,10 where every problem has that many solutions */
  const char *stop;     /* "never" (default) or "first_failure" */
  const char *language; /* --language: for problems without one */
  double time_limit;    /* --time-limit S per case (0: the daemon's default) */
  bool warm;            /* --warm: Python cases start from the slots' warm interpreters */
  int jobs;
  sbr_shard shard;
} sbtb_opts;
int sbtb_verify_cmdline(const sbc_ctx *ctx, int argc, char **argv);
int sbtb_verify_run(const sbc_ctx *ctx, const sbtb_opts *o);

/* ---- shard.c ---- */
/* --shard: mine[i] = program hashes[i] is this shard's; OUT.shard.json. */
int sbtb_shard_plan(const sbr_shard *sh, const sbtb_opts *o, const char *const *hashes, size_t n, bool *mine);
/* surgebox merge of verify --benchmark tests shards: their records joined
 * into OUT.progress, then scored by sbtb_verify_run with nothing to run. */
int sbtb_merge(const sbr_merge_shard *sh, size_t n, const char *out);

#endif
