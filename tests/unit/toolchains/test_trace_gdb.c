/* C and C++ steps under gdb's tracer (trace_wrap.c, trace_gdb.c): which
 * argv is traced by which tracer, the run's argv rewritten, the compile
 * step made -O0 -g, ptrace allowed for gdb only. Expected values by hand. */
#include "check.h"
#include "toolchain.h"

#include <stdlib.h>
#include <string.h>

static void strv_free(char **v) {
  for (size_t i = 0; v && v[i]; i++) free(v[i]);
  free(v);
}

static char **strv(const char *const *v) {
  size_t n = 0;
  while (v[n]) n++;
  char **out = calloc(n + 1, sizeof *out);
  for (size_t i = 0; i < n; i++) out[i] = strdup(v[i]);
  return out;
}

int main(void) {
  /* which tracer */
  CHECK(sbt_trace_kind_of((const char *const[]){"python3", "-u", "main.py", NULL}) == SBT_TRACE_PYTHON);
  CHECK(sbt_trace_kind_of((const char *const[]){"./main", "a", NULL}) == SBT_TRACE_GDB);
  CHECK(sbt_trace_kind_of((const char *const[]){"/app/bin/prog", NULL}) == SBT_TRACE_GDB);
  CHECK(sbt_trace_kind_of((const char *const[]){"./", NULL}) == SBT_TRACE_NONE);
  CHECK(sbt_trace_kind_of((const char *const[]){"sh", "-c", "true", NULL}) == SBT_TRACE_NONE);
  CHECK(sbt_trace_kind_of((const char *const[]){"/usr/bin/gdb", NULL}) == SBT_TRACE_NONE);
  CHECK(sbt_trace_kind_of((const char *const[]){"./python3", "x.py", NULL}) == SBT_TRACE_PYTHON);

  /* the run under gdb: the launcher twice, the program path then its argv[0] */
  char **a = sbt_trace_gdb_argv((const char *const[]){"./main", "x y", "", NULL});
  const char *const want[] = {"/opt/surgebox/tracers-bin/sbtrace_launch", "-g", "/usr/bin/gdb", "-nx", "-q", "-batch",
                              "-ix", "/opt/surgebox/tracers/gdb/sbtrace_gdb.py", "-ex", "python sbtrace_run()",
                              "--args", "/opt/surgebox/tracers-bin/sbtrace_launch", "./main", "./main", "x y", "",
                              NULL};
  size_t i = 0;
  for (; a && want[i]; i++) CHECK_STR(a[i], want[i]);
  CHECK(a && a[i] == NULL);
  strv_free(a);

  /* the environment: the tracer's variables, no PYTHONHASHSEED for gdb */
  char **av = NULL, **env = NULL;
  CHECK(sbt_trace_wrap((const char *const[]){"./main", NULL}, (const char *const[]){"TZ=UTC", NULL},
                       "{\"events\":5}", &av, &env) == 0);
  CHECK(env && env[0] && strcmp(env[0], "TZ=UTC") == 0);
  CHECK(env && env[1] && strcmp(env[1], "SURGEBOX_TRACE_FD=3") == 0);
  CHECK(env && env[2] && strcmp(env[2], "SURGEBOX_TRACE_LIMITS={\"events\":5}") == 0);
  CHECK(env && env[3] == NULL);
  CHECK(av && strcmp(av[0], "/opt/surgebox/tracers-bin/sbtrace_launch") == 0);
  strv_free(av);
  strv_free(env);

  /* the compile step: every -O flag -O0, -g appended; the run step untouched */
  sbt_plan p;
  memset(&p, 0, sizeof p);
  p.n_steps = 2;
  p.steps[0].is_compile = true;
  p.steps[0].argv = strv((const char *const[]){"gcc", "-std=gnu17", "-O2", "main.c", "-Ofast", "-o", "main", NULL});
  p.steps[1].argv = strv((const char *const[]){"./main", "-O3", NULL});
  CHECK(sbt_trace_plan_debug(&p) == 0);
  const char *const comp[] = {"gcc", "-std=gnu17", "-O0", "main.c", "-O0", "-o", "main", "-g", NULL};
  for (i = 0; comp[i]; i++) CHECK_STR(p.steps[0].argv[i], comp[i]);
  CHECK(p.steps[0].argv[i] == NULL);
  CHECK_STR(p.steps[1].argv[1], "-O3");
  strv_free(p.steps[0].argv);
  strv_free(p.steps[1].argv);

  /* ptrace for gdb's run only */
  const char *const *allow = sbt_trace_seccomp_allow(SBT_TRACE_GDB);
  CHECK(allow && strcmp(allow[0], "ptrace") == 0 && allow[1] == NULL);
  CHECK(sbt_trace_seccomp_allow(SBT_TRACE_PYTHON) == NULL);
  CHECK(sbt_trace_seccomp_allow(SBT_TRACE_NONE) == NULL);
  return check_exit();
}
