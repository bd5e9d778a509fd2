/* Regenerating SURGE's references by real execution (prefix sbr_).
 *
 *   adapters     one per subset: item -> exec request + how to read the
 *                reference out of the response (adapt_*.c)
 *   reference    response -> reference string, formatted as SURGE did
 *   normalize    the documented normalisations N1-N6 (normalize.c)
 *   fidelity     exact / normalized / Jaccard, mismatch classes, the table
 *   regen        the run on the benchmark driver (driver.h): --out, resume,
 *                the table (regen_run.c, regen_task.c; the command line:
 *                regen_cli.c)
 */
#ifndef SURGEBOX_REGEN_H
#define SURGEBOX_REGEN_H
#include "command.h"
#include "driver.h"
#include "result.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum { SBR_ML, SBR_CL, SBR_RL, SBR_SC, SBR_TC, SBR_BG, SBR_DR, SBR_FL, SBR_N_SUBSETS } sbr_subset;
const char *sbr_subset_name(sbr_subset s); /* "ml", ... */
int sbr_subset_parse(const char *s, sbr_subset *out);

/* How the reference is read out of an exec response. */
typedef enum {
  SBR_OUT_STDOUT,            /* the chosen step's stdout */
  SBR_OUT_STDOUT_STDERR,     /* stdout then stderr (SURGE's BG python) */
  SBR_OUT_BG,                /* compile failed: "Compilation Error: " + its stderr; else stdout+stderr of the run */
  SBR_OUT_CONCAT,            /* every step's (merged) stdout, in order: DR's one pipe */
} sbr_outmode;

/* SURGE's recorded environment against the one chosen here, one record per
 * toolchain whose version shows in the references (RECIPES.md's table):
 * BG's Python 3.8, GCC 9 (DR g++, BG cpp), clang 17-20 on GCC 9's libstdc++
 * (DR clang++), JDK 11-15 (BG java), Julia 1.5 (ML). Filled when the
 * environment is chosen (sbr_env_init, sbr_env_set_best); each job built on
 * a substituted one points at it (sbr_job.substituted), which regen says
 * (sbr_env_say_substitutions) and fidelity.c records (sbr_exec_substitution). */
typedef enum { SBR_ENV_BG_PYTHON, SBR_ENV_GXX, SBR_ENV_CLANG, SBR_ENV_JAVA, SBR_ENV_JULIA, SBR_N_ENV } sbr_env_role;
typedef struct {
  const char *items;  /* the items concerned: "BG python3" */
  const char *surge;  /* SURGE's: "Python 3.8" */
  char used[160];     /* chosen here: "python3 3.11.2" ("" when absent: missing_toolchain, not a substitution) */
  char profile[64];   /* where it runs: "" (the run's own environment) or SBR_BEST_PROFILE */
  bool substituted;   /* used is not SURGE's */
  size_t jobs;        /* jobs built on it so far (the adapters count) */
} sbr_env_sub;

/* Toolchains chosen for this machine (from the daemon's toolchain list). */
typedef struct sbr_env {
  json_object *toolchains;   /* the daemon's list (owned) */
  char gxx[256], gxx_name[64];          /* g++ for DR/BG/RL: the oldest installed (closest to SURGE's GCC 9) */
  char clang_dir[256], clang_name[64];  /* directory whose clang++ is the newest clang (SURGE: 19) */
  char gcc_install_dir[256];            /* that GCC's install dir, for clang's --gcc-install-dir */
  char bg_python[64];                   /* python3.8 when present (SURGE's BG), else python3 */
  char python[256];                     /* python3 with numpy (TC/SC/RL) */
  bool bg_mimic_gcc9;                   /* -ftabstop=1 -Wno-vexing-parse (GCC 9 columns) */
  bool inproc_time;                     /* TC: time the script inside the interpreter too */
  /* A profile whose toolchains reproduce some language better than this
   * environment does (SBR_BEST_PROFILE: Julia 1.5 in surge-2025), with its
   * toolchain list; empty when the run already uses it or it is absent. */
  char best_profile[64];
  json_object *best_toolchains;         /* owned */
  char run_profile[64];                 /* the run's own profile ("" = host) */
  /* The best profile's toolchains as an environment of their own (owned;
   * NULL without one), and per role whether it runs there: for each group
   * whose version shows in the references, the closer to SURGE's of the
   * host's toolchain and the profile's (adapt_env.c). */
  struct sbr_env *alt;
  bool in_alt[SBR_N_ENV];
  sbr_env_sub *subs;                    /* [SBR_N_ENV], owned; counted through a const sbr_env by the adapters */
} sbr_env;

#define SBR_BEST_PROFILE "surge-2025"

