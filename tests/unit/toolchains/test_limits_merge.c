/* The one merge rule of a step's limits (sbt_limits_resolve): the sandbox's
 * defaults < the toolchain file's < the request's, a layer's time_s without
 * its cpu_time_s setting the CPU limit too. Values written by hand. */
#include "check.h"
#include "toolchain.h"

#include <string.h>

static sbp_step_limits read_limits(const char *json) {
  sbp_step_limits l;
  char err[256] = "";
  json_object *o = json_tokener_parse(json);
  sbp_limits_read_result rc = sbp_limits_read(o, "limits", &l, err, sizeof err);
  CHECK(rc == SBP_LIMITS_OK);
  if (rc != SBP_LIMITS_OK) fprintf(stderr, "  %s: %s\n", json, err);
  json_object_put(o);
  return l;
}

int main(void) {
  sb_limits l;
  /* nothing given: the defaults (runners/limits.c) */
  sbt_limits_resolve(&l, NULL, NULL);
  CHECK_NEAR(l.wall_time_s, 30, 0);
  CHECK_NEAR(l.cpu_time_s, 30, 0);
  CHECK(l.memory_mib == 2048 && l.pids == 128 && l.output_bytes == 8388608);

  /* the toolchain over the defaults, the request over the toolchain */
  sbp_step_limits tc = read_limits("{\"time_s\":120,\"pids\":256,\"output_bytes\":4096}");
  sbp_step_limits req = read_limits("{\"cpu_time_s\":5,\"output_bytes\":100}");
  sbt_limits_resolve(&l, &tc, &req);
  CHECK_NEAR(l.wall_time_s, 120, 0);
  CHECK_NEAR(l.cpu_time_s, 5, 0);
  CHECK(l.pids == 256);
  CHECK(l.output_bytes == 100);
  CHECK(l.memory_mib == 2048);

  /* the request's time_s alone sets its CPU limit over the toolchain's cpu_time_s */
  tc = read_limits("{\"cpu_time_s\":50,\"memory_mib\":4096}");
  req = read_limits("{\"time_s\":10}");
  sbt_limits_resolve(&l, &tc, &req);
  CHECK_NEAR(l.wall_time_s, 10, 0);
  CHECK_NEAR(l.cpu_time_s, 10, 0);
  CHECK(l.memory_mib == 4096);

  /* a request without a toolchain (raw steps) */
  req = read_limits("{\"pids\":3}");
  sbt_limits_resolve(&l, NULL, &req);
  CHECK(l.pids == 3);
  CHECK_NEAR(l.wall_time_s, 30, 0);

  /* the reader's answers per kind of mistake, and nothing set on a mistake */
  sbp_step_limits out;
  char err[256];
  json_object *o = json_tokener_parse("[1]");
  CHECK(sbp_limits_read(o, "x.limits", &out, err, sizeof err) == SBP_LIMITS_NOT_OBJECT);
  CHECK_STR(err, "x.limits must be an object");
  json_object_put(o);
  o = json_tokener_parse("{\"pid\":3}");
  CHECK(sbp_limits_read(o, "x.limits", &out, err, sizeof err) == SBP_LIMITS_UNKNOWN_FIELD);
  CHECK_STR(err, "x.limits: unknown field \"pid\": did you mean \"pids\"?");
  json_object_put(o);
  o = json_tokener_parse("{\"memory_mib\":1048577}");
  CHECK(sbp_limits_read(o, "x.limits", &out, err, sizeof err) == SBP_LIMITS_BAD_VALUE);
  CHECK_STR(err, "x.limits.memory_mib = 1048577 is absurd (at most 1048576)");
  json_object_put(o);
  CHECK(sbp_limits_read(NULL, "x.limits", &out, err, sizeof err) == SBP_LIMITS_OK);
  CHECK(!out.has_time_s && !out.has_cpu_time_s && !out.has_memory_mib && !out.has_pids && !out.has_output_bytes);
  return check_exit();
}
