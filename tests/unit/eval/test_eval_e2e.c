/* End to end: `surgebox eval` (sbe_eval_main) on the hand-written fixtures
 * in fixtures/, checking --json, --items, --by and --fl-extract. Expected
 * numbers were computed independently in Python from SURGE's scoring rules.
 * Usage: test_eval_e2e FIXTURE_DIR SCRATCH_DIR */
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "eval_cli.h"

static char fixtures[1024], scratch[1024];

static const char *fx(const char *name) {
  static char buf[4][1200];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", fixtures, name);
  return buf[k];
}

static const char *sc(const char *name) {
  static char buf[4][1200];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", scratch, name);
  return buf[k];
}

/* Runs sbe_eval_main with stdout and stderr sent to files; returns its status. */
static int run_eval(const char *out_path, const char **args) {
  char *argv[32];
  int argc = 0;
  argv[argc++] = (char *)"eval";
  for (; *args; args++) argv[argc++] = (char *)*args;
  argv[argc] = NULL;
  fflush(stdout);
  fflush(stderr);
  int so = dup(1), se = dup(2);
  int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int fe = open(sc("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fd, 1);
  dup2(fe, 2);
  sbc_ctx ctx;
  sbc_ctx_init(&ctx);
  int status = sbe_eval_main(&ctx, argc, argv);
  fflush(stdout);
  fflush(stderr);
  dup2(so, 1);
  dup2(se, 2);
  close(fd), close(fe), close(so), close(se);
  return status;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

static json_object *model(json_object *root, const char *name) {
  json_object *models = json_object_object_get(root, "models");
  for (size_t i = 0; i < json_object_array_length(models); i++) {
    json_object *m = json_object_array_get_idx(models, i);
    if (!strcmp(json_object_get_string(json_object_object_get(m, "model")), name)) return m;
  }
  return NULL;
}

static double num(json_object *o, const char *a, const char *b) {
  json_object *v = json_object_object_get(o, a);
  if (b) v = json_object_object_get(v, b);
  return v ? json_object_get_double(v) : -1;
}

/* Score of (subset, index, model) in an --items file, or -1. */
static double item_score(const char *path, const char *subset, int index, const char *name) {
  FILE *f = fopen(path, "r");
  char line[1024];
  double found = -1;
  while (f && fgets(line, sizeof line, f)) {
    json_object *o = json_tokener_parse(line);
    if (!strcmp(json_object_get_string(json_object_object_get(o, "subset")), subset) &&
        json_object_get_int(json_object_object_get(o, "index")) == index &&
        !strcmp(json_object_get_string(json_object_object_get(o, "model")), name))
      found = json_object_get_double(json_object_object_get(o, "score"));
    json_object_put(o);
  }
  if (f) fclose(f);
  return found;
}

static size_t count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  size_t n = 0;
  int c;
  while (f && (c = fgetc(f)) != EOF) n += c == '\n';
  if (f) fclose(f);
  return n;
}

static void jsonl_published(void) {
  const char *args[] = {"--references", fx("refs.json"), "--predictions", fx("preds.jsonl"), "--json", "--items",
                        sc("items.jsonl"), NULL};
  CHECK(run_eval(sc("out.json"), args) == 0);
  json_object *root = json_tokener_parse(slurp(sc("out.json")));
  CHECK(root != NULL);
  CHECK(json_object_get_boolean(json_object_object_get(root, "fl_extract")) == 0);
  json_object *m1 = model(root, "m1"), *def = model(root, "default");
  CHECK(m1 && def);
  CHECK_NEAR(num(m1, "scores", "ML_CPP"), 100.0, 1e-9);
  CHECK_NEAR(num(m1, "scores", "ML_Rust"), 100.0, 1e-9);
  CHECK_NEAR(num(m1, "scores", "ML_Others"), 0.0, 1e-9);
  CHECK_NEAR(num(m1, "counts", "ML_Others"), 1, 0);
  CHECK_NEAR(num(m1, "counts", "ML_Python"), 0, 0);
  CHECK_NEAR(num(m1, "scores", "CL"), 50.0, 1e-9);
  CHECK_NEAR(num(m1, "scores", "RL"), 96.15384615384616, 1e-9);
  CHECK_NEAR(num(m1, "scores", "SC"), 82.0833333338125, 1e-9);
  CHECK_NEAR(num(m1, "scores", "TC"), 50.0, 1e-9);
  CHECK_NEAR(num(m1, "scores", "BG_CPP"), 66.66666666666666, 1e-9);
  CHECK_NEAR(num(m1, "scores", "BG_Java"), 100.0, 1e-9);
  CHECK_NEAR(num(m1, "scores", "BG_Python"), 8.333333333333332, 1e-9);
  CHECK_NEAR(num(m1, "scores", "DR"), 87.5, 1e-9);
  CHECK_NEAR(num(m1, "scores", "FL"), 50.0, 1e-9);
  CHECK_NEAR(num(m1, "avg", NULL), 71.88519813524168, 1e-9);
  CHECK_NEAR(num(m1, "flags", "nan_constant"), 1, 0); /* tc 0: "[5, 5, 5, 5]" */
  CHECK_NEAR(num(m1, "flags", "parse_failure"), 1, 0); /* fl 1: trailing comma */
  CHECK_NEAR(num(m1, "scored", NULL), 18, 0);
  CHECK_NEAR(num(def, "scores", "DR"), 100.0, 1e-9);
  CHECK_NEAR(num(def, "scores", "FL"), 0.0, 1e-9);
  CHECK_NEAR(num(def, "avg", NULL), 100.0, 1e-9);
  CHECK_NEAR(num(def, "missing", "ml"), 3, 0);
  CHECK_NEAR(num(def, "missing", "dr"), 1, 0);
  json_object *un = json_object_object_get(root, "unmatched");
  CHECK_NEAR(num(un, "unknown_subset", NULL), 1, 0);
  CHECK_NEAR(num(un, "bad_index", NULL), 1, 0);
  CHECK_NEAR(num(un, "question_not_found", NULL), 1, 0);
  CHECK_NEAR(num(un, "question_ambiguous", NULL), 1, 0);
  CHECK_NEAR(num(un, "malformed", NULL), 2, 0);
  CHECK_NEAR(num(un, "duplicates", NULL), 1, 0);
  json_object_put(root);

  const char *items = sc("items.jsonl");
  CHECK(count_lines(items) == 20);
  CHECK_NEAR(item_score(items, "cl", 1, "m1"), 0.0, 0); /* matched by question */
  CHECK_NEAR(item_score(items, "rl", 1, "m1"), 0.9230769230769231, 1e-12);
  CHECK_NEAR(item_score(items, "sc", 0, "m1"), 0.6666666666750001, 1e-12);
  CHECK_NEAR(item_score(items, "sc", 1, "m1"), 0.97500000000125, 1e-12);
  CHECK_NEAR(item_score(items, "bg", 0, "m1"), 0.6666666666666666, 1e-12);
  CHECK_NEAR(item_score(items, "bg", 2, "m1"), 0.08333333333333333, 1e-12);
  CHECK_NEAR(item_score(items, "dr", 1, "m1"), 0.75, 1e-12);
  CHECK_NEAR(item_score(items, "dr", 0, "default"), 1.0, 0); /* the first of two counts */
  CHECK_NEAR(item_score(items, "ml", 0, "default"), -1, 0);

  const char *err = slurp(sc("stderr.txt"));
  CHECK(strstr(err, "6 prediction(s) not scored") != NULL);
  CHECK(strstr(err, "1 duplicate prediction(s)") != NULL);
  CHECK(strstr(err, "model default: 16 reference item(s) without a prediction") != NULL);
  CHECK(strstr(err, "constant list") != NULL);
}

static void jsonl_fl_extract(void) {
  const char *args[] = {"--references", fx("refs.json"), "--predictions", fx("preds.jsonl"), "--json", "--fl-extract", NULL};
  CHECK(run_eval(sc("out.json"), args) == 0);
  json_object *root = json_tokener_parse(slurp(sc("out.json")));
  CHECK(json_object_get_boolean(json_object_object_get(root, "fl_extract")) == 1);
  CHECK_NEAR(num(model(root, "m1"), "scores", "FL"), 75.0, 1e-9);
  CHECK_NEAR(num(model(root, "m1"), "avg", NULL), 74.15792540796896, 1e-9);
  CHECK_NEAR(num(model(root, "default"), "scores", "FL"), 50.0, 1e-9);
  CHECK_NEAR(num(model(root, "default"), "avg", NULL), 75.0, 1e-9);
  json_object_put(root);
  /* the table says so in its header */
  const char *targs[] = {"--references", fx("refs.json"), "--predictions", fx("preds.jsonl"), "--fl-extract", NULL};
  CHECK(run_eval(sc("table.txt"), targs) == 0);
  const char *table = slurp(sc("table.txt"));
  CHECK(strstr(table, "FL: --fl-extract") != NULL);
  CHECK(strstr(table, "71.89") == NULL && strstr(table, "74.16") != NULL);
}

static void by_breakdowns(void) {
  const char *args[] = {"--data", fixtures, "--predictions", fx("preds.jsonl"), "--json", "--by", "config", NULL};
  /* --data needs DIR/<subset>.json: the fixtures directory has none */
  CHECK(run_eval(sc("out.json"), args) == 2);
  const char *cargs[] = {"--references", fx("refs.json"), "--predictions", fx("preds.jsonl"), "--json", "--by", "config", NULL};
  CHECK(run_eval(sc("out.json"), cargs) == 0);
  json_object *root = json_tokener_parse(slurp(sc("out.json")));
  json_object *by = json_object_object_get(root, "by");
  CHECK(json_object_array_length(by) == 3);
  const char *titles[3] = {"DR by compiler", "DR by standard", "DR by optimisation"};
  const char *keys[3][2] = {{"clang++", "g++"}, {"C++11", "C++17"}, {"O0", "O2"}};
  const double want[3][2] = {{75.0, 100.0}, {100.0, 75.0}, {75.0, 100.0}};
  for (int s = 0; s < 3; s++) {
    json_object *sec = json_object_array_get_idx(by, (size_t)s);
    CHECK_STR(json_object_get_string(json_object_object_get(sec, "title")), titles[s]);
    json_object *groups = json_object_object_get(sec, "groups");
    json_object *m1 = json_object_array_get_idx(json_object_object_get(sec, "models"), 0);
    CHECK_STR(json_object_get_string(json_object_object_get(m1, "model")), "m1");
    for (int k = 0; k < 2; k++) {
      CHECK_STR(json_object_get_string(json_object_array_get_idx(groups, (size_t)k)), keys[s][k]);
      CHECK_NEAR(num(m1, "scores", keys[s][k]), want[s][k], 1e-9);
    }
  }
  json_object_put(root);

  const char *dargs[] = {"--references", fx("refs.json"), "--predictions", fx("preds.jsonl"), "--json", "--by", "difficulty", NULL};
  CHECK(run_eval(sc("out.json"), dargs) == 0);
  root = json_tokener_parse(slurp(sc("out.json")));
  json_object *sec = json_object_array_get_idx(json_object_object_get(root, "by"), 0);
  CHECK_STR(json_object_get_string(json_object_object_get(sec, "title")), "CL by difficulty");
  json_object *m1 = json_object_array_get_idx(json_object_object_get(sec, "models"), 0);
  CHECK_NEAR(num(m1, "scores", "1"), 0.0, 1e-9);
  CHECK_NEAR(num(m1, "scores", "3"), 100.0, 1e-9);
  json_object_put(root);

  const char *largs[] = {"--references", fx("refs.json"), "--predictions", fx("preds.jsonl"), "--by", "language", NULL};
  CHECK(run_eval(sc("table.txt"), largs) == 0);
  const char *table = slurp(sc("table.txt"));
  CHECK(strstr(table, "ML by language") && strstr(table, "CL by language") && strstr(table, "BG by language"));
}

static void surge_layout(void) {
  const char *args[] = {"--references", fx("refs.json"), "--predictions", fx("preds_surge.json"), "--json", "--items",
                        sc("items_surge.jsonl"), NULL};
  CHECK(run_eval(sc("out.json"), args) == 0);
  json_object *root = json_tokener_parse(slurp(sc("out.json")));
  json_object *a = model(root, "modelA_sys_0shot"), *b = model(root, "modelB_sys_cot");
  CHECK(a && b && !model(root, "modelA_sys_0shoteval"));
  CHECK_NEAR(num(a, "scores", "ML_CPP"), 100.0, 1e-9);
  CHECK_NEAR(num(a, "scores", "DR"), 100.0, 1e-9);
  CHECK_NEAR(num(a, "counts", "DR"), 2, 0);
  CHECK_NEAR(num(a, "avg", NULL), 100.0, 1e-9);
  CHECK_NEAR(num(b, "scores", "ML_CPP"), 0.0, 1e-9);
  CHECK_NEAR(num(b, "flags", "no_answer"), 1, 0); /* null answer */
  CHECK_NEAR(num(b, "avg", NULL), 0.0, 1e-9);
  CHECK_NEAR(num(json_object_object_get(root, "unmatched"), "question_not_found", NULL), 1, 0);
  json_object_put(root);
  /* the two DR items share a question: told apart by gt */
  CHECK_NEAR(item_score(sc("items_surge.jsonl"), "dr", 1, "modelA_sys_0shot"), 1.0, 0);
  CHECK_NEAR(item_score(sc("items_surge.jsonl"), "dr", 0, "modelA_sys_0shot"), 1.0, 0);
  CHECK_NEAR(item_score(sc("items_surge.jsonl"), "dr", 1, "modelB_sys_cot"), 0.0, 0);
  CHECK(strstr(slurp(sc("stderr.txt")), "extra key(s) holding no text") != NULL);
}

/* A regen output (items carrying "exec"): items regen did not regenerate
 * still hold the published gt; their predictions are left out and counted,
 * and a group left without predictions is "-" / null, never 0. */
static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) fputs(text, f), fclose(f);
}

