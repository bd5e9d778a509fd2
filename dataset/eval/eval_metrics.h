/* SURGE's per-item metrics, reproduced from its published evaluation:
 * Jaccard, Python float(), numerical / sorting / Monte Carlo scoring,
 * difflib's SequenceMatcher ratio, sudoku and FL scoring.
 * Strings are UTF-8; every computation runs on Unicode code points. A NULL
 * string stands for Python's None (no answer). */
#ifndef SURGEBOX_EVAL_METRICS_H
#define SURGEBOX_EVAL_METRICS_H
#include <stddef.h>
#include <stdint.h>

/* What happened while scoring; every field is 0 or 1. */
typedef struct {
  int no_answer;       /* extraction returned None */
  int parse_failure;   /* SC/TC numbers or FL JSON did not parse */
  int length_mismatch; /* sorting lists of different lengths (SC/TC numerical pads instead) */
  int nan_constant;    /* Spearman of a constant (or single-element) list: NaN in SURGE, 0 here */
  int nan_other;       /* any other NaN score (e.g. nan in the numbers): NaN in SURGE, 0 here */
  int surge_raised;    /* SURGE's own code raises or crashes on this input */
  int unknown_task;    /* RL item whose task SURGE does not score */
} sbe_score_info;

/* Jaccard similarity of the sets of tokens of a.lower().split() and
 * b.lower().split(); both empty -> 1; NULL (None) on either side -> 0. */
double sbe_jaccard(const char *a, const char *b);
double sbe_jaccard_n(const char *a, size_t na, const char *b, size_t nb);

/* Python's float(s). Returns 0 and sets *out, or -1 (ValueError). */
int sbe_py_float(const char *s, double *out);
int sbe_py_float_cp(const uint32_t *cp, size_t n, double *out);

/* A list of floats parsed from program output. */
typedef struct {
  double *v;
  size_t n;
} sbe_numlist;
/* SURGE's parse_numerical_output. Returns 0, or -1 when it raises. */
int sbe_parse_numerical(const char *s, sbe_numlist *out);
void sbe_numlist_free(sbe_numlist *l);

/* Spearman's rho with average ranks for ties; NaN for fewer than two items,
 * a constant list, or a NaN value (as scipy.stats.spearmanr). */
double sbe_spearman(const double *x, const double *y, size_t n);

/* SC/TC branches on the *extracted* prediction (NULL = None) and the reference.
 * info may be NULL. */
double sbe_score_numerical(const char *pred, const char *gt, sbe_score_info *info);
double sbe_score_sorting(const char *pred, const char *gt, sbe_score_info *info);
double sbe_score_montecarlo(const char *pred, const char *gt, sbe_score_info *info);
/* Dispatches on custom_features.fid and extracts from the raw prediction. */
double sbe_score_sc_tc(const char *raw_pred, const char *gt, const char *fid, sbe_score_info *info);

/* difflib.SequenceMatcher(None, a, b).ratio() on code points, autojunk on. */
double sbe_seq_ratio(const char *a, const char *b);
double sbe_seq_ratio_cp(const uint32_t *a, size_t na, const uint32_t *b, size_t nb);

/* RL sudoku: max of ratio(gt, extract(raw)) and ratio(gt, extract(board cut
 * before the last "------- 0 -------")); 0 when SURGE raises. */
double sbe_score_sudoku(const char *raw_pred, const char *gt, sbe_score_info *info);

/* FL: raw prediction and reference parsed as JSON (Python's json.loads);
 * fl_extract applies SURGE's unused extract_code() to the prediction first. */
double sbe_score_fl(const char *raw_pred, const char *gt, int fl_extract, sbe_score_info *info);
/* SURGE's extract_code(): first ``` block (optional "json\n"), trailing commas
 * removed, \" -> " and \\ -> \. Returns a malloc'd string. */
char *sbe_fl_extract_code(const char *content);
#endif
