/* Traced steps (the "trace" option, PROTOCOL.md "Traces"): which steps of a
 * request may be traced (refused before anything runs, naming the step),
 * and a traced step rewritten to run under the tracer, with the tracers'
 * directory bound read-only and the supervisor's byte cap. */
#include "internal.h"
#include "strv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 0, or -1 with msg saying which step cannot be traced and what can (the
 * traced toolchains: those whose file names a tracer). */
int sbd_trace_check(const sbp_exec *ex, const sbt_registry *reg, const sbt_toolchain *tc, char *msg, size_t n) {
  char traced[256];
  if (ex->toolchain) {
    if (ex->trace.on && sbt_trace_gdb_language(tc) && !ex->profile && access("/usr/bin/gdb", X_OK) != 0) {
      snprintf(msg, n, "trace: toolchain %s is traced by gdb, and /usr/bin/gdb is not installed (apt-get install gdb)",
               tc->name);
      return -1;
    }
    if (!ex->trace.on || sbt_trace_language_ok(tc)) return 0;
    snprintf(msg, n, "trace: toolchain %s (%s) has no tracer; traced toolchains (tracer): %s", tc->name,
             tc->def && tc->def->language ? tc->def->language : "?", sbt_traced_names(reg, traced, sizeof traced));
    return -1;
  }
  for (size_t i = 0; i < ex->n_steps; i++) {
    const sbp_step *s = &ex->steps[i];
    if (!s->trace.on || sbt_trace_kind_of((const char *const *)s->argv) != SBT_TRACE_NONE) continue;
    snprintf(msg, n,
             "steps[%zu] (%s): trace needs a Python file run, `python3[.N] [-u -B -E -I -s -S -O ...] FILE ARGS`, "
             "or a C/C++ program built with -g, `./PROG ARGS` (traced toolchains (tracer): %s); argv[0] is \"%.64s\"",
             i, s->name, sbt_traced_names(reg, traced, sizeof traced), s->argv[0]);
    return -1;
  }
  return 0;
}

/* NAME=VALUE added to the traced run's environment: 0, or -1. */
static int add_env(sbd_jstep *js, const char *name, const char *value) {
  size_t n = 0;
  while (js->own_env[n]) n++;
  char **e = value ? realloc(js->own_env, (n + 2) * sizeof *e) : NULL;
  if (e) js->own_env = e;
  char *var = e ? malloc(strlen(name) + strlen(value) + 2) : NULL;
  if (var) {
    sprintf(var, "%s=%s", name, value);
    js->own_env[n] = var;
    js->own_env[n + 1] = NULL;
  }
  return var ? 0 : -1;
}

/* SURGEBOX_TRACE_BUILD=["gcc",...]: the compile step as run, for gdb's head
 * (clang's debug information does not record its flags). */
static int add_build_env(sbd_jstep *js, char *const *build) {
  json_object *a = json_object_new_array();
  for (size_t i = 0; a && build[i]; i++) json_object_array_add(a, json_object_new_string(build[i]));
  int rc = add_env(js, "SURGEBOX_TRACE_BUILD", a ? json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN) : NULL);
  json_object_put(a);
  return rc;
}

