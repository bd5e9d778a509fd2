/* A native exec result into SandboxFusion's RunCodeResponse.
 *
 * Each step that ran becomes a CommandRunResult:
 *   native step status                  status             return_code
 *   ok, runtime_error                   Finished           the exit code
 *   signaled                            Finished           -N (signal N, as Python's subprocess says)
 *   memory_limit, output_limit          Finished           the exit code if non-zero, else -N of the
 *                                                          signal that killed it, else -9 (a memory kill
 *                                                          is always the program's failure, never 0)
 *   timeout (wall or CPU)               TimeLimitExceeded  null
 *   internal_error                      Error              null
 * The top status is SandboxFusion's rule: any Error -> SandboxError (its
 * message the sandbox's error); else any TimeLimitExceeded or non-zero
 * return code -> Failed; else Success. SandboxError is never the program's
 * doing: an unknown language, a toolchain not installed, a sandbox that
 * failed. What SandboxFusion has no word for is under "surgebox". */
#include "internal.h"

#include "json_seconds.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sbh_signal_number(const char *name) {
  if (!name || strncmp(name, "SIG", 3) != 0) return 0;
  for (int s = 1; s < NSIG; s++) {
    const char *a = sigabbrev_np(s);
    if (a && !strcmp(a, name + 3)) return s;
  }
  return 0;
}

static json_object *get(json_object *o, const char *k) {
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static const char *get_str(json_object *o, const char *k) {
  json_object *v = get(o, k);
  return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* A step's CommandRunResult (also evaluate_batch.c's compile_result). */
json_object *sbh_command_result(json_object *step, const char **err) {
  const char *st = get_str(step, "status");
  json_object *ec = get(step, "exit_code");
  int sig = sbh_signal_number(get_str(step, "signal"));
  const char *status = "Finished";
  json_object *rc = NULL;
  if (!st || !strcmp(st, "internal_error")) {
    status = "Error";
    *err = get_str(step, "error") ? get_str(step, "error") : "the sandbox failed";
  } else if (!strcmp(st, "timeout")) {
    status = "TimeLimitExceeded";
  } else if (!strcmp(st, "memory_limit") || !strcmp(st, "output_limit")) {
    int64_t code = ec && json_object_is_type(ec, json_type_int) ? json_object_get_int64(ec) : 0;
    rc = json_object_new_int64(code ? code : sig ? -sig : -9);
  } else if (ec && json_object_is_type(ec, json_type_int)) {
    rc = json_object_new_int64(json_object_get_int64(ec));
  } else {
    rc = json_object_new_int64(sig ? -sig : -9);
  }
  return sbh_run_result(status, rc, step);
}

json_object *sbh_refusal(json_object *native, const char **code, char *m, size_t m_len) {
  const char *type = get_str(native, "type");
  if (!type || strcmp(type, "error")) return NULL;
  json_object *e = get(native, "error");
  const char *msg = get_str(e, "message");
  *code = get_str(e, "code");
  snprintf(m, m_len, "%s: %s", *code ? *code : "error", msg ? msg : "");
  return e;
}

bool sbh_not_run(json_object *native, char *m, size_t m_len) {
  const char *st = get_str(native, "status"), *e = get_str(native, "error");
  if (!st || (strcmp(st, "toolchain_missing") && strcmp(st, "unsupported") && strcmp(st, "cancelled"))) return false;
  snprintf(m, m_len, "%s: %s", st, e ? e : "");
  return true;
}

json_object *sbh_detail_answer(const char *m, json_object *sb) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "detail", json_object_new_string(m));
  json_object_put(sb);
  return o;
}

json_object *sbh_run_result(const char *status, json_object *rc, json_object *native) {
  json_object *r = json_object_new_object();
  json_object_object_add(r, "status", json_object_new_string(status));
  json_object *wall = get(native, "wall_time_s");
  json_object_object_add(r, "execution_time", wall ? json_object_get(wall) : json_object_new_double(0));
  json_object_object_add(r, "return_code", rc);
  const char *out = get_str(native, "stdout"), *err = get_str(native, "stderr");
  json_object_object_add(r, "stdout", json_object_new_string(out ? out : ""));
  json_object_object_add(r, "stderr", json_object_new_string(err ? err : ""));
  return r;
}

