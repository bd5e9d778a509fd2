/* CRUXEval's rules and pass@k (SCORING.md), every expected value by hand. */
#include "check.h"
#include "cruxeval.h"

#include <stdlib.h>

static sbx_sample sample(const char *code, const char *input, const char *output) {
  sbx_sample s = {"sample_0", code, input, output, strlen(code), strlen(input), strlen(output)};
  return s;
}

/* The verdict of a hand-written answer. */
static int verdict(const char *answer) {
  json_object *o = json_tokener_parse(answer);
  sbc_result r;
  sbc_result_of(o, &r);
  json_object_put(o);
  int v = sbx_verdict(&r);
  sbc_result_free(&r);
  return v;
}

static const char *list_str(const int *v, size_t n) {
  static char buf[256];
  json_object *l = sbx_sample_list(v, n);
  snprintf(buf, sizeof buf, "%s", json_object_to_json_string_ext(l, JSON_C_TO_STRING_PLAIN));
  json_object_put(l);
  return buf;
}

static int gens_check(const char *text, const sbx_data *d) {
  char err[256];
  json_object *g = json_tokener_parse(text);
  int rc = sbx_generations_check(g, d, err, sizeof err);
  json_object_put(g);
  return rc;
}

int main(void) {
  /* verdicts: ok passes; any end of the program fails; the machinery's no verdict */
  CHECK(verdict("{\"id\":\"0\",\"type\":\"exec\",\"status\":\"ok\",\"steps\":[{\"name\":\"run\",\"status\":\"ok\"}]}") == 1);
  CHECK(verdict("{\"id\":\"0\",\"type\":\"exec\",\"status\":\"runtime_error\",\"steps\":[]}") == 0);
  CHECK(verdict("{\"id\":\"0\",\"type\":\"exec\",\"status\":\"timeout\",\"steps\":[]}") == 0);
  CHECK(verdict("{\"id\":\"0\",\"type\":\"exec\",\"status\":\"memory_limit\",\"steps\":[]}") == 0);
  CHECK(verdict("{\"id\":\"0\",\"type\":\"exec\",\"status\":\"internal_error\",\"steps\":[]}") == -1);
  CHECK(verdict("{\"id\":\"0\",\"type\":\"exec\",\"status\":\"cancelled\",\"steps\":[]}") == -1);
  CHECK(verdict("{\"id\":\"0\",\"type\":\"error\",\"error\":{\"code\":\"internal\",\"message\":\"x\"}}") == -1);
  CHECK(verdict("{\"id\":\"0\",\"type\":\"exec\",\"steps\":[]}") == -1); /* unreadable: no status */

  /* pass@k: 1 - prod_{j=n-c+1}^{n} (1 - k/j), 1.0 when n - c < k */
  CHECK_NEAR(sbx_pass_at_k(10, 0, 1), 0.0, 1e-12);
  CHECK_NEAR(sbx_pass_at_k(10, 3, 1), 0.3, 1e-12);           /* 1 - 7/8*8/9*9/10 */
  CHECK_NEAR(sbx_pass_at_k(10, 3, 5), 11.0 / 12.0, 1e-12);   /* 1 - 3/8*4/9*5/10 */
  CHECK_NEAR(sbx_pass_at_k(10, 6, 5), 1.0, 0);
  CHECK_NEAR(sbx_pass_at_k(6, 1, 5), 5.0 / 6.0, 1e-12);      /* 1 - (1 - 5/6) */
  CHECK_NEAR(sbx_pass_at_k(4, 2, 1), 0.5, 1e-12);            /* 1 - 2/3*3/4 */
  CHECK_NEAR(sbx_pass_at_k(3, 2, 1), 2.0 / 3.0, 1e-12);      /* 1 - 1/2*2/3 */
  /* the quirks: fewer than k results and n - c < k is 1.0, even with c = 0 */
  CHECK_NEAR(sbx_pass_at_k(1, 1, 5), 1.0, 0);
  CHECK_NEAR(sbx_pass_at_k(3, 0, 5), 1.0, 0);
  CHECK_NEAR(sbx_pass_at_k(2, 0, 1), 0.0, 0);

  /* result lists: dropped (-1) leave no entry; nothing passed -> [false] * n */
  CHECK_STR(list_str((int[]){1, -1, 0, 1}, 4), "[true,false,true]");
  CHECK_STR(list_str((int[]){-1, -1, -1}, 3), "[false,false,false]");
  CHECK_STR(list_str((int[]){0, -1}, 2), "[false,false]");
  CHECK_STR(list_str((int[]){-1, 1}, 2), "[true]");

  /* which generations run */
  sbx_sample s = sample("def f(a, b):\n    return a + b", "1, 2", "3");
  CHECK(sbx_keeps(SBX_OUTPUT, &s, "3", 1));
  CHECK(!sbx_keeps(SBX_OUTPUT, &s, "f(1, 2)", 7));
  CHECK(!sbx_keeps(SBX_OUTPUT, &s, "0 + f(1, 2) * 1", 15));
  CHECK(sbx_keeps(SBX_OUTPUT, &s, "f(1,2)", 6)); /* only the exact text */
  CHECK(sbx_keeps(SBX_INPUT, &s, "f(0, 3)", 7));
  CHECK(!sbx_keeps(SBX_INPUT, &s, "0, 3", 4));
  CHECK(!sbx_keeps(SBX_INPUT, &s, "f (0, 3)", 8));
  CHECK(sbx_keeps(SBX_INPUT, &s, "x\0f(", 4)); /* a NUL does not end the text */
  /* what runs: the reference output on the left, in both modes */
  size_t len;
  char *p = sbx_program(&s, "f(0, 3)", 7, &len);
  CHECK_STR(p, "def f(a, b):\n    return a + b\nassert 3 == f(0, 3)");
  CHECK(len == strlen(p));
  free(p);

  /* the scored file's floats, as Python's repr */
  json_object *f = sbx_pyfloat(100.0);
  CHECK_STR(json_object_to_json_string(f), "100.0");
  json_object_put(f);
  f = sbx_pyfloat(0.1 + 0.2);
  CHECK_STR(json_object_to_json_string(f), "0.30000000000000004");
  json_object_put(f);
  f = sbx_pyfloat(0.0);
  CHECK_STR(json_object_to_json_string(f), "0.0");
  json_object_put(f);
  f = sbx_pyfloat(1e-05);
  CHECK_STR(json_object_to_json_string(f), "1e-05");
  json_object_put(f);
  f = sbx_pyfloat(12.5);
  CHECK_STR(json_object_to_json_string(f), "12.5");
  json_object_put(f);
  f = sbx_pyfloat(30.0);
  CHECK_STR(json_object_to_json_string(f), "30.0");
  json_object_put(f);

  /* the generations file's shape */
  sbx_sample two[2] = {sample("def f(x): return x", "1", "1"), sample("def f(x): return x", "2", "2")};
  two[1].id = "sample_1";
  sbx_data d = {NULL, two, 2};
  CHECK(gens_check("{\"sample_0\":[\"1\"],\"sample_1\":[\"2\",\"3\"]}", &d) == 0);
  CHECK(gens_check("[[\"1\"],[\"2\"]]", &d) < 0);                                   /* not an object */
  CHECK(gens_check("{\"sample_0\":[\"1\"],\"sample_1\":[\"2\"],\"sample_9\":[\"1\"]}", &d) < 0); /* unknown id */
  CHECK(gens_check("{\"sample_0\":\"1\",\"sample_1\":[\"2\"]}", &d) < 0);           /* not a list */
  CHECK(gens_check("{\"sample_0\":[1],\"sample_1\":[\"2\"]}", &d) < 0);             /* not a string */
  CHECK(gens_check("{\"sample_0\":[\"1\"],\"sample_1\":[\"2\",null]}", &d) < 0);    /* not a string */
  CHECK(gens_check("{\"sample_0\":[\"1\"]}", &d) < 0);                               /* sample_1 missing */
  CHECK(gens_check("{\"sample_0\":[\"1\"],\"sample_1\":[]}", &d) < 0);              /* empty list */
  return check_exit();
}
