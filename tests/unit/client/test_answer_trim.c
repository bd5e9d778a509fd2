/* client/answer_trim.c on hand-written answer lines: each step's "enforced"
 * and "limits" objects become {}, nothing else changes (the same keys
 * elsewhere, text that looks like them inside strings, escapes), and a line
 * not of the shape is refused (0: the caller parses it whole). */
#include "answer_trim.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

/* the trimmed text of in, or "<0>" when refused */
static const char *trim(const char *in) {
  static char out[4096];
  size_t n = sbc_answer_trim(in, strlen(in), out);
  if (!n) return "<0>";
  out[n] = '\0';
  return out;
}

int main(void) {
  /* two steps, both keys in each, nested objects and arrays in them */
  CHECK_STR(trim("{\"id\":\"1\",\"steps\":[{\"status\":\"ok\",\"limits\":{\"time_s\":30.0,\"pids\":128},"
                 "\"enforced\":{\"wall_time\":\"a } ] { [\",\"x\":{\"y\":[1,{\"z\":2}]}},\"name\":\"run\"},"
                 "{\"enforced\":{},\"limits\":{\"a\":1}}],\"queue_time_s\":0.1}"),
            "{\"id\":\"1\",\"steps\":[{\"status\":\"ok\",\"limits\":{},\"enforced\":{},\"name\":\"run\"},"
            "{\"enforced\":{},\"limits\":{}}],\"queue_time_s\":0.1}");
  /* the same names elsewhere stay: at the top, in a request's echo beneath a step, in cases */
  CHECK_STR(trim("{\"limits\":{\"a\":1},\"steps\":[{\"cases\":[{\"limits\":{\"b\":2},\"enforced\":{\"c\":3}}]}],"
                 "\"enforced\":{\"d\":4}}"),
            "{\"limits\":{\"a\":1},\"steps\":[{\"cases\":[{\"limits\":{\"b\":2},\"enforced\":{\"c\":3}}]}],"
            "\"enforced\":{\"d\":4}}");
  /* a program's output that looks like the keys, with escaped quotes and backslashes, is text */
  CHECK_STR(trim("{\"steps\":[{\"stdout\":\"\\\",\\\"enforced\\\":{\\\"k\\\":1} \\\\\",\"limits\":{\"t\":1}}]}"),
            "{\"steps\":[{\"stdout\":\"\\\",\\\"enforced\\\":{\\\"k\\\":1} \\\\\",\"limits\":{}}]}");
  /* a value that is not an object stays as it is */
  CHECK_STR(trim("{\"steps\":[{\"enforced\":null,\"limits\":[1,2]}]}"), "{\"steps\":[{\"enforced\":null,\"limits\":[1,2]}]}");
  /* "steps" not an array, no steps: unchanged */
  CHECK_STR(trim("{\"steps\":{\"enforced\":{\"a\":1}}}"), "{\"steps\":{\"enforced\":{\"a\":1}}}");
  CHECK_STR(trim("{\"id\":null,\"type\":\"error\",\"error\":{\"code\":\"busy\"}}"),
            "{\"id\":null,\"type\":\"error\",\"error\":{\"code\":\"busy\"}}");
  /* refused: not an object, unbalanced, brackets that do not match, a string never closed */
  CHECK_STR(trim("[1]"), "<0>");
  CHECK_STR(trim(""), "<0>");
  CHECK_STR(trim("{\"steps\":[{\"enforced\":{\"a\":1}]}"), "<0>");
  CHECK_STR(trim("{\"steps\":[{\"enforced\":{\"a\":[1}}]}"), "<0>");
  CHECK_STR(trim("{\"steps\":[{\"limits\":{\"a\":\"1}}]}"), "<0>");
  CHECK_STR(trim("{\"a\":1"), "<0>");
  CHECK_STR(trim("{\"a\":1]"), "<0>");
  return check_exit();
}