/* surgebox's own record of a step: what SandboxFusion's words leave out. */
static json_object *step_record(json_object *step) {
  static const char *const keep[] = {"name",          "status",           "exit_code",        "signal",
                                     "cpu_time_s",    "wall_time_s",      "wall_excused_s",   "wall_waiting",     "setup_time_s",     "max_rss_kb",
                                     "cgroup_peak_kb", "limit_hit",       "pids_limit_hit",   "stdout_truncated",
                                     "stderr_truncated", "stdout_lossy",  "stderr_lossy",     "stdout_sha256",
                                     "stderr_sha256", "cached",           "limits",           "enforced",
                                     "warnings",      "error",            NULL};
  json_object *r = json_object_new_object();
  for (size_t i = 0; keep[i]; i++) {
    json_object *v = get(step, keep[i]);
    if (v || json_object_object_get_ex(step, keep[i], NULL)) json_object_object_add(r, keep[i], json_object_get(v));
  }
  const char *st = get_str(step, "status");
  json_object_object_add(r, "memory_killed", json_object_new_boolean(st && !strcmp(st, "memory_limit")));
  return r;
}

json_object *sbh_run_code_answer_new(const sbh_server *s) {
  json_object *a = json_object_new_object();
  json_object_object_add(a, "status", json_object_new_string("Success"));
  json_object_object_add(a, "message", json_object_new_string(""));
  json_object_object_add(a, "compile_result", NULL);
  json_object_object_add(a, "run_result", NULL);
  json_object_object_add(a, "executor_pod_name", json_object_new_string(s->hostname));
  json_object_object_add(a, "files", json_object_new_object());
  return a;
}

json_object *sbh_sandbox_error(const sbh_server *s, const char *message, json_object *surgebox) {
  json_object *a = sbh_run_code_answer_new(s);
  json_object_object_add(a, "status", json_object_new_string("SandboxError"));
  json_object_object_add(a, "message", json_object_new_string(message));
  json_object_object_add(a, "surgebox", surgebox ? surgebox : json_object_new_object());
  return a;
}

json_object *sbh_answer_bounded(const sbh_server *s, json_object *a, json_object *ctx, sbh_answer_error error) {
  size_t len = 0;
  json_object_to_json_string_length(a, JSON_C_TO_STRING_PLAIN, &len);
  if (len <= s->opt.limits.max_answer_bytes) return a;
  ((sbh_server *)s)->counters[SBH_C_ANSWER_TOO_LARGE]++;
  json_object_put(a);
  json_object *sb = json_object_new_object();
  json_object_object_add(sb, "answer_bytes", json_object_new_int64((int64_t)len));
  return error(s, ctx, "the answer is larger than the front's max_answer_bytes (--http-max-answer-bytes)", sb);
}

static json_object *run_code_error(const sbh_server *s, json_object *ctx, const char *message, json_object *sb) {
  (void)ctx;
  return sbh_sandbox_error(s, message, sb);
}

/* The daemon refused the request (NULL: it did not): a 503 when busy, a 400
 * for the request's own fault (a bad base64 file, a limit out of range: not
 * a verdict), else a SandboxError (unknown_toolchain, internal). */
static json_object *refused_answer(const sbh_server *s, json_object *native, json_object *sb, int *http_status) {
  const char *code;
  char refused[SBH_ERR_MAX];
  json_object *refusal = sbh_refusal(native, &code, refused, sizeof refused);
  if (!refusal) return NULL;
  json_object_object_add(sb, "error", json_object_get(refusal));
  if (code && !strcmp(code, "busy")) {
    *http_status = 503;
    return sbh_detail_answer(refused, sb);
  }
  if (code && (!strcmp(code, "bad_request") || !strcmp(code, "bad_limits") || !strcmp(code, "unknown_field") ||
               !strcmp(code, "too_large") || !strcmp(code, "bad_json"))) {
    *http_status = 400;
    return sbh_detail_answer(refused, sb);
  }
  return sbh_sandbox_error(s, refused, sb);
}

/* The job's own record: status, queue and front time, toolchain; a job that
 * did not run (no toolchain, unsupported, cancelled) a SandboxError, else NULL. */
static json_object *job_record(const sbh_server *s, json_object *native, json_object *ctx, json_object *sb) {
  const char *nstatus = get_str(native, "status");
  json_object_object_add(sb, "status", json_object_new_string(nstatus ? nstatus : "?"));
  json_object *q = get(native, "queue_time_s");
  if (q) json_object_object_add(sb, "queue_time_s", json_object_get(q));
  json_object *t_arr = get(ctx, "t_arrived");
  if (t_arr)
    json_object_object_add(sb, "front_time_s",
                           sbu_json_seconds((double)(uv_hrtime() - (uint64_t)json_object_get_int64(t_arr)) / 1e9));
  json_object *tc = get(native, "toolchain");
  if (tc) json_object_object_add(sb, "toolchain", json_object_get(tc));
  char m[SBH_ERR_MAX];
  return sbh_not_run(native, m, sizeof m) ? sbh_sandbox_error(s, m, sb) : NULL;
}

