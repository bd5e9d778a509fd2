/* Traced steps (the "trace" option, PROTOCOL.md "Traces"): which steps of a
 * request may be traced (refused before anything runs, naming the step),
 * and a traced step rewritten to run under the tracer, with the tracers'
 * directory bound read-only and the supervisor's byte cap. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 0, or -1 with msg saying which step cannot be traced and what can. */
int sbd_trace_check(const sbp_exec *ex, const sbt_toolchain *tc, char *msg, size_t n) {
  size_t at;
  if (ex->toolchain) {
    if (!ex->trace.on || sbt_trace_language_ok(tc)) return 0;
    snprintf(msg, n, "trace: toolchain %s (%s) has no tracer; traced toolchains: python3, python3.N", tc->name,
             tc->def && tc->def->language ? tc->def->language : "?");
    return -1;
  }
  for (size_t i = 0; i < ex->n_steps; i++) {
    const sbp_step *s = &ex->steps[i];
    if (!s->trace.on || sbt_trace_python_argv((const char *const *)s->argv, &at)) continue;
    snprintf(msg, n,
             "steps[%zu] (%s): trace needs a Python file run, `python3[.N] [-u -B -E -I -s -S -O ...] FILE ARGS` "
             "(traced toolchains: python3, python3.N); argv[0] is \"%.64s\"",
             i, s->name, s->argv[0]);
    return -1;
  }
  return 0;
}

int sbd_trace_step(sbd_jstep *js, const sbp_trace *t, const sb_mount *base, size_t n_base) {
  js->trace_bytes = t->has[SBP_TRACE_BYTES] ? t->value[SBP_TRACE_BYTES] : SB_TRACE_BYTES_DEFAULT;
  char *limits = sbt_trace_limits_json(t, js->trace_bytes);
  int rc = limits ? sbt_trace_wrap((const char *const *)js->argv, (const char *const *)js->env, limits,
                                   &js->own_argv, &js->own_env)
                  : -1;
  free(limits);
  js->own_mounts = rc == 0 ? calloc(n_base + 1, sizeof *js->own_mounts) : NULL;
  if (!js->own_mounts) return -1;
  memcpy(js->own_mounts, base, n_base * sizeof *base);
  js->own_mounts[n_base] = (sb_mount){.source = sbt_tracers_dir(), .target = SBT_TRACERS_TARGET, .writable = false};
  js->n_own_mounts = n_base + 1;
  js->argv = js->own_argv;
  js->env = js->own_env;
  js->traced = true;
  js->cacheable = false; /* a trace is no compile */
  return 0;
}

static void strv_free(char **v) {
  for (size_t i = 0; v && v[i]; i++) free(v[i]);
  free(v);
}

void sbd_trace_step_free(sbd_jstep *js) {
  strv_free(js->own_argv);
  strv_free(js->own_env);
  free(js->own_mounts);
}