int sbr_env_init(sbr_env *e, json_object *toolchains, char *err, size_t err_len);
void sbr_env_free(sbr_env *e);
bool sbr_env_has(const sbr_env *e, const char *toolchain);
/* Take `toolchains` (the daemon's list for profile `name`) as the better
 * environment for the languages that prefer it. */
void sbr_env_set_best(sbr_env *e, const char *name, json_object *toolchains);
bool sbr_env_best_has(const sbr_env *e, const char *toolchain);
/* The interpreter for TC's timed items: SURGE's Python 3.8 where a raw step
 * can reach it (inside a profile: the run's, else SBR_BEST_PROFILE, whose
 * name goes to *profile), else python. */
void sbr_env_timed_python(const sbr_env *e, char *path, size_t n, char *profile, size_t pn);
const char *sbr_env_version(const sbr_env *e, const char *toolchain);
/* In-process timers and GCC 9 mimicry (never for a real GCC 9), for the
 * environment and its best profile's. */
void sbr_env_options(sbr_env *e, bool inproc_time, bool mimic);
/* One line per role on f: which toolchain runs it and where. */
void sbr_env_say_choices(const sbr_env *e, const char *cmd, const sbr_subset *subsets, size_t n, FILE *f);
/* Whether role k (SBR_ENV_*) has jobs in one of these subsets. */
bool sbr_env_role_in(int k, const sbr_subset *subsets, size_t n);
/* (Re)fill e->subs from the chosen toolchains (adapt_env.c). */
void sbr_env_fill_subs(sbr_env *e);
/* Each substitution some job was built on, once, to f: with strict one line
 * each and -1 (the caller runs nothing), else a warning each and 0. */
int sbr_env_say_substitutions(const sbr_env *e, const char *cmd, bool strict, FILE *f);

typedef struct {
  json_object *request;   /* exec request without "id" (owned), NULL when it cannot run */
  char missing[256];      /* "julia" when the toolchain is absent here */
  char group[64];         /* the "by" key: language, or DR's compiler/standard/-O config */
  char toolchain[64];     /* what produced the answer (name as the daemon lists it) */
  char profile[64];       /* the profile this job runs in when not the run's own (its request names it) */
  sbr_outmode mode;
  const char *out_step;   /* name of the step whose output is the reference */
  bool strip;             /* SURGE stripped this reference */
  bool whitespace_free;   /* the reference is whitespace-insensitive (N6 allowed) */
  bool inproc_marker;     /* stderr carries SURGEBOX_INPROC_CPU=<s> */
  bool is_rl_sudoku, is_compile_prefixed;
  const sbr_env_sub *substituted; /* SURGE's environment for it is not the one used (NULL: it is, or unknown) */
} sbr_job;

/* The role a job plays (SBR_ENV_*), -1 when its toolchain's version does not
 * show in its reference. */
int sbr_env_role_of(sbr_subset s, const sbr_job *j);
/* The record job j of subset s was built on when it is substituted (and
 * count the job), else NULL. sbr_adapt sets j->substituted with it. */
const sbr_env_sub *sbr_env_tag(const sbr_env *e, sbr_subset s, const sbr_job *j);

/* Build the job for item `index` of subset s. 0, or -1 with err. */
int sbr_adapt(sbr_subset s, size_t index, json_object *item, const sbr_env *env, sbr_job *out, char *err,
              size_t err_len);
void sbr_job_free(sbr_job *j);

/* The reference string SURGE would have stored, from an exec answer (typed:
 * client/result.h): built from the streams' text as the daemon sent it
 * (sbc_stream.text: U+FFFD for bytes that are not UTF-8), since a reference
 * is a JSON string. Also the in-process CPU time when the job carries the
 * marker (else < 0). NULL when no step ran (or j's output step did not). */
char *sbr_reference(const sbr_job *j, const sbc_result *r, double *inproc_cpu_s);

/* ---- normalisations (RECIPES.md N1-N6), each a pure function ---- */
char *sbr_n1_toolchain_paths(const char *s); /* /usr/include/c++/N, /usr/lib/gcc/x86_64-linux-gnu/N/ */
char *sbr_n2_link_noise(const char *s);      /* +0x... offsets, /tmp/cc*.o and /tmp/<name>-<hex>.o */
char *sbr_n3_trailing_ws(const char *s);     /* per line and at the end */
char *sbr_n4_system_header_pos(const char *s); /* line:col inside system headers */
char *sbr_n5_warning_tags(const char *s);    /* [-W...] option tags */
char *sbr_n6_whitespace_runs(const char *s); /* runs of whitespace -> one space */
/* N1-N5, plus N6 when whitespace_free. */
char *sbr_normalize(const char *s, bool whitespace_free);
char *sbr_strip(const char *s);              /* Python's str.strip() for ASCII whitespace */