int sbd_trace_step(sbd_jstep *js, const sbp_trace *t, const sb_mount *base, size_t n_base,
                   char *const *build_argv) {
  js->trace_bytes = t->has[SBP_TRACE_BYTES] ? t->value[SBP_TRACE_BYTES] : SB_TRACE_BYTES_DEFAULT;
  char *limits = sbt_trace_limits_json(t, js->trace_bytes);
  int rc = limits ? sbt_trace_wrap((const char *const *)js->argv, (const char *const *)js->env, limits,
                                   &js->own_argv, &js->own_env)
                  : -1;
  free(limits);
  sbt_trace_kind kind = sbt_trace_kind_of((const char *const *)js->argv);
  if (rc == 0 && kind == SBT_TRACE_GDB && build_argv) rc = add_build_env(js, build_argv);
  /* The Python tracer shares the program's process: it reads a key on its
   * descriptor before the program runs and seals its trace with it */
  js->trace_seal = kind == SBT_TRACE_PYTHON;
  if (rc == 0 && js->trace_seal) rc = add_env(js, "SURGEBOX_TRACE_SEAL", "32");
  js->own_mounts = rc == 0 ? calloc(n_base + 2, sizeof *js->own_mounts) : NULL;
  if (!js->own_mounts) return -1;
  if (n_base) memcpy(js->own_mounts, base, n_base * sizeof *base); /* base may be NULL when empty */
  js->own_mounts[n_base] = (sb_mount){.source = sbt_tracers_dir(), .target = SBT_TRACERS_TARGET, .writable = false};
  js->n_own_mounts = n_base + 1;
  if (kind == SBT_TRACE_GDB) /* gdb's launcher, a program: built, not in the source tree */
    js->own_mounts[js->n_own_mounts++] =
        (sb_mount){.source = sbt_tracers_bin_dir(), .target = SBT_TRACERS_BIN_TARGET, .writable = false};
  js->seccomp_allow = sbt_trace_seccomp_allow(kind);
  js->check = t->check;
  size_t n = 0, k = 0;
  while (js->own_env[n]) n++;
  js->plain_env = calloc(n + 1, sizeof *js->plain_env); /* pointers into own_env */
  if (!js->plain_env) return -1;
  for (size_t i = 0; i < n; i++)
    if (strncmp(js->own_env[i], "SURGEBOX_TRACE_", 15) != 0) js->plain_env[k++] = js->own_env[i];
  js->plain_argv = js->argv;
  js->plain_mounts = base;
  js->n_plain_mounts = n_base;
  js->argv = js->own_argv;
  js->env = js->own_env;
  js->traced = true;
  js->cacheable = false; /* a trace is no compile */
  return 0;
}

void sbd_trace_step_free(sbd_jstep *js) {
  sbu_strv_free(js->own_argv);
  sbu_strv_free(js->own_env);
  free(js->plain_env);
  free(js->own_mounts);
}

static const char *const summary_keys[] = {"status", "exit_code", "signal", "limit_hit", "stdout_sha256",
                                           "stderr_sha256", "stdout_truncated", "cpu_time_s", "user_time_s",
                                           "sys_time_s", "wall_time_s", "max_rss_kb", "error", NULL};

json_object *sbd_trace_untraced_summary(json_object *doc) {
  json_object *o = json_object_new_object(), *v;
  for (const char *const *k = summary_keys; o && *k; k++)
    if (json_object_object_get_ex(doc, *k, &v)) json_object_object_add(o, *k, json_object_get(v));
  return o;
}

static bool same(json_object *a, json_object *b, const char *key) {
  json_object *x = NULL, *y = NULL;
  json_object_object_get_ex(a, key, &x);
  json_object_object_get_ex(b, key, &y);
  return json_object_equal(x, y);
}

void sbd_trace_add_check(json_object *doc, json_object *untraced) {
  json_object *c = json_object_new_object();
  json_object_object_add(c, "stdout_equal", json_object_new_boolean(same(doc, untraced, "stdout_sha256")));
  json_object_object_add(c, "stderr_equal", json_object_new_boolean(same(doc, untraced, "stderr_sha256")));
  json_object_object_add(c, "exit_equal", json_object_new_boolean(same(doc, untraced, "status") &&
                                                                  same(doc, untraced, "exit_code") &&
                                                                  same(doc, untraced, "signal")));
  json_object *sealed;
  if (json_object_object_get_ex(doc, "trace_sealed", &sealed)) /* a Python trace: the tracer's own, sealed */
    json_object_object_add(c, "trace_sealed", json_object_new_boolean(json_object_get_boolean(sealed)));
  json_object_object_add(doc, "trace_check", c);
  json_object_object_add(doc, "untraced", untraced);
}
