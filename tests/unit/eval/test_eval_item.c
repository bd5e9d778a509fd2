/* Item category/task resolution and per-category dispatch (SURGE's
 * re_errors() and evall()). Expected values from CPython 3.11. */
#include <json-c/json.h>
#include <math.h>

#include "check.h"
#include "eval_item.h"

static double score(const char *item_json, const char *raw, sbe_score_info *info) {
  json_object *item = json_tokener_parse(item_json);
  CHECK(item != NULL);
  double s = sbe_score_item(item, raw, info);
  json_object_put(item);
  return s;
}

static sbe_category cat(const char *item_json) {
  json_object *item = json_tokener_parse(item_json);
  sbe_category c = sbe_item_category(item);
  json_object_put(item);
  return c;
}

static sbe_rl_task task(const char *item_json) {
  json_object *item = json_tokener_parse(item_json);
  sbe_rl_task t = sbe_item_rl_task(item);
  json_object_put(item);
  return t;
}

#define ML "{\"custom_categoey\": 1, \"custom_features\": {\"language\": \"C\", \"lines\": 3}, \"gt\": \"DDDBA\"}"
#define CL "{\"custom_categoey\": 1, \"custom_features\": {\"language\": \"Python\", \"difficulty\": 5}, \"gt\": \"4\"}"
#define PNN                                                                                     \
  "{\"custom_categoey\": 3, \"custom_features\": {\"repo\": \"PlotNeuralNet\"}, \"gt\": "       \
  "\"\\n\\\\documentclass{standalone}\\n\\\\begin{document}\\n\"}"
#define G24                                                                                                   \
  "{\"custom_categoey\": 3, \"custom_features\": {\"repo\": \"TUOJ\", \"run_instruction\": \"python 24_game.py\"}," \
  " \"gt\": \"4 * 6 = 24\"}"
#define COW "{\"custom_categoey\": 3, \"custom_features\": {\"repo\": \"TUOJ\", \"run_instruction\": \"make\"}, \"gt\": \"12.5\"}"
#define CAR "{\"custom_categoey\": 3, \"custom_features\": {\"repo\": \"TUOJ\", \"run_instruction\": \"./main\"}, \"gt\": \"x\"}"
#define SUDOKU_REPO "\"repo\": \"https://github.com/psychopurp/sudoku-player\", \"run_instruction\": \"./main.exe -s game.txt\""
#define BG                                                                                         \
  "{\"custom_category\": 6, \"custom_features\": {\"language\": \"python3\"}, \"gt\": \"Traceback " \
  "(most recent call last):\\nNameError: name 'x' is not defined\\n\"}"
#define DR "{\"custom_category\": 7, \"custom_features\": {\"key\": \"g++-C++11--O2\"}, \"gt\": \"a b c d\\n\"}"
#define TC "{\"custom_category\": 5, \"custom_features\": {\"fid\": \"merge_sort.py\"}, \"gt\": \"[1, 2, 3]\"}"
#define SC "{\"custom_category\": 4, \"custom_features\": {\"fid\": \"gd_ov.py\"}, \"gt\": \"[1.0, 2.0]\"}"
#define FL "{\"custom_category\": 8, \"custom_features\": {}, \"gt\": \"{\\\"pass\\\": true, \\\"errors\\\": []}\"}"

