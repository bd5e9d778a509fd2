/* FL scoring as SURGE's fl_eval behaves (raw prediction through json.loads),
 * and the --fl-extract variant (its extract_code). Expected values from
 * CPython 3.11. */
#include <stdlib.h>

#include "check.h"
#include "eval_metrics.h"

#define GT                                                                                                          \
  "{\"errors\": [{\"severity\": \"error\", \"pos\": {\"line\": 3, \"column\": 2}, \"endPos\": {\"line\": 3, "      \
  "\"column\": 9}, \"data\": \"unknown identifier 'foo'\"}, {\"severity\": \"error\", \"pos\": {\"line\": 7, "     \
  "\"column\": 0}, \"endPos\": {\"line\": 7, \"column\": 4}, \"data\": \"linarith failed to find a contradiction\"}]," \
  " \"pass\": false, \"complete\": false}"
#define NOERR "{\"pass\": false, \"errors\": []}"

int main(void) {
  sbe_score_info info = {0};
  CHECK_NEAR(sbe_score_fl(GT, GT, 0, NULL), 1.0, 0);
  CHECK_NEAR(sbe_score_fl("{\"pass\": true}", "{\"pass\": 1, \"errors\": [{\"pos\": {\"line\": 1}, \"data\": \"x\"}]}", 0,
                          NULL),
             1.0, 0); /* both pass truthy */
  CHECK_NEAR(sbe_score_fl("{\"pass\": true}", GT, 0, NULL), 0.0, 0);
  CHECK_NEAR(sbe_score_fl(NOERR, NOERR, 0, NULL), 1.0, 0);
  CHECK_NEAR(sbe_score_fl("{\"pass\": 0}", NOERR, 0, NULL), 1.0, 0);    /* 0 == False */
  CHECK_NEAR(sbe_score_fl("{\"pass\": null}", NOERR, 0, NULL), 0.0, 0); /* None != False */
  CHECK_NEAR(sbe_score_fl("{\"pass\": false, \"errors\": \"\"}", "{\"pass\": false}", 0, NULL), 1.0, 0);
  CHECK_NEAR(sbe_score_fl("{\"pass\": false, \"errors\": [], \"x\": NaN, \"y\": -Infinity}", NOERR, 0, NULL), 1.0, 0);

  /* per reference error: Jaccard with the first predicted error on that line; 1/4 + 0 over 2 */
  const char *p5 = "{\"pass\": false, \"errors\": [{\"pos\": {\"line\": 9}, \"data\": \"x\"}, {\"pos\": {\"line\": 3}, "
                   "\"data\": \"unknown identifier 'bar'\"}, {\"pos\": {\"line\": 3}, \"data\": \"unknown identifier "
                   "'foo'\"}]}";
  CHECK_NEAR(sbe_score_fl(p5, GT, 0, NULL), 0.25, 1e-15);
  /* predicted errors with no reference errors */
  CHECK_NEAR(sbe_score_fl(p5, "{\"pass\": false, \"errors\": [], \"complete\": false}", 0, NULL), 0.0, 0);

  /* trailing commas: json.loads rejects them; extract_code removes them (7.0 == 7) */
  const char *p6 = "{\"pass\": false, \"errors\": [{\"pos\": {\"line\": 7.0}, \"data\": \"linarith failed\"},],}";
  info = (sbe_score_info){0};
  CHECK_NEAR(sbe_score_fl(p6, GT, 0, &info), 0.0, 0);
  CHECK(info.parse_failure == 1);
  CHECK_NEAR(sbe_score_fl(p6, GT, 1, NULL), 0.16666666666666666, 1e-15);

  /* prose and a fence: 0 as published, parsed with --fl-extract */
  const char *p7 = "The proof fails.\n```json\n{\"pass\": false, \"errors\": [{\"pos\": {\"line\": 3}, \"data\": \"unknown "
                   "identifier 'foo'\"}]}\n```";
  CHECK_NEAR(sbe_score_fl(p7, GT, 0, NULL), 0.0, 0);
  CHECK_NEAR(sbe_score_fl(p7, GT, 1, NULL), 0.5, 1e-15);

  /* extract_code turns \" into ", which breaks this JSON */
  const char *p13 = "```json\n{\"pass\": false, \"errors\": [{\"pos\": {\"line\": 3}, \"data\": \"expected \\\"foo\\\"\"}]}\n```";
  CHECK_NEAR(sbe_score_fl(p13, GT, 1, NULL), 0.0, 0);
  char *code = sbe_fl_extract_code(p13);
  CHECK_STR(code, "{\"pass\": false, \"errors\": [{\"pos\": {\"line\": 3}, \"data\": \"expected \"foo\"\"}]}");
  free(code);
  code = sbe_fl_extract_code("  [1, 2 ,\n ] {\"a\": \"b\\\\\\\\c\",}  ");
  CHECK_STR(code, "[1, 2 ] {\"a\": \"b\\\\c\"}"); /* only ",\\s*" goes */
  free(code);

  /* errors without pos/data, unhashable lines, non-objects: SURGE raises -> 0 */
  CHECK_NEAR(sbe_score_fl("{\"pass\": false, \"errors\": [{\"pos\": {\"line\": 3}}]}", GT, 0, NULL), 0.0, 0);
  info = (sbe_score_info){0};
  CHECK_NEAR(sbe_score_fl("{\"pass\": false, \"errors\": [{\"pos\": {\"line\": [3]}, \"data\": \"x\"}]}", GT, 0, &info),
             0.0, 0);
  CHECK(info.surge_raised == 1);
  CHECK_NEAR(sbe_score_fl("[{\"pass\": false}]", NOERR, 0, NULL), 0.0, 0);
  CHECK_NEAR(sbe_score_fl("{\"pass\": false, \"errors\": []} x", NOERR, 0, NULL), 0.0, 0); /* extra data */
  CHECK_NEAR(sbe_score_fl("{\"pass\": false, \"errors\": [], \"s\": \"a\tb\"}", NOERR, 0, NULL), 0.0, 0); /* control char */
  CHECK_NEAR(sbe_score_fl("{\"pass\": 01}", NOERR, 0, NULL), 0.0, 0);
  CHECK_NEAR(sbe_score_fl(NULL, NOERR, 0, NULL), 0.0, 0);
  /* non-string messages: Jaccard catches its own exception and gives 0 */
  CHECK_NEAR(sbe_score_fl("{\"pass\": false, \"errors\": [{\"pos\": {\"line\": 3}, \"data\": 5}]}", GT, 0, NULL), 0.0, 0);
  /* \u escapes (a surrogate pair) compare as the characters they stand for */
  CHECK_NEAR(sbe_score_fl("{\"pass\": false, \"errors\": [{\"pos\": {\"line\": 1}, \"data\": \"\\ud83d\\ude00 \\u00e9\"}]}",
                          "{\"pass\": false, \"errors\": [{\"pos\": {\"line\": 1}, \"data\": \"\xf0\x9f\x98\x80 \xc3\x89\"}]}",
                          0, NULL),
             1.0, 0);
  return check_exit();
}
