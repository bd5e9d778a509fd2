/* The result document: field names are part of the protocol
 * (proto/PROTOCOL.md). */
#include "internal.h"

#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "json_seconds.h"
#include "sha256.h"
#include "utf8.h"

const char *sb_status_name(sb_status s) {
  switch (s) {
  case SB_OK: return "ok";
  case SB_RUNTIME_ERROR: return "runtime_error";
  case SB_SIGNALED: return "signaled";
  case SB_TIMEOUT: return "timeout";
  case SB_MEMORY_LIMIT: return "memory_limit";
  case SB_OUTPUT_LIMIT: return "output_limit";
  case SB_INTERNAL_ERROR: return "internal_error";
  case SB_HOST_KILLED: return "host_killed";
  }
  return "internal_error";
}

static json_object *signal_name(int sig) {
  if (!sig) return NULL;
  const char *abbrev = sigabbrev_np(sig);
  char name[32];
  if (abbrev) snprintf(name, sizeof name, "SIG%s", abbrev);
  else snprintf(name, sizeof name, "SIG%d", sig);
  return json_object_new_string(name);
}


/* The text (U+FFFD for what is not UTF-8 or is NUL), its flags, the SHA-256
 * of the raw bytes, and the raw bytes in base64 when the text is not them
 * (or when asked): "exactly what it printed" stays recoverable. */
static void add_stream(json_object *o, const char *name, const sb_buf *b, bool want_b64) {
  bool lossy = false;
  const unsigned char *data = b->data ? b->data : (const unsigned char *)"";
  SBU_AUTOFREE char *text = sb_utf8_sanitize(data, b->len, &lossy);
  char key[32], hex[SBU_SHA256_HEX];
  json_object_object_add(o, name, json_object_new_string(text ? text : ""));
  snprintf(key, sizeof key, "%s_lossy", name);
  json_object_object_add(o, key, json_object_new_boolean(lossy));
  sbu_sha256_hex(data, b->len, hex);
  snprintf(key, sizeof key, "%s_sha256", name);
  json_object_object_add(o, key, json_object_new_string(hex));
  if (lossy || want_b64) {
    SBU_AUTOFREE char *b64 = sbu_base64_encode(data, b->len, NULL);
    snprintf(key, sizeof key, "%s_b64", name);
    /* out of memory: null, and the hash still says what the bytes were */
    json_object_object_add(o, key, b64 ? json_object_new_string(b64) : NULL);
  }
  snprintf(key, sizeof key, "%s_truncated", name);
  json_object_object_add(o, key, json_object_new_boolean(b->truncated));
}

static json_object *limits_json(const sb_limits *l) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "time_s", sbu_json_number(l->wall_time_s));
  json_object_object_add(o, "cpu_time_s", sbu_json_number(l->cpu_time_s));
  json_object_object_add(o, "memory_mib", json_object_new_int64((int64_t)l->memory_mib));
  json_object_object_add(o, "pids", json_object_new_int64((int64_t)l->pids));
  json_object_object_add(o, "output_bytes", json_object_new_int64((int64_t)l->output_bytes));
  json_object_object_add(o, "file_size_mib", json_object_new_int64((int64_t)l->file_size_mib));
  json_object_object_add(o, "tmp_mib", json_object_new_int64((int64_t)l->tmp_mib));
  json_object_object_add(o, "open_files", json_object_new_int64((int64_t)l->open_files));
  return o;
}

/* A traced run's trace: the text when it is UTF-8 (what the tracer writes),
 * else trace_b64; its hash, whether the byte cap cut it, its end's status. */
static void add_trace(json_object *o, const sb_result *r) {
  const sb_buf *b = &r->trace;
  const unsigned char *data = b->data ? b->data : (const unsigned char *)"";
  char hex[SBU_SHA256_HEX];
  if (sbu_utf8_valid(data, b->len)) {
    json_object_object_add(o, "trace", json_object_new_string_len((const char *)data, (int)b->len));
  } else {
    SBU_AUTOFREE char *b64 = sbu_base64_encode(data, b->len, NULL);
    json_object_object_add(o, "trace_b64", b64 ? json_object_new_string(b64) : NULL);
  }
  sbu_sha256_hex(data, b->len, hex);
  json_object_object_add(o, "trace_sha256", json_object_new_string(hex));
  json_object_object_add(o, "trace_truncated", json_object_new_boolean(b->truncated));
  json_object_object_add(o, "trace_status", json_object_new_string(r->trace_status ? r->trace_status : "crashed"));
  json_object_object_add(o, "trace_bytes", json_object_new_int64((int64_t)r->trace_bytes));
  /* Whose word it is: a Python tracer shares the program's process, so a
   * program that reads its memory can make any trace; sealed says the end
   * and every record before it came through the tracer (PROTOCOL.md). */
  if (r->trace_seal_wanted) json_object_object_add(o, "trace_sealed", json_object_new_boolean(r->trace_sealed));
  json_object_object_add(o, "trace_forgeable", json_object_new_boolean(r->trace_seal_wanted));
}

