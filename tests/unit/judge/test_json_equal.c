/* judge/json_equal.c: function-call results as Python's == would see them. */
#include "check.h"
#include "judge.h"

static bool jeq(const char *e, const char *a) {
  sbj_compare c;
  sbj_compare_default(&c);
  json_object *je = json_tokener_parse(e), *ja = json_tokener_parse(a);
  bool r = sbj_json_equal(&c, je, ja, NULL, 0);
  json_object_put(je);
  json_object_put(ja);
  return r;
}

static const char *jwhy(const char *e, const char *a) {
  static char why[160];
  sbj_compare c;
  sbj_compare_default(&c);
  json_object *je = json_tokener_parse(e), *ja = json_tokener_parse(a);
  sbj_json_equal(&c, je, ja, why, sizeof why);
  json_object_put(je);
  json_object_put(ja);
  return why;
}

int main(void) {
  CHECK(jeq("[1, 2, [3, 4]]", "[1, 2, [3, 4]]")); /* a tuple (3, 4) arrives as [3, 4] */
  CHECK(!jeq("[1, 2]", "[2, 1]"));
  CHECK(!jeq("[1, 2]", "[1, 2, 3]"));
  CHECK(jeq("3", "3.0"));                         /* 3 == 3.0 */
  CHECK(jeq("true", "1"));                        /* True == 1 */
  CHECK(!jeq("true", "2"));
  CHECK(jeq("0.1", "0.1000000001"));              /* within 1e-6 */
  CHECK(!jeq("0.1", "0.1001"));
  CHECK(jeq("[0.30000000000000004]", "[0.3]"));   /* 0.1 + 0.2 */
  CHECK(!jeq("12345678901", "12345678902"));      /* ints exactly */
  CHECK(jeq("{\"a\": [1.5, null], \"b\": \"x\"}", "{\"b\": \"x\", \"a\": [1.5000000001, null]}"));
  CHECK(!jeq("{\"a\": 1}", "{\"a\": 1, \"b\": 2}"));
  CHECK(!jeq("{\"a\": 1}", "{\"b\": 1}"));
  CHECK(!jeq("\"1\"", "1"));                      /* "1" != 1 */
  CHECK(jeq("null", "null"));
  CHECK(!jeq("null", "0"));
  CHECK(!jeq("[]", "{}"));
  CHECK_STR(jwhy("[1, [2, 3]]", "[1, [2, 4]]"), "[1][1]: expected 3, got 4");
  CHECK_STR(jwhy("{\"k\": [1]}", "{\"k\": []}"), "[\"k\"]: expected 1 items, got 0");
  CHECK_STR(jwhy("[1]", "[\"1\"]"), "[0]: expected int, got string");
  return check_exit();
}
