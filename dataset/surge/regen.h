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

typedef enum { SBS_ML, SBS_CL, SBS_RL, SBS_SC, SBS_TC, SBS_BG, SBS_DR, SBS_FL, SBS_N_SUBSETS } sbs_subset;
const char *sbs_subset_name(sbs_subset s); /* "ml", ... */
int sbs_subset_parse(const char *s, sbs_subset *out);

/* How the reference is read out of an exec response. */
typedef enum {
  SBS_OUT_STDOUT,            /* the chosen step's stdout */
  SBS_OUT_STDOUT_STDERR,     /* stdout then stderr (SURGE's BG python) */
  SBS_OUT_BG,                /* compile failed: "Compilation Error: " + its stderr; else stdout+stderr of the run */
  SBS_OUT_CONCAT,            /* every step's (merged) stdout, in order: DR's one pipe */
} sbs_outmode;

/* SURGE's recorded environment against the one chosen here, one record per
 * toolchain whose version shows in the references (RECIPES.md's table):
 * BG's Python 3.8, GCC 9 (DR g++, BG cpp), clang 17-20 on GCC 9's libstdc++
 * (DR clang++), JDK 11-15 (BG java), Julia 1.5 (ML). Filled when the
 * environment is chosen (sbs_env_init, sbs_env_set_best); each job built on
 * a substituted one points at it (sbs_job.substituted), which regen says
 * (sbs_env_say_substitutions) and fidelity.c records (sbs_exec_substitution). */
typedef enum { SBS_ENV_BG_PYTHON, SBS_ENV_GXX, SBS_ENV_CLANG, SBS_ENV_JAVA, SBS_ENV_JULIA, SBS_N_ENV } sbs_env_role;
typedef struct {
  const char *items;  /* the items concerned: "BG python3" */
  const char *surge;  /* SURGE's: "Python 3.8" */
  char used[160];     /* chosen here: "python3 3.11.2" ("" when absent: missing_toolchain, not a substitution) */
  char profile[64];   /* where it runs: "" (the run's own environment) or SBS_BEST_PROFILE */
  bool substituted;   /* used is not SURGE's */
  size_t jobs;        /* jobs built on it so far (the adapters count) */
} sbs_env_sub;

/* Toolchains chosen for this machine (from the daemon's toolchain list). */
typedef struct sbs_env {
  json_object *toolchains;   /* the daemon's list (owned) */
  char gxx[256], gxx_name[64];          /* g++ for DR/BG/RL: the oldest installed (closest to SURGE's GCC 9) */
  char clang_dir[256], clang_name[64];  /* directory whose clang++ is the newest clang (SURGE: 19) */
  char gcc_install_dir[256];            /* that GCC's install dir, for clang's --gcc-install-dir */
  char bg_python[64];                   /* python3.8 when present (SURGE's BG), else python3 */
  char python[256];                     /* python3 with numpy (TC/SC/RL) */
  bool bg_mimic_gcc9;                   /* -ftabstop=1 -Wno-vexing-parse (GCC 9 columns) */
  bool inproc_time;                     /* TC: time the script inside the interpreter too */
  /* A profile whose toolchains reproduce some language better than this
   * environment does (SBS_BEST_PROFILE: Julia 1.5 in surge-2025), with its
   * toolchain list; empty when the run already uses it or it is absent. */
  char best_profile[64];
  json_object *best_toolchains;         /* owned */
  char run_profile[64];                 /* the run's own profile ("" = host) */
  /* The best profile's toolchains as an environment of their own (owned;
   * NULL without one), and per role whether it runs there: for each group
   * whose version shows in the references, the closer to SURGE's of the
   * host's toolchain and the profile's (adapt_env.c). */
  struct sbs_env *alt;
  bool in_alt[SBS_N_ENV];
  sbs_env_sub *subs;                    /* [SBS_N_ENV], owned; counted through a const sbs_env by the adapters */
} sbs_env;

#define SBS_BEST_PROFILE "surge-2025"

int sbs_env_init(sbs_env *e, json_object *toolchains, char *err, size_t err_len);
void sbs_env_free(sbs_env *e);
bool sbs_env_has(const sbs_env *e, const char *toolchain);
/* Take `toolchains` (the daemon's list for profile `name`) as the better
 * environment for the languages that prefer it. */
void sbs_env_set_best(sbs_env *e, const char *name, json_object *toolchains);
bool sbs_env_best_has(const sbs_env *e, const char *toolchain);
/* The interpreter for TC's timed items: SURGE's Python 3.8 where a raw step
 * can reach it (inside a profile: the run's, else SBS_BEST_PROFILE, whose
 * name goes to *profile), else python. */