#define BG_ITEM(lang, gt, exec)                                                                             \
  "{\"custom_category\": 6, \"custom_features\": {\"language\": \"" lang "\"}, \"question\": \"q " gt "\", " \
  "\"gt\": \"" gt "\", \"gt_published\": \"" gt "\", \"exec\": " exec "}"
#define PRED(i, gt) "{\"subset\": \"bg\", \"index\": " #i ", \"model\": \"m\", \"prediction\": \"Output:\\n```\\n" gt "\\n```\"}\n"

static void regen_output(void) {
  write_file(sc("regen_bg.json"),
             "[" BG_ITEM("cpp", "X0", "{\"complete\": true, \"status\": \"compile_error\", \"regenerated\": true, \"class\": null}") ","
             BG_ITEM("python3", "P1", "{\"complete\": true, \"status\": \"missing_toolchain\", \"missing\": \"python3.8\", "
                                      "\"regenerated\": false, \"class\": \"missing_toolchain\"}") ","
             BG_ITEM("java", "J2", "{\"complete\": true, \"status\": \"timeout\", \"regenerated\": true, \"class\": \"timeout\"}") ","
             BG_ITEM("python3", "P3", "{\"complete\": false}") ","
             BG_ITEM("cpp", "X4", "{\"complete\": true, \"status\": \"ok\", \"regenerated\": true, \"class\": \"other\"}") ","
             BG_ITEM("java", "J5", "{\"complete\": true, \"status\": \"missing_toolchain\", \"missing\": \"java\", "
                                   "\"regenerated\": false, \"class\": \"missing_toolchain\"}") ","
             BG_ITEM("cpp", "X6", "{\"complete\": true, \"status\": \"ok\", \"regenerated\": true, \"class\": null}") "]");
  /* every prediction equals its item's gt: scored, each would be 1 */
  write_file(sc("regen_preds.jsonl"), PRED(0, "X0") PRED(1, "P1") PRED(2, "J2") PRED(3, "P3") PRED(4, "X4"));
  const char *args[] = {"--references", sc("regen_bg.json"), "--predictions", sc("regen_preds.jsonl"), "--json",
                        "--by", "language", NULL};
  CHECK(run_eval(sc("out.json"), args) == 0);
  json_object *root = json_tokener_parse(slurp(sc("out.json")));
  json_object *m = model(root, "m");
  CHECK(m != NULL);
  CHECK_NEAR(num(m, "scores", "BG_CPP"), 100.0, 1e-9);
  CHECK_NEAR(num(m, "counts", "BG_CPP"), 2, 0); /* items 0 and 4 */
  json_object *scores = json_object_object_get(m, "scores"), *v = (json_object *)1;
  CHECK(json_object_object_get_ex(scores, "BG_Java", &v) && v == NULL); /* null: no prediction left */
  v = (json_object *)1;
  CHECK(json_object_object_get_ex(scores, "BG_Python", &v) && v == NULL);
  v = (json_object *)1;
  CHECK(json_object_object_get_ex(scores, "DR", &v) && v == NULL);
  CHECK_NEAR(num(m, "counts", "BG_Java"), 0, 0);
  CHECK_NEAR(num(m, "avg", NULL), 100.0, 1e-9);
  CHECK_NEAR(num(m, "scored", NULL), 2, 0);
  CHECK_NEAR(num(m, "missing", "bg"), 1, 0); /* item 6; 1, 3 and 5 are not regenerated, not "without a prediction" */
  CHECK_STR(json_object_to_json_string_ext(json_object_object_get(root, "excluded"), JSON_C_TO_STRING_PLAIN),
            "{\"missing_toolchain:python3.8\":1,\"timeout\":1,\"not_run\":1}");
  json_object *sec = json_object_array_get_idx(json_object_object_get(root, "by"), 0);
  CHECK_STR(json_object_get_string(json_object_object_get(sec, "title")), "BG by language");
  json_object *bm = json_object_array_get_idx(json_object_object_get(sec, "models"), 0);
  CHECK_NEAR(num(bm, "scores", "cpp"), 100.0, 1e-9);
  v = (json_object *)1;
  CHECK(json_object_object_get_ex(json_object_object_get(bm, "scores"), "java", &v) && v == NULL);
  v = (json_object *)1;
  CHECK(json_object_object_get_ex(json_object_object_get(bm, "scores"), "python3", &v) && v == NULL);
  CHECK_NEAR(num(bm, "counts", "python3"), 0, 0);
  json_object_put(root);

  const char *targs[] = {"--references", sc("regen_bg.json"), "--predictions", sc("regen_preds.jsonl"), "--by",
                         "language", NULL};
  CHECK(run_eval(sc("table.txt"), targs) == 0);
  const char *table = slurp(sc("table.txt"));
  CHECK(strstr(table, "excluded (not regenerated by regen, so not scored): 3 item(s) (missing_toolchain:python3.8 1, "
                      "timeout 1, not_run 1)\n") != NULL);
  CHECK(strstr(table, "\nBG by language\nModel      cpp     java  python3\nm       100.00        -        -\n") != NULL);
  CHECK(strstr(table, " 100.00       -       - ") != NULL); /* the main table: BG_CPP, BG_Java, BG_Python */
  if (check_failures_) fputs(table, stderr);
  CHECK(strstr(slurp(sc("stderr.txt")), "eval: excluded (not regenerated by regen, so not scored): 3 item(s)") != NULL);
}

