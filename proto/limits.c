/* Parser caps and "limits" objects: the one reader of a limits override,
 * used for a request's steps (here) and for toolchain files (toolchains/def.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

void sbp_limits_default(sbp_limits *l) {
  l->max_line_bytes = SBP_DEFAULT_MAX_LINE;
  l->max_files = SBP_DEFAULT_MAX_FILES;
  l->max_steps = SBP_DEFAULT_MAX_STEPS;
}

static int seconds(json_object *v, const char *where, const char *key, double *out, char *err, size_t n) {
  if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
    return snprintf(err, n, "%s.%s must be a number of seconds", where, key), -1;
  double d = json_object_get_double(v);
  if (!isfinite(d) || d <= 0) return snprintf(err, n, "%s.%s must be greater than 0", where, key), -1;
  if (d > SBP_LIMIT_MAX_TIME_S)
    return snprintf(err, n, "%s.%s = %g is absurd (at most %g seconds)", where, key, d, SBP_LIMIT_MAX_TIME_S), -1;
  *out = d;
  return 0;
}

static int count(json_object *v, const char *where, const char *key, uint64_t max, uint64_t *out, char *err,
                 size_t n) {
  if (!json_object_is_type(v, json_type_int)) return snprintf(err, n, "%s.%s must be a whole number", where, key), -1;
  int64_t i = json_object_get_int64(v);
  if (i <= 0) return snprintf(err, n, "%s.%s must be greater than 0", where, key), -1;
  /* values above INT64_MAX read back as INT64_MAX: also absurd */
  if ((uint64_t)i > max)
    return snprintf(err, n, "%s.%s = %lld is absurd (at most %llu)", where, key, (long long)i,
                    (unsigned long long)max),
           -1;
  *out = (uint64_t)i;
  return 0;
}

sbp_limits_read_result sbp_limits_read(json_object *v, const char *field, sbp_step_limits *out, char *err,
                                       size_t n) {
  memset(out, 0, sizeof *out);
  if (!v) return SBP_LIMITS_OK;
  if (!json_object_is_type(v, json_type_object)) return snprintf(err, n, "%s must be an object", field), SBP_LIMITS_NOT_OBJECT;
  static const char *const allowed[] = {"time_s", "cpu_time_s", "memory_mib", "pids", "output_bytes", NULL};
  const char *key = sbp_unknown_field(v, allowed);
  if (key) {
    char clip[SBP_CLIP_MAX], hint[96];
    sbp_field_hint(key, allowed, hint, sizeof hint);
    snprintf(err, n, "%s: unknown field \"%s\"%s", field, sbp_clip(key, strlen(key), clip), hint);
    return SBP_LIMITS_UNKNOWN_FIELD;
  }
  json_object *x;
  if (json_object_object_get_ex(v, "time_s", &x)) {
    if (seconds(x, field, "time_s", &out->time_s, err, n) != 0) return SBP_LIMITS_BAD_VALUE;
    out->has_time_s = true;
  }
  if (json_object_object_get_ex(v, "cpu_time_s", &x)) {
    if (seconds(x, field, "cpu_time_s", &out->cpu_time_s, err, n) != 0) return SBP_LIMITS_BAD_VALUE;
    out->has_cpu_time_s = true;
  }
  if (json_object_object_get_ex(v, "memory_mib", &x)) {
    if (count(x, field, "memory_mib", SBP_LIMIT_MAX_MEMORY_MIB, &out->memory_mib, err, n) != 0)
      return SBP_LIMITS_BAD_VALUE;
    out->has_memory_mib = true;
  }
  if (json_object_object_get_ex(v, "pids", &x)) {
    if (count(x, field, "pids", SBP_LIMIT_MAX_PIDS, &out->pids, err, n) != 0) return SBP_LIMITS_BAD_VALUE;
    out->has_pids = true;
  }
  if (json_object_object_get_ex(v, "output_bytes", &x)) {
    if (count(x, field, "output_bytes", SBP_LIMIT_MAX_OUTPUT_BYTES, &out->output_bytes, err, n) != 0)
      return SBP_LIMITS_BAD_VALUE;
    out->has_output_bytes = true;
  }
  return SBP_LIMITS_OK;
}

int sbp_parse_step_limits(sbp_pctx *c, json_object *v, const char *where, sbp_step_limits *out) {
  char field[96], err[256];
  /* "steps[0].limits"; "compile_" makes "compile_limits" */
  snprintf(field, sizeof field, "%s%slimits", where, *where && where[strlen(where) - 1] != '_' ? "." : "");
  switch (sbp_limits_read(v, field, out, err, sizeof err)) {
  case SBP_LIMITS_OK: return 0;
  case SBP_LIMITS_NOT_OBJECT: return sbp_fail(c, SBP_E_BAD_REQUEST, "%s", err);
  case SBP_LIMITS_UNKNOWN_FIELD: return sbp_fail(c, SBP_E_UNKNOWN_FIELD, "%s", err);
  case SBP_LIMITS_BAD_VALUE: break;
  }
  return sbp_fail(c, SBP_E_BAD_LIMITS, "%s", err);
}
