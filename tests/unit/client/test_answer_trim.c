/* client/answer_trim.c on hand-written answer lines: each step's "enforced"
 * object becomes {}, the pairs it lists (a step's hashes, times, limits,
 * cgroup, uid, warnings, argv; the answer's profile) are left out with their
 * commas wherever they stand, nothing else changes (the same keys elsewhere,
 * text that looks like them inside strings, escapes), and a line not of the
 * shape is refused (0: the caller parses it whole). */
#include "answer_trim.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the parse of in through t (trim as given), printed plain; "<null>" when it is not JSON */
static const char *parsed(sbc_trimmer *t, const char *in, bool trim) {
  static char out[4096];
  json_object *o = sbc_trimmer_parse(t, in, strlen(in), trim);
  snprintf(out, sizeof out, "%s", o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : "<null>");
  json_object_put(o);
  return out;
}

/* the trimmed text of in, or "<0>" when refused */
static const char *trim(const char *in) {
  static char out[4096];
  size_t n = sbc_answer_trim(in, strlen(in), out);
  if (!n) return "<0>";
  out[n] = '\0';
  return out;
}

int main(void) {
  /* two steps, both keys in each, nested objects and arrays in them: limits goes with its comma */
  CHECK_STR(trim("{\"id\":\"1\",\"steps\":[{\"status\":\"ok\",\"limits\":{\"time_s\":30.0,\"pids\":128},"
                 "\"enforced\":{\"wall_time\":\"a } ] { [\",\"x\":{\"y\":[1,{\"z\":2}]}},\"name\":\"run\"},"
                 "{\"enforced\":{},\"limits\":{\"a\":1}}],\"queue_time_s\":0.1}"),
            "{\"id\":\"1\",\"steps\":[{\"status\":\"ok\",\"enforced\":{},\"name\":\"run\"},"
            "{\"enforced\":{}}],\"queue_time_s\":0.1}");
  /* a step as the daemon writes it: what is read stays, in order; first, middle and last pairs dropped */
  CHECK_STR(trim("{\"id\":\"7\",\"type\":\"exec\",\"status\":\"ok\",\"steps\":[{\"uid\":17,\"status\":\"ok\","
                 "\"exit_code\":0,\"stdout\":\"\",\"stdout_sha256\":\"e3b0\",\"cpu_time_s\":0.008,\"user_time_s\":0.004,"
                 "\"sys_time_s\":0.004,\"setup_time_s\":0.004,\"cgroup_peak_kb\":256,\"cpu_source\":\"cgroup v1\","
                 "\"cgroup\":\"v1\",\"warnings\":[\"w\",[1]],\"error\":null,\"argv\":[\"true\"]}],"
                 "\"profile\":{\"name\":\"host\",\"manifest_hash\":null},\"queue_time_s\":0.000005}"),
            "{\"id\":\"7\",\"type\":\"exec\",\"status\":\"ok\",\"steps\":[{\"status\":\"ok\",\"exit_code\":0,"
            "\"stdout\":\"\",\"cpu_time_s\":0.008,\"error\":null}],\"queue_time_s\":0.000005}");
  /* spaces around the separators (any JSON writer's), a step of dropped pairs only, profile last */
  CHECK_STR(trim("{ \"steps\" : [ { \"uid\" : 1 , \"argv\" : [ ] } , { \"name\" : \"b\" , \"cgroup\" : null } ] , "
                 "\"profile\" : { } }"),
            "{ \"steps\" : [ {  } , { \"name\" : \"b\" } ] }");
  /* the same names elsewhere stay: at the top, in a request's echo beneath a step, in cases, profile in a step */
  CHECK_STR(trim("{\"limits\":{\"a\":1},\"uid\":3,\"steps\":[{\"cases\":[{\"limits\":{\"b\":2},\"enforced\":{\"c\":3},"
                 "\"uid\":4}],\"profile\":1}],\"enforced\":{\"d\":4}}"),
            "{\"limits\":{\"a\":1},\"uid\":3,\"steps\":[{\"cases\":[{\"limits\":{\"b\":2},\"enforced\":{\"c\":3},"
            "\"uid\":4}],\"profile\":1}],\"enforced\":{\"d\":4}}");
  /* a program's output that looks like the keys, with escaped quotes and backslashes, is text */
  CHECK_STR(trim("{\"steps\":[{\"stdout\":\"\\\",\\\"enforced\\\":{\\\"k\\\":1} \\\\\",\"limits\":{\"t\":1}}]}"),
            "{\"steps\":[{\"stdout\":\"\\\",\\\"enforced\\\":{\\\"k\\\":1} \\\\\"}]}");
  /* enforced that is not an object stays as it is; a dropped key goes whatever its value */
  CHECK_STR(trim("{\"steps\":[{\"enforced\":null,\"limits\":[1,2]}]}"), "{\"steps\":[{\"enforced\":null}]}");
  /* a dropped pair whose value is cut short: refused */
  CHECK_STR(trim("{\"steps\":[{\"uid\":}]}"), "<0>");
  CHECK_STR(trim("{\"steps\":[{\"argv\":[\"a\"}]}"), "<0>");
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

  /* one trimmer over many lines: short then longer (its copy grows), a line
   * the trim refuses (parsed whole), not JSON, trim off (nothing dropped) */
  sbc_trimmer t = {0};
  CHECK_STR(parsed(&t, "{\"steps\":[{\"uid\":1}]}", true), "{\"steps\":[{}]}");
  CHECK_STR(parsed(&t, "{\"id\":\"2\",\"steps\":[{\"status\":\"ok\",\"limits\":{\"t\":1},\"argv\":[\"a\",\"b\"]}],"
                       "\"profile\":{\"name\":\"host\"}}", true),
            "{\"id\":\"2\",\"steps\":[{\"status\":\"ok\"}]}");
  CHECK_STR(parsed(&t, "[1,2]", true), "[1,2]");
  CHECK_STR(parsed(&t, "{\"a\":", true), "<null>");
  CHECK_STR(parsed(&t, "{\"steps\":[{\"uid\":1}]}", true), "{\"steps\":[{}]}"); /* the tokener reset after a failure */
  CHECK_STR(parsed(&t, "{\"steps\":[{\"uid\":1}]}", false), "{\"steps\":[{\"uid\":1}]}");
  sbc_trimmer_free(&t);
  CHECK(t.buf == NULL && t.tok == NULL);
  return check_exit();
}
