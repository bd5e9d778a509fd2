/* Parser caps and per-step "limits" objects. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

void sbp_limits_default(sbp_limits *l) {
  l->max_line_bytes = SBP_DEFAULT_MAX_LINE;
  l->max_files = SBP_DEFAULT_MAX_FILES;
  l->max_steps = SBP_DEFAULT_MAX_STEPS;
}

static int seconds(sbp_pctx *c, json_object *v, const char *where, const char *key, double *out) {
  if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
    return sbp_fail(c, SBP_E_BAD_LIMITS, "%s.%s must be a number of seconds", where, key);
  double d = json_object_get_double(v);
  if (!isfinite(d) || d <= 0)
    return sbp_fail(c, SBP_E_BAD_LIMITS, "%s.%s must be greater than 0", where, key);
  if (d > SBP_LIMIT_MAX_TIME_S)
    return sbp_fail(c, SBP_E_BAD_LIMITS, "%s.%s = %g is absurd (at most %g seconds)", where, key, d,
                    SBP_LIMIT_MAX_TIME_S);
  *out = d;
  return 0;
}

static int count(sbp_pctx *c, json_object *v, const char *where, const char *key, uint64_t max,
                 uint64_t *out) {
  if (!json_object_is_type(v, json_type_int))
    return sbp_fail(c, SBP_E_BAD_LIMITS, "%s.%s must be a whole number", where, key);
  int64_t i = json_object_get_int64(v);
  if (i <= 0) return sbp_fail(c, SBP_E_BAD_LIMITS, "%s.%s must be greater than 0", where, key);
  /* values above INT64_MAX read back as INT64_MAX: also absurd */
  if ((uint64_t)i > max)
    return sbp_fail(c, SBP_E_BAD_LIMITS, "%s.%s = %lld is absurd (at most %llu)", where, key,
                    (long long)i, (unsigned long long)max);
  *out = (uint64_t)i;
  return 0;
}

int sbp_parse_step_limits(sbp_pctx *c, json_object *v, const char *where, sbp_step_limits *out) {
  memset(out, 0, sizeof *out);
  if (!v) return 0;
  char field[96];
  snprintf(field, sizeof field, "%s%slimits", where, *where ? "." : "");
  if (!json_object_is_type(v, json_type_object))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must be an object", field);
  static const char *const allowed[] = {"time_s", "cpu_time_s", "memory_mib", "pids", "output_bytes", NULL};
  if (sbp_check_fields(c, v, field, allowed) != 0) return -1;
  json_object *x;
  if (json_object_object_get_ex(v, "time_s", &x)) {
    if (seconds(c, x, field, "time_s", &out->time_s) != 0) return -1;
    out->has_time_s = true;
  }
  if (json_object_object_get_ex(v, "cpu_time_s", &x)) {
    if (seconds(c, x, field, "cpu_time_s", &out->cpu_time_s) != 0) return -1;
    out->has_cpu_time_s = true;
  }
  if (json_object_object_get_ex(v, "memory_mib", &x)) {
    if (count(c, x, field, "memory_mib", SBP_LIMIT_MAX_MEMORY_MIB, &out->memory_mib) != 0) return -1;
    out->has_memory_mib = true;
  }
  if (json_object_object_get_ex(v, "pids", &x)) {
    if (count(c, x, field, "pids", SBP_LIMIT_MAX_PIDS, &out->pids) != 0) return -1;
    out->has_pids = true;
  }
  if (json_object_object_get_ex(v, "output_bytes", &x)) {
    if (count(c, x, field, "output_bytes", SBP_LIMIT_MAX_OUTPUT_BYTES, &out->output_bytes) != 0)
      return -1;
    out->has_output_bytes = true;
  }
  return 0;
}