/* Each step's CommandRunResult into a, its record into sb; the run step
 * returned, *error and *failed as SandboxFusion's top status reads them. */
static json_object *step_results(json_object *native, json_object *a, json_object *sb, bool *error, bool *failed,
                                 const char **err) {
  json_object *steps = get(native, "steps"), *recs = json_object_new_array(), *run = NULL;
  for (size_t i = 0; steps && i < json_object_array_length(steps); i++) {
    json_object *st = json_object_array_get_idx(steps, i);
    const char *name = get_str(st, "name");
    bool compile = name && !strcmp(name, "compile");
    const char *e = NULL;
    json_object *cr = sbh_command_result(st, &e);
    const char *crs = get_str(cr, "status");
    json_object *rcv = get(cr, "return_code");
    *error |= !strcmp(crs, "Error");
    *failed |= !strcmp(crs, "TimeLimitExceeded") || (rcv && json_object_get_int64(rcv) != 0);
    if (e && !*err) *err = e;
    json_object_object_add(a, compile ? "compile_result" : "run_result", cr);
    if (!compile) run = st;
    json_object_array_add(recs, step_record(st));
  }
  json_object_object_add(sb, "steps", recs);
  if (!steps || !json_object_array_length(steps)) {
    *error = true;
    *err = get_str(native, "error") ? get_str(native, "error") : "no step ran";
  }
  return run;
}

/* Warm or cold, and why: asked, how the run step started (the daemon's
 * word); not asked, why not. */
static json_object *warm_record(json_object *ctx, json_object *run) {
  json_object *warm = json_object_new_object();
  json_object_object_add(warm, "asked", json_object_get(get(ctx, "warm_asked")));
  const char *start = get_str(run ? get(run, "enforced") : NULL, "start");
  const char *why = get_str(ctx, "warm_why");
  json_object_object_add(warm, "start", json_object_new_string(why ? why : start ? start : "cold"));
  return warm;
}

static void fetch_error(json_object *ferr, const char *asked, json_object *error) {
  json_object *fe = json_object_new_object();
  json_object_object_add(fe, "path", json_object_new_string(asked));
  json_object_object_add(fe, "error", error);
  json_object_array_add(ferr, fe);
}

/* fetch_files back into files, named as the client asked; the errors listed. */
static json_object *files_back(json_object *ctx, json_object *run, json_object *files) {
  json_object *outs = run ? get(run, "outputs") : NULL, *ferr = json_object_new_array(), *fmap = get(ctx, "fetch");
  for (size_t i = 0; fmap && i < json_object_array_length(fmap); i++) {
    json_object *pair = json_object_array_get_idx(fmap, i);
    const char *asked = json_object_get_string(json_object_array_get_idx(pair, 0));
    const char *inner = json_object_get_string(json_object_array_get_idx(pair, 1));
    json_object *o = NULL;
    for (size_t k = 0; outs && !o && k < json_object_array_length(outs); k++) {
      const char *p = get_str(json_object_array_get_idx(outs, k), "path");
      if (p && !strcmp(p, inner)) o = json_object_array_get_idx(outs, k);
    }
    if (!o)
      fetch_error(ferr, asked, json_object_new_string(run ? "not returned" : "not fetched: the program did not run"));
    else if (get(o, "content_b64"))
      json_object_object_add(files, asked, json_object_get(get(o, "content_b64")));
    else
      fetch_error(ferr, asked, json_object_get(get(o, "error")));
  }
  return ferr;
}

json_object *sbh_run_code_answer(const sbh_server *s, json_object *native, json_object *ctx, int *http_status) {
  *http_status = 200;
  json_object *sb = json_object_new_object();
  json_object *lang = get(ctx, "language");
  if (lang) json_object_object_add(sb, "language", json_object_get(lang));
  if (!native) return sbh_sandbox_error(s, "the daemon is shutting down", sb);
  json_object *early = refused_answer(s, native, sb, http_status);
  if (!early) early = job_record(s, native, ctx, sb);
  if (early) return early;
  json_object *a = sbh_run_code_answer_new(s);
  const char *err = NULL;
  bool failed = false, error = false;
  json_object *run = step_results(native, a, sb, &error, &failed, &err);
  json_object_object_add(sb, "warm", warm_record(ctx, run));
  json_object_object_add(sb, "fetch_errors", files_back(ctx, run, get(a, "files")));
  const char *top = error ? "SandboxError" : failed ? "Failed" : "Success";
  json_object_object_add(a, "status", json_object_new_string(top));
  json_object_object_add(a, "message", json_object_new_string(error && err ? err : ""));
  json_object_object_add(a, "surgebox", sb);
  return sbh_answer_bounded(s, a, ctx, run_code_error);
}
