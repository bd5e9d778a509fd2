/* FL (Lean) scoring: SURGE's fl_eval / parse_json_result, and its unused
 * extract_code() behind --fl-extract. */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "eval_metrics.h"
#include "eval_pyjson.h"
#include "eval_unicode.h"

typedef struct {
  json_object *root;
  json_object *pass;  /* result.get("pass", False); NULL means None or the default */
  int has_pass;
  size_t n;           /* number of errors */
  json_object **line; /* error["pos"]["line"] */
  json_object **data; /* error["data"] */
} fl_result;

static void fl_free(fl_result *r) {
  json_object_put(r->root);
  free(r->line);
  free(r->data);
}

/* parse_json_result: every error needs ["pos"]["line"] and ["data"]. */
static int fl_parse(const char *text, fl_result *r) {
  memset(r, 0, sizeof *r);
  if (!text || sbe_pyjson_loads(text, strlen(text), &r->root) != 0) return -1;
  if (!json_object_is_type(r->root, json_type_object)) return -1; /* .get on a non-dict */
  r->has_pass = json_object_object_get_ex(r->root, "pass", &r->pass);
  json_object *errs;
  if (!json_object_object_get_ex(r->root, "errors", &errs)) return 0; /* default [] */
  json_type t = json_object_get_type(errs);
  if (t == json_type_string && json_object_get_string_len(errs) == 0) return 0; /* iterates nothing */
  if (t == json_type_object && json_object_object_length(errs) == 0) return 0;
  if (t != json_type_array) return -1; /* None/number/bool not iterable; str chars or dict keys can't be indexed by "pos" */
  r->n = json_object_array_length(errs);
  r->line = sbe_xmalloc((r->n ? r->n : 1) * sizeof *r->line);
  r->data = sbe_xmalloc((r->n ? r->n : 1) * sizeof *r->data);
  for (size_t i = 0; i < r->n; i++) {
    json_object *e = json_object_array_get_idx(errs, i), *pos;
    if (!json_object_is_type(e, json_type_object) || !json_object_object_get_ex(e, "pos", &pos)) return -1;
    if (!json_object_is_type(pos, json_type_object) || !json_object_object_get_ex(pos, "line", &r->line[i]))
      return -1;
    if (!json_object_object_get_ex(e, "data", &r->data[i])) return -1;
  }
  return 0;
}

static int pass_truthy(const fl_result *r) { return r->has_pass && sbe_py_truthy(r->pass); }

/* pred_pass != truth_pass with the default False filled in. */
static int pass_differs(const fl_result *p, const fl_result *t) {
  json_object *f = json_object_new_boolean(0);
  int eq = sbe_py_equal(p->has_pass ? p->pass : f, t->has_pass ? t->pass : f);
  json_object_put(f);
  return !eq;
}

/* jaccard_similarity catches its own exceptions: non-strings give 0. */
static double message_jaccard(json_object *a, json_object *b) {
  if (!json_object_is_type(a, json_type_string) || !json_object_is_type(b, json_type_string)) return 0;
  return sbe_jaccard_n(json_object_get_string(a), (size_t)json_object_get_string_len(a), json_object_get_string(b),
                       (size_t)json_object_get_string_len(b));
}

static double fl_compare(const fl_result *p, const fl_result *t, sbe_score_info *info) {
  if (pass_truthy(p) && pass_truthy(t)) return 1.0;
  if (pass_differs(p, t)) return 0.0;
  if (t->n == 0) return p->n == 0 ? 1.0 : 0.0;
  /* {e.line for e in pred_errors} and `line in set` need hashable lines. */
  for (size_t i = 0; i < p->n; i++)
    if (!sbe_py_hashable(p->line[i])) goto raised;
  for (size_t i = 0; i < t->n; i++)
    if (!sbe_py_hashable(t->line[i])) goto raised;
  double total = 0.0;
  for (size_t i = 0; i < t->n; i++) {
    for (size_t j = 0; j < p->n; j++) {
      if (sbe_py_equal(p->line[j], t->line[i])) { /* the first predicted error on that line */
        total += message_jaccard(t->data[i], p->data[j]);
        break;
      }
    }
  }
  return total / (double)t->n;
raised:
  if (info) info->surge_raised = 1;
  return 0;
}

double sbe_score_fl(const char *raw_pred, const char *gt, int fl_extract, sbe_score_info *info) {
  if (!raw_pred) {
    if (info) info->no_answer = 1;
    return 0;
  }
  char *text = fl_extract ? sbe_fl_extract_code(raw_pred) : NULL;
  fl_result p, t;
  double score = 0;
  int pr = fl_parse(text ? text : raw_pred, &p);
  int tr = pr == 0 ? fl_parse(gt, &t) : (memset(&t, 0, sizeof t), -1);
  if (pr != 0 || tr != 0) {
    if (info) info->parse_failure = 1;
  } else {
    score = fl_compare(&p, &t, info);
  }
  fl_free(&p);
  fl_free(&t);
  free(text);
  return score;
}
