/* CRUXEval (facebookresearch/cruxeval) as a verify benchmark: the data, the
 * adapter (sample + generation -> sandboxed Python program) and the scorer
 * (verdicts -> CRUXEval's scored file). The rules are
 * ../shared/cruxeval/SCORING.md; prefix sbx_. */
#ifndef SURGEBOX_CRUXEVAL_H
#define SURGEBOX_CRUXEVAL_H
#include "command.h"
#include "result.h"
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "merge.h"
#include "shard.h"

typedef enum { SBX_OUTPUT, SBX_INPUT } sbx_mode;

typedef struct {
  const char *id; /* "sample_i" */
  const char *code, *input, *output;
  size_t code_len, input_len, output_len;
} sbx_sample;

typedef struct {
  json_object *lines; /* owns the strings the samples point into */
  sbx_sample *v;
  size_t n;
} sbx_data;

/* ---- data.c ---- */
/* The JSON Lines data file: every line {"code","input","output","id"} with
 * string fields and distinct ids. 0, or -1 with err set. */
int sbx_data_load(const char *path, sbx_data *d, char *err, size_t err_len);
void sbx_data_free(sbx_data *d);
/* The generations object, checked before anything runs: an object whose
 * keys are exactly the data's ids, each a non-empty list of strings.
 * 0, or -1 with err set. */
int sbx_generations_check(json_object *gens, const sbx_data *d, char *err, size_t err_len);

/* ---- adapt.c ---- */
/* Whether the rules run generation g (false: dropped). */
bool sbx_keeps(sbx_mode m, const sbx_sample *s, const char *g, size_t g_len);
/* "<code>\nassert <output> == <g>", malloc'd, its length in *len. */
char *sbx_program(const sbx_sample *s, const char *g, size_t g_len, size_t *len);
/* The exec request (raw steps, no "id") that runs a program. */
json_object *sbx_request(const char *prog, size_t len);
/* The verdict of an answer (typed: client/result.h): 1 passed, 0 failed,
 * -1 no verdict (the machinery failed: run it again). */
int sbx_verdict(const sbc_result *r);

/* ---- score.c ---- */
double sbx_pass_at_k(size_t n, size_t c, size_t k);
/* One sample's result list from the verdicts of its n generations
 * (1 passed, 0 failed, -1 dropped). */
json_object *sbx_sample_list(const int *verdicts, size_t n);
/* The scored file: gens (borrowed, copied in unchanged) and one list per
 * sample (taken over), in the data's order. */
/* The words beside pass@5 when some samples have fewer than 5 generations
 * (the file's "pass_at_k_note", the printed line): false when none has. */
#define SBX_PASS_AT_K_NOTE_MAX 200
bool sbx_pass_at_k_note(size_t below_k, size_t samples, char *buf, size_t n);
/* CRUXEval's scored file, and "pass_at_k_note" after pass_at_5 when it applies. */
json_object *sbx_scored_file(json_object *gens, const sbx_data *d, json_object **lists);
/* A float as Python's repr writes it (shortest round trip, ".0" when integral). */
json_object *sbx_pyfloat(double v);

/* ---- shard.c ---- */
/* verify --shard: mine[i] = program hashes[i] is this shard's (keyed by its
 * hash, balanced by count); writes OUT.shard.json, or refuses (-1, with a
 * message) an OUT.shard.json of another run. */
int sbx_shard_plan(const sbr_shard *sh, const char *out, const char *mode, const char *data, const char *gens,
                   const char *const *hashes, size_t n, bool *mine);
/* surgebox merge of verify shards (shards checked by merge_cli.c): the
 * verdicts joined into OUT.progress, then scored by sbx_verify_run with
 * nothing left to run. 0, or 2 with a message. */
int sbx_merge(const sbr_merge_shard *sh, size_t n, const char *out);

/* ---- subset.c ---- */
/* verify --samples LIST (indices or ids, comma-separated) or --limit N: cut
 * the data to those samples and gens (taken over, replaced) to their keys.
 * Nothing asked: unchanged. 0, or -1 with a message naming the bad item. */
int sbx_subset(sbx_data *d, json_object **gens, const char *samples, long limit, char *err, size_t err_len);
/* --samples LIST and --limit N as every command that cuts CRUXEval declares
 * them (verify, trace-dataset): two rows of an sbo_opt table storing into
 * T's samples (a non-empty list) and limit (1..10^9); then
 * sbx_subset_given checks that one of them at most was given. */
#define SBX_SUBSET_OPTS(T, SAMPLES_HELP, LIMIT_HELP)                                          \
  {"samples", 0, "0,1,2", SAMPLES_HELP, SBO_CALL, SBO_AT(T, samples), .call = sbx_samples_option},           \
  {"limit", 0, "N", LIMIT_HELP, SBO_INT, SBO_AT(T, limit), .min = 1, .max = 1000000000}
int sbx_samples_option(const sbo_parser *p, const sbo_opt *o, const char *v, void *opts);
/* 0, or the usage error "--samples and --limit: give one of them". */
int sbx_subset_given(const sbo_parser *p, const char *samples, long limit);

/* ---- cli.c ---- */
typedef struct {
  const char *mode;       /* "output" or "input" */
  const char *gens, *out, *data, *cache_dir, *dump;
  int jobs;               /* 0: the CPUs */
  sbr_shard shard;        /* count 0: not sharded */
  const char *samples;    /* --samples 0,1,sample_7: only these (NULL: all) */
  long limit;             /* --limit N: the first N samples (0: all) */
  bool warm;              /* --warm: each check started by a warm Python interpreter (PROTOCOL.md "Warm starts") */
} sbx_verify_opts;
/* surgebox verify --benchmark cruxeval ...: the command line (argv[0] is
 * "verify", --benchmark cruxeval among the options), and the run on the
 * driver. 0 scored, 1 bad arguments, 2 a failure (a failure of surgebox for
 * any program included: no verdict kept for it, nothing scored), 130. */
int sbx_verify_cmdline(const sbc_ctx *ctx, int argc, char **argv);
int sbx_verify_run(const sbc_ctx *ctx, const sbx_verify_opts *o);
#endif