static void usage_errors(void) {
  const char *none[] = {NULL};
  CHECK(run_eval(sc("out.txt"), none) == 1);
  const char *both[] = {"--references", fx("refs.json"), "--data", fixtures, "--predictions", fx("preds.jsonl"), NULL};
  CHECK(run_eval(sc("out.txt"), both) == 1);
  const char *badby[] = {"--references", fx("refs.json"), "--predictions", fx("preds.jsonl"), "--by", "model", NULL};
  CHECK(run_eval(sc("out.txt"), badby) == 1);
  const char *missing[] = {"--references", fx("refs.json"), "--predictions", fx("no-such-file"), NULL};
  CHECK(run_eval(sc("out.txt"), missing) == 2);
  const char *help[] = {"--help", NULL};
  CHECK(run_eval(sc("out.txt"), help) == 0);
}

/* --strict: the fixture's predictions include unmatched, malformed and
 * duplicate lines (exit 2, scores still printed); clean predictions exit 0;
 * predictions that match nothing exit 2 with "nothing was scored". */
static void strict(void) {
  const char *dirty[] = {"--references", fx("refs.json"), "--predictions", fx("preds.jsonl"), "--strict", NULL};
  CHECK(run_eval(sc("out.txt"), dirty) == 2);
  CHECK(strstr(slurp(sc("stderr.txt")), "eval --strict: ") != NULL);
  CHECK(strstr(slurp(sc("stderr.txt")), "prediction(s) not scored") != NULL);
  CHECK(strstr(slurp(sc("out.txt")), "ML") != NULL); /* the table is still printed */
  const char *lax[] = {"--references", fx("refs.json"), "--predictions", fx("preds.jsonl"), NULL};
  CHECK(run_eval(sc("out.txt"), lax) == 0);
  write_file(sc("clean.jsonl"), "{\"subset\": \"ml\", \"index\": 0, \"model\": \"m1\", \"prediction\": \"Output: 42\"}\n"
                                "{\"subset\": \"ml\", \"index\": 1, \"model\": \"m1\", \"prediction\": \"Output: hello\"}\n");
  const char *clean[] = {"--references", fx("refs.json"), "--predictions", sc("clean.jsonl"), "--strict", NULL};
  CHECK(run_eval(sc("out.txt"), clean) == 0);
  CHECK(strstr(slurp(sc("stderr.txt")), "--strict") == NULL);
  write_file(sc("nothing.jsonl"), "{\"subset\": \"xx\", \"index\": 0, \"prediction\": \"Output: 1\"}\n");
  const char *nothing[] = {"--references", fx("refs.json"), "--predictions", sc("nothing.jsonl"), "--strict", NULL};
  CHECK(run_eval(sc("out.txt"), nothing) == 2);
  CHECK(strstr(slurp(sc("stderr.txt")), "eval --strict: nothing was scored (1 prediction(s) not matched") != NULL);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s FIXTURE_DIR SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  snprintf(fixtures, sizeof fixtures, "%s", argv[1]);
  snprintf(scratch, sizeof scratch, "%s/eval_e2e", argv[2]);
  mkdir(scratch, 0755);
  jsonl_published();
  jsonl_fl_extract();
  by_breakdowns();
  surge_layout();
  regen_output();
  usage_errors();
  strict();
  return check_exit();
}
