/* Per-item dispatch, following SURGE's re_errors() and evall(). */
#include "eval_item.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval_extract.h"

static const char *const subset_names[SBE_CAT_COUNT] = {NULL, "ml", "cl", "rl", "sc", "tc", "bg", "dr", "fl"};

const char *sbe_category_subset(sbe_category c) {
  return (unsigned)c < SBE_CAT_COUNT ? subset_names[c] : NULL;
}

sbe_category sbe_subset_category(const char *name) {
  for (int c = 1; c < SBE_CAT_COUNT && name; c++)
    if (!strcasecmp(name, subset_names[c])) return (sbe_category)c;
  return SBE_CAT_UNKNOWN;
}

static json_object *get(json_object *o, const char *key) {
  json_object *v = NULL;
  return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *get_str(json_object *o, const char *key) {
  json_object *v = get(o, key);
  return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static int str_is(json_object *o, const char *key, const char *want) {
  const char *s = get_str(o, key);
  return s && !strcmp(s, want);
}

sbe_category sbe_item_category(json_object *item) {
  json_object *c = get(item, "custom_categoey"); /* SURGE copies the misspelled key over */
  if (!c) c = get(item, "custom_category");
  double v;
  if (json_object_is_type(c, json_type_int))
    v = (double)json_object_get_int64(c);
  else if (json_object_is_type(c, json_type_double))
    v = json_object_get_double(c);
  else
    return SBE_CAT_UNKNOWN;
  if (!(v >= 1 && v <= 8) || v != floor(v)) return SBE_CAT_UNKNOWN;
  if (v == 1 && get(get(item, "custom_features"), "difficulty")) return SBE_CAT_CL;
  return (sbe_category)(int)v;
}

sbe_rl_task sbe_item_rl_task(json_object *item) {
  if (sbe_item_category(item) != SBE_CAT_RL) return SBE_RL_NONE;
  json_object *f = get(item, "custom_features");
  if (str_is(f, "repo", "PlotNeuralNet")) return SBE_RL_PLOTNEURALNET;
  if (str_is(f, "run_instruction", "python 24_game.py")) return SBE_RL_24_GAME;
  if (str_is(f, "repo", "https://github.com/psychopurp/sudoku-player"))
    return str_is(f, "task", "sudoku") ? SBE_RL_SUDOKU : SBE_RL_UNKNOWN; /* keeps its own task */
  if (!get(f, "repo") || !get(f, "run_instruction")) return SBE_RL_UNKNOWN; /* KeyError in SURGE */
  return str_is(f, "run_instruction", "make") ? SBE_RL_TUOJ_COW : SBE_RL_TUOJ_CAR;
}

const char *sbe_rl_task_name(sbe_rl_task t) {
  static const char *const names[] = {"none", "TUOJ,car", "TUOJ,cow", "24_game", "PlotNeuralNet", "sudoku", "unknown"};
  return (unsigned)t < sizeof names / sizeof *names ? names[t] : "unknown";
}

static double exact(const char *raw, const char *gt, sbe_score_info *info) {
  char *out = sbe_extract(raw);
  if (!out) info->no_answer = 1;
  double s = out && gt && !strcmp(out, gt);
  free(out);
  return s;
}

static double ratio(const char *raw, const char *gt, sbe_score_info *info) {
  char *out = sbe_extract(raw);
  if (!out) info->no_answer = 1, info->surge_raised = 1; /* SequenceMatcher(None, gt, None) raises */
  double s = out && gt ? sbe_seq_ratio(gt, out) : 0;
  free(out);
  return s;
}

static double score_rl(json_object *item, const char *raw, const char *gt, sbe_score_info *info) {
  switch (sbe_item_rl_task(item)) {
    case SBE_RL_TUOJ_CAR:
    case SBE_RL_TUOJ_COW: return exact(raw, gt, info);
    case SBE_RL_24_GAME:
    case SBE_RL_PLOTNEURALNET: return ratio(raw, gt, info);
    case SBE_RL_SUDOKU: return sbe_score_sudoku(raw, gt, info);
    default: info->unknown_task = 1; return 0;
  }
}

double sbe_score_item_ex(json_object *item, const char *raw, unsigned options, sbe_score_info *out_info) {
  sbe_score_info local;
  sbe_score_info *info = out_info ? out_info : &local;
  memset(info, 0, sizeof *info);
  const char *gt = get_str(item, "gt");
  json_object *features = get(item, "custom_features");
  sbe_category cat = sbe_item_category(item);
  if (!raw && cat != SBE_CAT_UNKNOWN) {
    info->no_answer = 1;
    return 0;
  }
  double s = 0;
  switch (cat) {
    case SBE_CAT_ML:
    case SBE_CAT_CL: s = exact(raw, gt, info); break;
    case SBE_CAT_SC:
    case SBE_CAT_TC: s = sbe_score_sc_tc(raw, gt, get_str(features, "fid"), info); break;
    case SBE_CAT_BG:
    case SBE_CAT_DR: {
      char *out = sbe_extract(raw);
      if (!out) info->no_answer = 1;
      s = sbe_jaccard(gt, out);
      free(out);
      break;
    }
    case SBE_CAT_RL: s = score_rl(item, raw, gt, info); break;
    case SBE_CAT_FL: s = sbe_score_fl(raw, gt, (options & SBE_SCORE_FL_EXTRACT) != 0, info); break;
    default: info->unknown_task = 1; break;
  }
  if (isnan(s)) { /* SURGE would carry NaN into its means; we count it and score 0 */
    info->nan_other = 1;
    s = 0;
  }
  return s;
}

double sbe_score_item(json_object *item, const char *raw, sbe_score_info *info) {
  return sbe_score_item_ex(item, raw, 0, info);
}
