/* Shared state of one `surgebox eval` run: references, predictions, scores.
 * Internal to eval_cli.c, eval_load.c and eval_report.c. */
#ifndef SURGEBOX_EVAL_RUN_H
#define SURGEBOX_EVAL_RUN_H
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

#include "eval_item.h"

typedef struct {
  json_object *item; /* borrowed from a loaded reference file */
  size_t question_hash;
  char *not_regenerated;     /* a regen output's item whose "gt" is not this machine's (the reason), else NULL */
  unsigned char excluded_counted; /* a prediction for it was left out and counted (sbe_run.excluded) */
} sbe_ref;

typedef struct {
  json_object **files; /* roots of the loaded reference files */
  size_t nfiles;
  sbe_ref *items[SBE_CAT_COUNT]; /* per subset, in file order: index = position */
  size_t count[SBE_CAT_COUNT];
  char **own_keys; /* the dataset's own keys (not model names in SURGE's layout) */
  size_t nown;
  size_t skipped; /* reference items with no known category */
} sbe_refs;

/* One model's scores: score[cat][index], present[cat][index]. */
typedef struct {
  char *name;
  double *score[SBE_CAT_COUNT];
  unsigned char *present[SBE_CAT_COUNT];
  size_t nscored;
  size_t flags[7]; /* sums of sbe_score_info fields, in declaration order */
} sbe_model;

typedef struct {
  size_t unknown_subset, bad_index, question_not_found, question_ambiguous, malformed, duplicates,
      non_text_keys;
  /* a known subset with no reference items loaded (not in the data directory,
   * e.g. not regenerated into OUT): counted per subset, said in one line */
  size_t subset_absent, subset_absent_by[SBE_CAT_COUNT];
} sbe_pred_stats;

typedef struct {
  sbe_refs refs;
  sbe_model *models;
  size_t nmodels;
  sbe_pred_stats stats;
  unsigned options; /* SBE_SCORE_* */
  const unsigned char *exclude[SBE_CAT_COUNT]; /* per subset: items whose predictions are not scored (NULL: none) */
  json_object *excluded;  /* predicted items of a regen output not regenerated: {"<reason>": n} (NULL: none) */
  size_t excluded_total;
} sbe_run;

int sbe_refs_load_file(sbe_refs *r, const char *path);
int sbe_refs_load_dir(sbe_refs *r, const char *dir);
void sbe_refs_free(sbe_refs *r);
/* Reads predictions in either layout and scores each one. */
int sbe_run_predictions(sbe_run *run, const char *path);
void sbe_run_free(sbe_run *run);

extern const char *const sbe_flag_names[7];

/* Items of a regen output (eval_regen.c), as verify --benchmark surge judges
 * them: why item's "gt" is not a reference regenerated here ("not_run",
 * "missing_toolchain:julia", "timeout", "internal_error", ...), or NULL (it
 * is, or item is a published one, without "exec"). buf holds composed reasons. */
const char *sbe_not_regenerated(json_object *item, bool regen_output, char *buf, size_t n);
/* Is this list of items a regen output (any item with an "exec" record)? */
bool sbe_regen_output(json_object *items);
/* A prediction for such an item: left out, its item counted once. */
void sbe_count_excluded(sbe_run *run, sbe_ref *ref);
/* "excluded (...): N (reason n, ...)\n" when any, to out. */
void sbe_print_excluded(const sbe_run *run, const char *prefix, FILE *out);
/* {"<reason>": n} (a new object; {} when none). */
json_object *sbe_excluded_json(const sbe_run *run);

/* Output. */
int sbe_write_items(const sbe_run *run, const char *path);
void sbe_report_missing(const sbe_run *run, FILE *err);
/* --strict: 2 (with a line on err naming how many and why) when a prediction
 * line was not scored (unmatched, malformed, a duplicate, an excluded item)
 * or no prediction was scored at all; else 0. */
int sbe_strict_status(const sbe_run *run, const char *prog, FILE *err);
void sbe_print_table(const sbe_run *run, FILE *out);
void sbe_print_json(const sbe_run *run, const char *by, FILE *out);
json_object *sbe_json(const sbe_run *run, const char *by); /* what sbe_print_json prints */
void sbe_print_by(const sbe_run *run, const char *by, FILE *out);
json_object *sbe_by_json(const sbe_run *run, const char *by);
/* Shortest "%.*g" that reads back as d, and a json-c number printed that way. */
void sbe_fmt_double(char *buf, size_t n, double d);
json_object *sbe_json_num(double d);
const char *sbe_feature_str(json_object *item, const char *key); /* custom_features[key] if a string */
int sbe_name_width(const sbe_run *run);                           /* widest model name, at least 5 */
#endif