json_object *sb_result_to_json(const sb_result *r, const sb_runtime *rt) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "status", json_object_new_string(sb_status_name(r->status)));
  json_object_object_add(o, "exit_code", r->exit_code >= 0 ? json_object_new_int(r->exit_code) : NULL);
  json_object_object_add(o, "signal", signal_name(r->signal));
  add_stream(o, "stdout", &r->out, r->output_base64);
  add_stream(o, "stderr", &r->err, r->output_base64);
  if (r->traced) add_trace(o, r);
  /* to what was measured: CPU to its source's resolution, wall and set-up
   * (the monotonic clock) to the microsecond; more digits would be noise */
  int cpu_digits = sbu_resolution_digits(r->cpu_resolution_s > 1e-6 ? r->cpu_resolution_s : 1e-6);
  json_object_object_add(o, "cpu_time_s", sbu_json_seconds_at(r->cpu_time_s, cpu_digits));
  json_object_object_add(o, "user_time_s", sbu_json_seconds_at(r->user_time_s, cpu_digits));
  json_object_object_add(o, "sys_time_s", sbu_json_seconds_at(r->sys_time_s, cpu_digits));
  json_object_object_add(o, "wall_time_s", sbu_json_seconds(r->wall_time_s));
  json_object_object_add(o, "wall_excused_s", sbu_json_seconds(r->wall_excused_s));
  if (r->wall_waiting.process) { /* only when the wall limit fired */
    json_object *w = json_object_new_object();
    char st[2] = {r->wall_waiting.state, '\0'};
    json_object_object_add(w, "process", json_object_new_string(r->wall_waiting.process));
    json_object_object_add(w, "state", json_object_new_string(st));
    json_object_object_add(w, "wchan", r->wall_waiting.wchan[0] ? json_object_new_string(r->wall_waiting.wchan) : NULL);
    json_object_object_add(o, "wall_waiting", w);
  }
  json_object_object_add(o, "setup_time_s", sbu_json_seconds(r->setup_time_s));
  json_object_object_add(o, "max_rss_kb", json_object_new_int64((int64_t)r->max_rss_kb));
  json_object_object_add(o, "cgroup_peak_kb", r->cgroup_peak_kb ? json_object_new_int64((int64_t)r->cgroup_peak_kb) : NULL);
  json_object_object_add(o, "limit_hit", r->limit_hit ? json_object_new_string(r->limit_hit) : NULL);
  json_object_object_add(o, "pids_limit_hit", json_object_new_boolean(r->pids_limit_hit));
  json_object_object_add(o, "cpu_source", json_object_new_string(r->cpu_source ? r->cpu_source : "none"));
  json_object_object_add(o, "limits", limits_json(&r->limits));
  json_object_object_add(o, "cgroup", json_object_new_string(sb_cgroup_kind_name(r->cgroup)));
  json_object_object_add(o, "uid", r->uid >= 0 ? json_object_new_int64(r->uid) : NULL);
  json_object *enforced = rt ? sb_runtime_enforcement(rt) : NULL;
  if (enforced) json_object_object_add(enforced, "pool", r->pool[0] ? json_object_new_string(r->pool) : NULL);
  if (enforced) { /* how the program started (warm.c): "cold", "cold (warm refused: why)", "warm (zygote, ...)" */
    json_object_object_add(enforced, "start", json_object_new_string(r->start[0] ? r->start : "cold"));
    json_object_object_add(enforced, "hash_seed", r->warm && r->warm_seeded ? json_object_new_int64((int64_t)r->warm_seed) : NULL);
  }
  json_object_object_add(o, "enforced", enforced);
  json_object *w = json_object_new_array();
  const char *warning = rt ? sb_runtime_warning(rt) : NULL;
  if (warning) json_object_array_add(w, json_object_new_string(warning));
  json_object_object_add(o, "warnings", w);
  json_object_object_add(o, "error", r->error[0] ? json_object_new_string(r->error) : NULL);
  return o;
}
