/* A SURGE dataset item (json-c object) -> its category, its RL task, and its
 * score for one raw model answer, dispatched as SURGE's evall() does. */
#ifndef SURGEBOX_EVAL_ITEM_H
#define SURGEBOX_EVAL_ITEM_H
#include <json-c/json.h>

#include "eval_metrics.h"

typedef enum {
  SBE_CAT_UNKNOWN = 0,
  SBE_CAT_ML = 1,
  SBE_CAT_CL = 2, /* category 1 with a custom_features.difficulty */
  SBE_CAT_RL = 3,
  SBE_CAT_SC = 4,
  SBE_CAT_TC = 5,
  SBE_CAT_BG = 6,
  SBE_CAT_DR = 7,
  SBE_CAT_FL = 8,
} sbe_category;
#define SBE_CAT_COUNT 9

typedef enum {
  SBE_RL_NONE = 0,    /* not an RL item */
  SBE_RL_TUOJ_CAR,
  SBE_RL_TUOJ_COW,
  SBE_RL_24_GAME,
  SBE_RL_PLOTNEURALNET,
  SBE_RL_SUDOKU,
  SBE_RL_UNKNOWN,     /* SURGE prints "error" and scores nothing */
} sbe_rl_task;

/* custom_categoey (ml/cl/rl spelling) or custom_category; 1 + difficulty -> CL. */
sbe_category sbe_item_category(json_object *item);
sbe_rl_task sbe_item_rl_task(json_object *item);
/* "ml", "cl", ... "fl", or NULL; and back (case-insensitive). */
const char *sbe_category_subset(sbe_category c);
sbe_category sbe_subset_category(const char *name);
const char *sbe_rl_task_name(sbe_rl_task t);

#define SBE_SCORE_FL_EXTRACT 1u /* apply SURGE's extract_code() to FL predictions */

/* Score in [0, 1] of raw_prediction (NULL = missing) against item; info (may
 * be NULL) is cleared and then flagged. NaN results are reported as 0. */
double sbe_score_item(json_object *item, const char *raw_prediction, sbe_score_info *info);
double sbe_score_item_ex(json_object *item, const char *raw_prediction, unsigned options, sbe_score_info *info);
#endif
