/* C and C++ programs under gdb's tracer (PROTOCOL.md "Traces", "C and
 * C++"): the run step's argv rewritten, the compile step made to build for
 * the debugger, the system call gdb needs. sbtrace_launch
 * (tracers/gdb/sbtrace_launch.c, built here as a program) starts gdb with
 * its own streams on /dev/null and starts the program, under a filter that
 * denies it ptrace, with the job's streams and nothing else open. */
#include "runtime_paths.h"
#include "toolchain.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SURGEBOX_TRACERS_BIN_BUILD_DIR
#define SURGEBOX_TRACERS_BIN_BUILD_DIR "/usr/share/surgebox/tracers-bin"
#endif

#define LAUNCH SBT_TRACERS_BIN_TARGET "/sbtrace_launch"

const char *sbt_tracers_bin_dir(void) {
  static char installed[PATH_MAX];
  return sbu_data_dir("SURGEBOX_TRACERS_BIN", "tracers-bin", installed, sizeof installed, SURGEBOX_TRACERS_BIN_BUILD_DIR,
                      NULL);
}

char **sbt_trace_gdb_argv(const char *const *argv) {
  static const char *const head[] = {LAUNCH, "-g", "/usr/bin/gdb", "-nx", "-q", "-batch",
                                     "-ix", SBT_TRACERS_TARGET "/gdb/sbtrace_gdb.py",
                                     "-ex", "python sbtrace_run()", "--args", LAUNCH, NULL};
  size_t nh = 0, na = 0;
  while (head[nh]) nh++;
  while (argv[na]) na++;
  char **a = calloc(nh + na + 2, sizeof *a);
  bool ok = a != NULL;
  size_t k = 0;
  for (size_t i = 0; ok && i < nh; i++) ok = (a[k++] = strdup(head[i])) != NULL;
  if (ok) ok = (a[k++] = strdup(argv[0])) != NULL; /* the path sbtrace_launch execs, then argv[0] */
  for (size_t i = 0; ok && i < na; i++) ok = (a[k++] = strdup(argv[i])) != NULL;
  if (!ok && a) {
    for (size_t i = 0; i < k; i++) free(a[i]);
    free(a);
    return NULL;
  }
  return a;
}

/* -O, -O1, -O2, -O3, -Os, -Ofast, -Og, -Oz */
static bool opt_flag(const char *a) { return strncmp(a, "-O", 2) == 0; }

int sbt_trace_plan_debug(sbt_plan *plan) {
  for (size_t s = 0; s < plan->n_steps; s++) {
    sbt_step *st = &plan->steps[s];
    if (!st->is_compile) continue;
    size_t n = 0;
    for (; st->argv[n]; n++)
      if (opt_flag(st->argv[n])) {
        char *o0 = strdup("-O0");
        if (!o0) return -1;
        free(st->argv[n]);
        st->argv[n] = o0;
      }
    char **v = realloc(st->argv, (n + 2) * sizeof *v);
    if (!v) return -1;
    st->argv = v;
    if (!(v[n] = strdup("-g"))) return -1;
    v[n + 1] = NULL;
  }
  return 0;
}

const char *const *sbt_trace_seccomp_allow(sbt_trace_kind kind) {
  static const char *const gdb[] = {"ptrace", NULL};
  return kind == SBT_TRACE_GDB ? gdb : NULL;
}
