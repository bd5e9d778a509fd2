/* A step run under its language's tracer (PROTOCOL.md "Traces"): which
 * steps can be (Python: `python3[.N] [FLAGS] FILE ARGS`; C and C++: a
 * program the job built, `./PROG ARGS`), where the tracers are on the host
 * and in the sandbox, and the step rewritten: `python3 [FLAGS]
 * /opt/surgebox/tracers/python/sbtrace.py FILE ARGS` with the tracer's
 * descriptor, limits and a fixed hash seed in its environment; a program
 * under gdb (trace_gdb.c). */
#include "runtime_paths.h"
#include "toolchain.h"
#include "python_name.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SURGEBOX_TRACERS_SOURCE_DIR
#define SURGEBOX_TRACERS_SOURCE_DIR "/usr/share/surgebox/tracers"
#endif

const char *sbt_tracers_dir(void) {
  static char installed[PATH_MAX];
  return sbu_data_dir("SURGEBOX_TRACERS", "tracers", installed, sizeof installed, SURGEBOX_TRACERS_SOURCE_DIR,
                      "/usr/share/surgebox/tracers");
}

/* Interpreter flags that take no argument and keep `python3 FILE` a script
 * run (not -c, -m, -W x, -X x: refused, the tracer runs files only). */
static bool plain_flag(const char *a) {
  static const char *const ok[] = {"-u", "-B", "-E", "-I", "-s", "-S", "-O", "-OO", "-b", "-bb", "-q", "-P", "-R", NULL};
  for (const char *const *f = ok; *f; f++)
    if (strcmp(a, *f) == 0) return true;
  return false;
}

bool sbt_trace_python_argv(const char *const *argv, size_t *file_at) {
  if (!argv || !argv[0] || !sbu_is_python_name(argv[0])) return false;
  size_t i = 1;
  while (argv[i] && plain_flag(argv[i])) i++;
  if (!argv[i] || argv[i][0] == '-' || !argv[i][0]) return false;
  *file_at = i;
  return true;
}

/* ./PROG or /app/...: a program the job built (gdb's tracer says so in its
 * end when it has no debug information). */
static bool built_program(const char *prog) {
  return prog && !sbu_is_python_name(prog) &&
         ((strncmp(prog, "./", 2) == 0 && prog[2]) || (strncmp(prog, "/app/", 5) == 0 && prog[5]));
}

sbt_trace_kind sbt_trace_kind_of(const char *const *argv) {
  size_t at;
  if (sbt_trace_python_argv(argv, &at)) return SBT_TRACE_PYTHON;
  if (argv && built_program(argv[0])) return SBT_TRACE_GDB;
  return SBT_TRACE_NONE;
}

bool sbt_trace_gdb_language(const sbt_toolchain *tc) {
  return tc && tc->def && tc->def->tracer && strcmp(tc->def->tracer, "gdb") == 0;
}

bool sbt_trace_language_ok(const sbt_toolchain *tc) { return tc && tc->def && tc->def->tracer; }

const char *sbt_traced_names(const sbt_registry *r, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = '\0';
  for (size_t i = 0; r && i < r->n_defs && k < n; i++)
    if (r->defs[i].tracer) {
      int w = snprintf(buf + k, n - k, "%s%s (%s)", k ? ", " : "", r->defs[i].name, r->defs[i].tracer);
      if (w < 0) break;
      k += (size_t)w;
    }
  if (!buf[0]) snprintf(buf, n, "none");
  return buf;
}

char *sbt_trace_limits_json(const sbp_trace *t, uint64_t bytes) {
  json_object *o = json_object_new_object();
  for (int k = 0; k < SBP_TRACE_NKEYS; k++)
    if (k == SBP_TRACE_BYTES) json_object_object_add(o, sbp_trace_key(k), json_object_new_int64((int64_t)bytes));
    else if (t->has[k]) json_object_object_add(o, sbp_trace_key(k), json_object_new_int64((int64_t)t->value[k]));
  char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
  json_object_put(o);
  return s;
}

static size_t strv_len(const char *const *v) {
  size_t n = 0;
  while (v && v[n]) n++;
  return n;
}

static bool has_var(const char *const *env, const char *name) {
  size_t n = strlen(name);
  for (size_t i = 0; env && env[i]; i++)
    if (strncmp(env[i], name, n) == 0 && env[i][n] == '=') return true;
  return false;
}

int sbt_trace_wrap(const char *const *argv, const char *const *env, const char *limits_json, char ***argv_out,
                   char ***env_out) {
  static const char *const default_env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", NULL};
  size_t at, na = strv_len(argv);
  *argv_out = *env_out = NULL;
  sbt_trace_kind kind = sbt_trace_kind_of(argv);
  if (kind == SBT_TRACE_NONE) return -1;
  bool python = kind == SBT_TRACE_PYTHON;
  if (python) sbt_trace_python_argv(argv, &at);
  if (!env) env = default_env;
  size_t ne = strv_len(env);
  char **a = python ? calloc(na + 2, sizeof *a) : sbt_trace_gdb_argv(argv), **e = calloc(ne + 4, sizeof *e);
  bool ok = a && e;
  for (size_t i = 0, k = 0; python && ok && i < na; i++) {
    if (i == at) ok = (a[k++] = strdup(SBT_TRACERS_TARGET "/python/sbtrace.py")) != NULL;
    if (ok) ok = (a[k++] = strdup(argv[i])) != NULL;
  }
  size_t k = 0;
  for (size_t i = 0; ok && i < ne; i++)
    if (strncmp(env[i], "SURGEBOX_TRACE_", 15) != 0) ok = (e[k++] = strdup(env[i])) != NULL;
  char fd[32];
  snprintf(fd, sizeof fd, "SURGEBOX_TRACE_FD=%d", SB_TRACE_FD);
  if (ok) ok = (e[k++] = strdup(fd)) != NULL;
  if (ok) {
    size_t n = strlen(limits_json) + sizeof "SURGEBOX_TRACE_LIMITS=";
    ok = (e[k] = malloc(n)) != NULL;
    if (ok) snprintf(e[k++], n, "SURGEBOX_TRACE_LIMITS=%s", limits_json);
  }
  /* Set iteration order reproducible (the head records it) unless the step chose a seed. */
  if (ok && python && !has_var(env, "PYTHONHASHSEED")) ok = (e[k++] = strdup("PYTHONHASHSEED=0")) != NULL;
  if (!ok) {
    for (size_t i = 0; a && a[i]; i++) free(a[i]);
    for (size_t i = 0; e && e[i]; i++) free(e[i]);
    free(a);
    free(e);
    return -1;
  }
  *argv_out = a;
  *env_out = e;
  return 0;
}