int main(void) {
  /* categories, the misspelled key, CL from difficulty */
  CHECK(cat(ML) == SBE_CAT_ML);
  CHECK(cat(CL) == SBE_CAT_CL);
  CHECK(cat("{\"custom_categoey\": 1, \"custom_category\": 4, \"custom_features\": {}}") == SBE_CAT_ML);
  CHECK(cat("{\"custom_category\": 2, \"custom_features\": {}}") == SBE_CAT_CL);
  CHECK(cat("{\"custom_category\": 7.0}") == SBE_CAT_DR);
  CHECK(cat("{\"custom_category\": 9}") == SBE_CAT_UNKNOWN);
  CHECK(cat("{\"custom_category\": \"7\"}") == SBE_CAT_UNKNOWN);
  CHECK(cat(BG) == SBE_CAT_BG && cat(DR) == SBE_CAT_DR && cat(TC) == SBE_CAT_TC && cat(SC) == SBE_CAT_SC && cat(FL) == SBE_CAT_FL);
  CHECK(sbe_subset_category("DR") == SBE_CAT_DR && sbe_subset_category("fl") == SBE_CAT_FL &&
        sbe_subset_category("xx") == SBE_CAT_UNKNOWN);
  CHECK_STR(sbe_category_subset(SBE_CAT_CL), "cl");

  /* RL tasks, in SURGE's order of checks */
  CHECK(task(PNN) == SBE_RL_PLOTNEURALNET);
  CHECK(task(G24) == SBE_RL_24_GAME);
  CHECK(task(COW) == SBE_RL_TUOJ_COW);
  CHECK(task(CAR) == SBE_RL_TUOJ_CAR);
  CHECK(task("{\"custom_categoey\": 3, \"custom_features\": {" SUDOKU_REPO ", \"task\": \"sudoku\"}}") == SBE_RL_SUDOKU);
  CHECK(task("{\"custom_categoey\": 3, \"custom_features\": {" SUDOKU_REPO ", \"task\": \"other\"}}") == SBE_RL_UNKNOWN);
  CHECK(task(ML) == SBE_RL_NONE);

  sbe_score_info info;
  CHECK_NEAR(score(ML, "Output: DDDBA", &info), 1.0, 0);
  CHECK_NEAR(score(ML, "Output: DDDBA.", &info), 0.0, 0);
  CHECK_NEAR(score(CL, "Thought: ...\nOutput:\n4", &info), 1.0, 0);
  CHECK_NEAR(score(PNN, "Output:\n```latex\n\\documentclass{standalone}\n\\begin{document}\n```", &info),
             0.9772727272727273, 1e-15);
  CHECK_NEAR(score(G24, "Output: 4*6 = 24", &info), 0.8888888888888888, 1e-15);
  CHECK_NEAR(score(COW, "Output: `12.5`", &info), 1.0, 0);
  CHECK_NEAR(score(COW, "Output: 12.50", &info), 0.0, 0);
  CHECK_NEAR(score(BG, "Output:\nNameError: name 'x' is not defined", &info), 0.5454545454545454, 1e-15);
  CHECK_NEAR(score(DR, "Output: A B c", &info), 0.75, 1e-15);
  CHECK_NEAR(score(FL, "{\"pass\": true}", &info), 1.0, 0);
  CHECK_NEAR(score(SC, "Output: [1.0, 2.0]", &info), 1.0, 0);

  /* flags */
  CHECK_NEAR(score(DR, NULL, &info), 0.0, 0);
  CHECK(info.no_answer == 1);
  CHECK_NEAR(score(BG, "**only bold**", &info), 0.0, 0);
  CHECK(info.no_answer == 1);
  CHECK_NEAR(score(TC, "Output: [2, 2, 2]", &info), 0.0, 0);
  CHECK(info.nan_constant == 1 && info.no_answer == 0);
  CHECK_NEAR(score(SC, "Output: [nan, 2.0]", &info), 0.0, 0);
  CHECK(info.nan_other == 1);
  CHECK_NEAR(score(SC, "Output: [1.0, two]", &info), 0.0, 0);
  CHECK(info.parse_failure == 1 && info.nan_other == 0);
  CHECK_NEAR(score("{\"custom_categoey\": 3, \"custom_features\": {" SUDOKU_REPO ", \"task\": \"other\"}, \"gt\": \"x\"}",
                   "Output: x", &info),
             0.0, 0);
  CHECK(info.unknown_task == 1);
  CHECK_NEAR(score(G24, "**x**", &info), 0.0, 0); /* SequenceMatcher(None, gt, None) raises */
  CHECK(info.surge_raised == 1);
  CHECK_NEAR(sbe_score_item(NULL, "x", NULL), 0.0, 0);
  return check_exit();
}
