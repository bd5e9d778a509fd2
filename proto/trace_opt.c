/* The "trace" option of a step (or of a toolchain job's run step):
 * true, false, or an object of the tracer's limits (PROTOCOL.md, "Traces"). */
#include "internal.h"

#include <string.h>

static const char *const keys[] = {"events", "bytes", "value_chars", "items", "nest", "depth", "snapshot_every", NULL};

int sbp_parse_trace(sbp_pctx *c, json_object *v, const char *where, sbp_trace *out) {
  memset(out, 0, sizeof *out);
  const char *dot = *where ? "." : "";
  if (json_object_is_type(v, json_type_boolean)) {
    out->on = json_object_get_boolean(v);
    return 0;
  }
  if (!json_object_is_type(v, json_type_object))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s%strace must be true, false or an object of limits", where, dot);
  json_object_object_foreach(v, key, val) {
    if (strcmp(key, "check") == 0) {
      if (!json_object_is_type(val, json_type_boolean))
        return sbp_fail(c, SBP_E_BAD_REQUEST, "%s%strace.check must be true or false", where, dot);
      out->check = json_object_get_boolean(val);
      continue;
    }
    int k = 0;
    while (keys[k] && strcmp(keys[k], key) != 0) k++;
    if (!keys[k])
      return sbp_fail(c, SBP_E_UNKNOWN_FIELD,
                      "%s%strace has no field \"%.64s\" (events, bytes, value_chars, items, nest, depth, "
                      "snapshot_every, check)", where, dot, key);
    int64_t n = json_object_get_int64(val);
    uint64_t lo = k == SBP_TRACE_BYTES ? SBP_TRACE_MIN_BYTES : 1, hi = k == SBP_TRACE_BYTES ? SBP_TRACE_MAX_BYTES : SBP_TRACE_MAX_COUNT;
    if (!json_object_is_type(val, json_type_int) || n < (int64_t)lo || (uint64_t)n > hi)
      return sbp_fail(c, SBP_E_BAD_LIMITS, "%s%strace.%s must be an integer from %llu to %llu", where, dot, key,
                      (unsigned long long)lo, (unsigned long long)hi);
    out->has[k] = true;
    out->value[k] = (uint64_t)n;
  }
  out->on = true;
  return 0;
}

const char *sbp_trace_key(int k) { return k >= 0 && k < SBP_TRACE_NKEYS ? keys[k] : NULL; }