void sbs_env_timed_python(const sbs_env *e, char *path, size_t n, char *profile, size_t pn);
const char *sbs_env_version(const sbs_env *e, const char *toolchain);
/* In-process timers and GCC 9 mimicry (never for a real GCC 9), for the
 * environment and its best profile's. */
void sbs_env_options(sbs_env *e, bool inproc_time, bool mimic);
/* One line per role on f: which toolchain runs it and where. */
void sbs_env_say_choices(const sbs_env *e, const char *cmd, const sbs_subset *subsets, size_t n, FILE *f);
/* Whether role k (SBS_ENV_*) has jobs in one of these subsets. */
bool sbs_env_role_in(int k, const sbs_subset *subsets, size_t n);
/* (Re)fill e->subs from the chosen toolchains (adapt_env.c). */
void sbs_env_fill_subs(sbs_env *e);
/* Each substitution some job was built on, once, to f: with strict one line
 * each and -1 (the caller runs nothing), else a warning each and 0. */
int sbs_env_say_substitutions(const sbs_env *e, const char *cmd, bool strict, FILE *f);

typedef struct {
  json_object *request;   /* exec request without "id" (owned), NULL when it cannot run */
  char missing[256];      /* "julia" when the toolchain is absent here */
  char group[64];         /* the "by" key: language, or DR's compiler/standard/-O config */
  char toolchain[64];     /* what produced the answer (name as the daemon lists it) */
  char profile[64];       /* the profile this job runs in when not the run's own (its request names it) */
  sbs_outmode mode;
  const char *out_step;   /* name of the step whose output is the reference */
  bool strip;             /* SURGE stripped this reference */
  bool whitespace_free;   /* the reference is whitespace-insensitive (N6 allowed) */
  bool inproc_marker;     /* stderr carries SURGEBOX_INPROC_CPU=<s> */
  bool is_rl_sudoku, is_compile_prefixed;
  const sbs_env_sub *substituted; /* SURGE's environment for it is not the one used (NULL: it is, or unknown) */
} sbs_job;

/* The role a job plays (SBS_ENV_*), -1 when its toolchain's version does not
 * show in its reference. */
int sbs_env_role_of(sbs_subset s, const sbs_job *j);
/* The record job j of subset s was built on when it is substituted (and
 * count the job), else NULL. sbs_adapt sets j->substituted with it. */
const sbs_env_sub *sbs_env_tag(const sbs_env *e, sbs_subset s, const sbs_job *j);

/* Build the job for item `index` of subset s. 0, or -1 with err. */
int sbs_adapt(sbs_subset s, size_t index, json_object *item, const sbs_env *env, sbs_job *out, char *err,
              size_t err_len);
void sbs_job_free(sbs_job *j);

/* The reference string SURGE would have stored, from an exec answer (typed:
 * client/result.h): built from the streams' text as the daemon sent it
 * (sbc_stream.text: U+FFFD for bytes that are not UTF-8), since a reference
 * is a JSON string. Also the in-process CPU time when the job carries the
 * marker (else < 0). NULL when no step ran (or j's output step did not). */
char *sbs_reference(const sbs_job *j, const sbc_result *r, double *inproc_cpu_s);

/* ---- normalisations (RECIPES.md N1-N6), each a pure function ---- */
char *sbs_n1_toolchain_paths(const char *s); /* /usr/include/c++/N, /usr/lib/gcc/x86_64-linux-gnu/N/ */
char *sbs_n2_link_noise(const char *s);      /* +0x... offsets, /tmp/cc*.o and /tmp/<name>-<hex>.o */
char *sbs_n3_trailing_ws(const char *s);     /* per line and at the end */
char *sbs_n4_system_header_pos(const char *s); /* line:col inside system headers */
char *sbs_n5_warning_tags(const char *s);    /* [-W...] option tags */
char *sbs_n6_whitespace_runs(const char *s); /* runs of whitespace -> one space */
/* N1-N5, plus N6 when whitespace_free. */
char *sbs_normalize(const char *s, bool whitespace_free);
char *sbs_strip(const char *s);              /* Python's str.strip() for ASCII whitespace */

/* ---- CPU-time bins (bins.c) ---- */
int sbs_bin_of(double t, const double *edges, int n_edges); /* 0 .. n_edges */
typedef enum { SBS_BIN_SAME, SBS_BIN_FLAGGED, SBS_BIN_DIFFERENT } sbs_bin_agreement;
/* Our time `ours` (median of repeats lo..hi) against SURGE's `published`:
 * the same bin; flagged when an edge between the two bins lies within the
 * measured spread (lo <= edge <= hi, or SURGE's figure within the relative
 * spread (hi-lo)/ours of the edge); else different. */