/* ---- CPU-time bins (bins.c) ---- */
int sbr_bin_of(double t, const double *edges, int n_edges); /* 0 .. n_edges */
typedef enum { SBR_BIN_SAME, SBR_BIN_FLAGGED, SBR_BIN_DIFFERENT } sbr_bin_agreement;
/* Our time `ours` (median of repeats lo..hi) against SURGE's `published`:
 * the same bin; flagged when an edge between the two bins lies within the
 * measured spread (lo <= edge <= hi, or SURGE's figure within the relative
 * spread (hi-lo)/ours of the edge); else different. */
sbr_bin_agreement sbr_bin_agree(double published, double ours, double lo, double hi, const double *edges, int n_edges);

/* ---- calibration to SURGE's machine (bins_calibrate.c) ---- */
#define SBR_CALIBRATION_MIN_PUBLISHED 0.1 /* s: SURGE printed "%.4f": shorter items' ratios are noise */
#define SBR_CALIBRATION_MIN_ITEMS 3
typedef struct {
  double factor; /* median of our time / SURGE's: this machine's slowness against SURGE's */
  double lo, hi; /* the ratios' quartiles: the calibration's spread */
  size_t used;   /* items with SURGE's time >= the minimum */
} sbr_calibration;
/* From the items SURGE timed at least min_published, but item `skip`
 * (SIZE_MAX: none): 0, or -1 when fewer than SBR_CALIBRATION_MIN_ITEMS
 * were (out->used says how many). */
int sbr_calibrate(const double *ours, const double *published, size_t n, double min_published, size_t skip,
                  sbr_calibration *out);
/* Our time (repeats lo..hi) on SURGE's machine: *t, and the range
 * [*tlo, *thi] the repeats and the calibration's spread allow. */
void sbr_calibrated(const sbr_calibration *c, double ours, double lo, double hi, double *t, double *tlo, double *thi);

/* ---- the regen and bins commands ---- */
typedef struct {
  const char *data, *out, *summary, *only, *dump;
  sbr_subset subsets[SBR_N_SUBSETS];
  size_t n_subsets;
  int repeat;              /* >= 1 */
  int jobs;                /* 0: the CPUs */
  bool inproc, mimic, retry_failed, plan, plan_json;
  bool strict;             /* run nothing when an environment is not SURGE's */
  bool quiet_environment;  /* the choice per group already said (verify: once per run, not per subset) */
  sbr_shard shard;         /* count 0: not sharded */
  FILE *report;            /* the fidelity table and the last line (NULL: stdout) */
} sbr_regen_opts;
/* The defaults: subsets dr,bg,tc, one repeat, in-process timers and GCC 9 mimicry on. */
void sbr_regen_opts_init(sbr_regen_opts *o);
/* surgebox regen: its own driver. 0, 1 (bad input), 2 (a failure, also of
 * surgebox for any item), 130 (interrupted). */
int sbr_regen_run(const sbc_ctx *ctx, const sbr_regen_opts *o);
/* The same on a driver the caller owns (verify --benchmark surge, one
 * connection for every subset): failures of surgebox are counted in d,
 * for the caller's sbr_driver_finish. 0, 1, 2 or 130. */
int sbr_regen_on(sbr_driver *d, const sbr_regen_opts *o);
int sbr_regen_main(const sbc_ctx *ctx, int argc, char **argv);
int sbr_bins_main(const sbc_ctx *ctx, int argc, char **argv);
int sbr_drmatrix_main(const sbc_ctx *ctx, int argc, char **argv);
int sbr_eval_execute_main(const sbc_ctx *ctx, int argc, char **argv); /* eval --execute */
bool sbr_in_only(const char *only, size_t index); /* --only I,J,... (NULL: every index) */
/* --only I,J,... (regen's, dr-matrix's), declared once: item indices
 * separated by commas, checked by sbr_only_parse (a usage error) and kept
 * as given in T's only for sbr_in_only. */
int sbr_only_parse(const sbo_parser *p, const sbo_opt *o, const char *v, void *opts);
#define SBR_ONLY_OPT(T) {"only", 0, "I,J,...", "only these item indices", SBO_CALL, SBO_AT(T, only), .call = sbr_only_parse}
/* regen's summary of --out's items (fidelity.h's sbr_summary) with the
 * failures of surgebox in a class of their own: per subset
 * "internal_error": count and mismatches.internal_error: [indices]; their
 * total in *failed (may be NULL). The same for a run and a merge. */
json_object *sbr_regen_summary(json_object *const *outs, const sbr_subset *subsets, size_t n, size_t *failed);

#endif
