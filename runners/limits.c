/* Per-process resource limits (child side, right before exec), and the
 * defaults of every limit. Memory and process counts belong to the cgroup
 * when the backend can enforce them; rlimits are the fallback and the CPU
 * backstop. RLIMIT_AS is never used: the JVM reserves far more address space
 * than it touches. */
#include "internal.h"

#include <errno.h>
#include <math.h>

void sb_limits_default(sb_limits *l) {
  l->wall_time_s = 30;
  l->cpu_time_s = 30;
  l->memory_mib = 2048;
  l->pids = 128;
  l->output_bytes = 8u << 20;
  l->file_size_mib = 256;
  l->tmp_mib = 512;
  l->open_files = 256;
}

static int set(int resource, rlim_t soft, rlim_t hard, const char *name, const char **what) {
  struct rlimit r = {.rlim_cur = soft, .rlim_max = hard};
  if (setrlimit(resource, &r) < 0) {
    *what = name;
    return -errno;
  }
  return 0;
}

int sb_limits_apply(const sb_limits *l, const sb_rlimit_plan *plan, const char **what) {
  int rc = 0;
  /* RLIMIT_CPU counts per process, by tick samples. The supervisor polls
   * the whole tree's precise CPU (the cgroup's counter, else /proc: mempoll.c),
   * so it is only a safety net one second later. SIGXCPU at the soft limit,
   * SIGKILL one second after. */
  rlim_t cpu = (rlim_t)ceil(l->cpu_time_s);
  if (plan->cpu_backstop_only) cpu += 1;
  if (cpu < 1) cpu = 1;
  rc = set(RLIMIT_CPU, cpu, cpu + 1, "RLIMIT_CPU", what);
  if (!rc) rc = set(RLIMIT_CORE, 0, 0, "RLIMIT_CORE", what);
  if (!rc) {
    rlim_t fsz = (rlim_t)l->file_size_mib << 20;
    rc = set(RLIMIT_FSIZE, fsz, fsz, "RLIMIT_FSIZE", what);
  }
  if (!rc) rc = set(RLIMIT_NOFILE, l->open_files, l->open_files, "RLIMIT_NOFILE", what);
  if (!rc && plan->memory_by_rlimit) {
    /* Heap and private writable mappings, per process: the closest rlimit
     * to "memory" that still lets the JVM reserve its heap. */
    rlim_t mem = (rlim_t)l->memory_mib << 20;
    rc = set(RLIMIT_DATA, mem, mem, "RLIMIT_DATA", what);
  }
  if (!rc && plan->pids_by_rlimit) {
    /* Counted per uid (in this user namespace), so concurrent jobs share it. */
    rc = set(RLIMIT_NPROC, l->pids, l->pids, "RLIMIT_NPROC", what);
  }
  return rc;
}