sbs_bin_agreement sbs_bin_agree(double published, double ours, double lo, double hi, const double *edges, int n_edges);

/* ---- calibration to SURGE's machine (bins_calibrate.c) ---- */
#define SBS_CALIBRATION_MIN_PUBLISHED 0.1 /* s: SURGE printed "%.4f": shorter items' ratios are noise */
#define SBS_CALIBRATION_MIN_ITEMS 3
typedef struct {
  double factor; /* median of our time / SURGE's: this machine's slowness against SURGE's */
  double lo, hi; /* the ratios' quartiles: how closely the items agree */
  double run_lo, run_hi; /* the fastest and slowest single run's ratio: how far this machine's timing wandered */
  size_t used;   /* items with SURGE's time >= the minimum */
} sbs_calibration;
/* From the items SURGE timed at least min_published, but item `skip`
 * (SIZE_MAX: none): 0, or -1 when fewer than SBS_CALIBRATION_MIN_ITEMS
 * were (out->used says how many). ours[i] is item i's median run,
 * run_lo[i] and run_hi[i] its fastest and slowest (NULL: ours). */
int sbs_calibrate(const double *ours, const double *run_lo, const double *run_hi, const double *published, size_t n,
                  double min_published, size_t skip, sbs_calibration *out);
/* Our time (repeats lo..hi) on SURGE's machine: *t, and the range
 * [*tlo, *thi] the repeats and the calibration's runs allow. */
void sbs_calibrated(const sbs_calibration *c, double ours, double lo, double hi, double *t, double *tlo, double *thi);

/* ---- the regen and bins commands ---- */
typedef struct {
  const char *data, *out, *summary, *only, *dump;
  sbs_subset subsets[SBS_N_SUBSETS];
  size_t n_subsets;
  int repeat;              /* >= 1 */
  int jobs;                /* 0: the CPUs */
  bool inproc, mimic, retry_failed, plan, plan_json;
  bool strict;             /* run nothing when an environment is not SURGE's */
  bool quiet_environment;  /* the choice per group already said (verify: once per run, not per subset) */
  sbr_shard shard;         /* count 0: not sharded */
  FILE *report;            /* the fidelity table and the last line (NULL: stdout) */
} sbs_regen_opts;
/* The defaults: subsets dr,bg,tc, one repeat, in-process timers and GCC 9 mimicry on. */
void sbs_regen_opts_init(sbs_regen_opts *o);
/* surgebox regen: its own driver. 0, 1 (bad input), 2 (a failure, also of
 * surgebox for any item), 130 (interrupted). */
int sbs_regen_run(const sbc_ctx *ctx, const sbs_regen_opts *o);
/* The same on a driver the caller owns (verify --benchmark surge, one
 * connection for every subset): failures of surgebox are counted in d,
 * for the caller's sbr_driver_finish. 0, 1, 2 or 130. */
int sbs_regen_on(sbr_driver *d, const sbs_regen_opts *o);
int sbs_regen_main(const sbc_ctx *ctx, int argc, char **argv);
int sbs_bins_main(const sbc_ctx *ctx, int argc, char **argv);
int sbs_drmatrix_main(const sbc_ctx *ctx, int argc, char **argv);
int sbs_eval_execute_main(const sbc_ctx *ctx, int argc, char **argv); /* eval --execute */
bool sbs_in_only(const char *only, size_t index); /* --only I,J,... (NULL: every index) */
/* --only I,J,... (regen's, dr-matrix's), declared once: item indices
 * separated by commas, checked by sbs_only_parse (a usage error) and kept
 * as given in T's only for sbs_in_only. */
int sbs_only_parse(const sbo_parser *p, const sbo_opt *o, const char *v, void *opts);
#define SBS_ONLY_OPT(T) {"only", 0, "I,J,...", "only these item indices", SBO_CALL, SBO_AT(T, only), .call = sbs_only_parse}
/* regen's summary of --out's items (fidelity.h's sbs_summary) with the
 * failures of surgebox in a class of their own: per subset
 * "internal_error": count and mismatches.internal_error: [indices]; their
 * total in *failed (may be NULL). The same for a run and a merge. */
json_object *sbs_regen_summary(json_object *const *outs, const sbs_subset *subsets, size_t n, size_t *failed);

#endif
