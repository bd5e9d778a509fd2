/* cgroup backend selection and the operations every backend shares.
 *
 * Three backends, chosen once at start-up and reported in every result:
 *   v2    the unified hierarchy (pure /sys/fs/cgroup, or the hybrid
 *         "unified" mount). Full limits when memory and pids controllers
 *         can be enabled; otherwise (hybrid hosts) it still gives exact CPU
 *         from cpu.stat and cgroup.kill, and the missing limits fall back to
 *         rlimits, which the result's "enforced" document says.
 *   v1    memory + pids + cpuacct hierarchies.
 *   none  rlimits only, with a warning in every result.
 * Everything lives under "<our own cgroup>/<instance>", so several runtimes
 * (parallel tests, a daemon and a CLI) never touch each other's jobs, and a
 * crashed runtime's instance is removed by the next one. */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

const char *sb_cgroup_kind_name(sb_cgroup_kind k) {
  switch (k) {
  case SB_CGROUP_AUTO: return "auto";
  case SB_CGROUP_V2: return "v2";
  case SB_CGROUP_V1: return "v1";
  case SB_CGROUP_NONE: return "none";
  }
  return "?";
}

int sb_cgroup_kind_parse(const char *s, sb_cgroup_kind *out) {
  static const sb_cgroup_kind all[] = {SB_CGROUP_AUTO, SB_CGROUP_V2, SB_CGROUP_V1, SB_CGROUP_NONE};
  for (size_t i = 0; i < 4; i++)
    if (strcmp(s, sb_cgroup_kind_name(all[i])) == 0) {
      *out = all[i];
      return 0;
    }
  return -EINVAL;
}

static void unlock_instance(sb_cg_backend *b) {
  for (int i = 0; i < b->n_inst_fd; i++) sbu_closep(&b->inst_fd[i]);
  b->n_inst_fd = 0;
}

int sb_cg_open(sb_cg_backend *b, sb_cgroup_kind want, const char *instance, const char *lock_dir, char *warning,
               char err[SB_ERR_MAX]) {
  memset(b, 0, sizeof *b);
  char why2[SB_ERR_MAX] = "", why1[SB_ERR_MAX] = "";
  if (want == SB_CGROUP_V2) {
    if (sb_cg2_open(b, instance, lock_dir, false, err) == 0) return 0;
    unlock_instance(b);
    return -ENOTSUP;
  }
  if (want == SB_CGROUP_V1) {
    if (sb_cg1_open(b, instance, lock_dir, err) == 0) return 0;
    unlock_instance(b);
    return -ENOTSUP;
  }
  if (want == SB_CGROUP_AUTO) {
    /* v2 only when it can really limit memory and pids; a controller-less
     * unified mount (hybrid hosts) loses to v1. */
    if (sb_cg2_open(b, instance, lock_dir, true, why2) == 0) return 0;
    unlock_instance(b);
    memset(b, 0, sizeof *b);
    if (sb_cg1_open(b, instance, lock_dir, why1) == 0) return 0;
    unlock_instance(b);
    memset(b, 0, sizeof *b);
    snprintf(warning, SB_ERR_MAX,
             "no usable cgroup (v2: %s; v1: %s): limits by rlimits only, memory per process "
             "(RLIMIT_DATA), processes per uid (RLIMIT_NPROC), CPU of the tree by a supervisor poll of /proc (RLIMIT_CPU backstop per process)",
             why2, why1);
  } else {
    snprintf(warning, SB_ERR_MAX,
             "cgroups disabled: limits by rlimits only, memory per process (RLIMIT_DATA), "
             "processes per uid (RLIMIT_NPROC), CPU of the tree by a supervisor poll of /proc (RLIMIT_CPU backstop per process)");
  }
  b->kind = SB_CGROUP_NONE;
  snprintf(b->describe, sizeof b->describe, "none");
  return 0;
}

void sb_cg_close(sb_cg_backend *b) {
  sb_cg_slots_close(b);
  if (b->kind == SB_CGROUP_V1) sb_cg1_close(b);
  if (b->kind == SB_CGROUP_V2) sb_cg2_close(b);
  unlock_instance(b); /* after the rmdir: never a moment when it looks dead */
}

int sb_cg_job_create(const sb_cg_backend *b, const char *name, const sb_limits *l, sb_cg_job *j,
                     char err[SB_ERR_MAX]) {
  memset(j, 0, sizeof *j);
  j->v2_fd = j->v2_peak_fd = -1;
  j->slot_index = -1;
  switch (b->kind) {
  case SB_CGROUP_V1: return sb_cg1_job_create(b, name, l, j, err);
  case SB_CGROUP_V2: return sb_cg2_job_create(b, name, l, j, err);
  default: return 0;
  }
}

int sb_cg_job_attach(const sb_cg_backend *b, const sb_cg_job *j, pid_t pid, char err[SB_ERR_MAX]) {
  if (j->slot) return sb_cg_slot_attach(j->slot, pid, err);
  switch (b->kind) {
  case SB_CGROUP_V1: return sb_cg1_job_attach(j, pid, err);
  case SB_CGROUP_V2: return sb_cg2_job_attach(j, pid, err);
  default: return 0;
  }
}

/* A slot's are open already (cgroup_slot.c): duplicated, not opened again
 * by path (three opens were ~18 µs a job on the loop thread). */
int sb_cg_job_open_procs(const sb_cg_backend *b, const sb_cg_job *j, int fds[4]) {
  if (j->slot) {
    int n = sb_cg_slot_procs_dup(j->slot, fds);
    if (n > 0) return n;
  }
  const sb_cg_job *d = j->slot ? &j->slot->dirs : j;
  const char *dirs[4] = {NULL, NULL, NULL, NULL};
  if (b->kind == SB_CGROUP_V1) {
    dirs[0] = d->v1_memory;
    dirs[1] = d->v1_pids;
    dirs[2] = d->v1_cpuacct;
  } else {
    dirs[0] = d->v2;
  }
  int n = 0;
  for (int i = 0; i < 4; i++) {
    if (!dirs[i] || !dirs[i][0]) continue;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/cgroup.procs", dirs[i]);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      while (n) close(fds[--n]);
      return -errno;
    }
    fds[n++] = fd;
  }
  return n;
}

/* The counters as the kernel has them (only sb_cg_job_stats subtracts). */
static void raw_stats(const sb_cg_backend *b, const sb_cg_job *j, sb_cg_stats *s) {
  memset(s, 0, sizeof *s);
  if (j->slot) sb_cg_slot_stats(b, j->slot, s);
  else if (b->kind == SB_CGROUP_V1) sb_cg1_job_stats(j, s);
  else if (b->kind == SB_CGROUP_V2) sb_cg2_job_stats(b, j, s);
}

void sb_cg_job_mark_go(const sb_cg_backend *b, sb_cg_job *j) {
  if (!j->created || !j->born_inside || b->kind != SB_CGROUP_V2) return;
  sb_cg_stats s;
  raw_stats(b, j, &s);
  j->base_cpu_ns = s.cpu_ns;
  j->base_user_ns = s.user_ns;
  j->base_sys_ns = s.sys_ns;
  if (j->slot) sb_cg_slot_reset_peak(j->slot);
  else sb_cg2_job_reset_peak(b, j);
}

static uint64_t minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

void sb_cg_job_stats(const sb_cg_backend *b, const sb_cg_job *j, sb_cg_stats *s) {
  memset(s, 0, sizeof *s);
  if (!j->created) return;
  raw_stats(b, j, s);
  /* Baselines: what ran before GO when born inside (the sandbox's set-up,
   * not the program), and what a reused slot's counters held before. */
  s->cpu_ns = minus(s->cpu_ns, j->base_cpu_ns);
  s->user_ns = minus(s->user_ns, j->base_user_ns);
  s->sys_ns = minus(s->sys_ns, j->base_sys_ns);
  s->oom_kills = minus(s->oom_kills, j->base_oom);
  s->own_limit_hits = minus(s->own_limit_hits, j->base_own);
  s->pids_max_events = minus(s->pids_max_events, j->base_pids_events);
  s->mem_peak_charged_bytes = s->mem_peak_bytes;
  s->mem_peak_bytes = minus(s->mem_peak_bytes, j->base_mem);
}

bool sb_cg_job_cpu_ns(const sb_cg_backend *b, const sb_cg_job *j, uint64_t *ns) {
  if (j->slot) { /* the CPU-limit poll: one read, not every counter */
    bool ok = sb_cg_slot_cpu_ns(b, j->slot, ns);
    *ns = minus(*ns, j->base_cpu_ns);
    return ok;
  }
  sb_cg_stats s;
  sb_cg_job_stats(b, j, &s);
  *ns = s.cpu_ns;
  return s.has_cpu;
}

void sb_cg_job_kill(const sb_cg_backend *b, const sb_cg_job *j) {
  /* A slot: the init's SIGKILL ends its pid namespace, i.e. the job, and
   * the next job checks the slot is empty (cgroup_slot.c: no cgroup.kill). */
  if (b->kind == SB_CGROUP_V2 && j->created && !j->slot) sb_cg2_job_kill(b, j);
}

void sb_cg_job_destroy(const sb_cg_backend *b, sb_cg_job *j) {
  if (!j->created) return;
  if (j->slot) { /* emptied and reset when the slot's next job takes it */
    sb_cg_slot_release(j->slot);
    j->slot = NULL;
    j->created = false;
    return;
  }
  if (b->kind == SB_CGROUP_V1) sb_cg1_job_destroy(j);
  if (b->kind == SB_CGROUP_V2) sb_cg2_job_destroy(j);
  j->created = false;
}

bool sb_cg_limits_memory(const sb_cg_backend *b) {
  return b->kind == SB_CGROUP_V1 || (b->kind == SB_CGROUP_V2 && b->v2_memory);
}
bool sb_cg_limits_pids(const sb_cg_backend *b) {
  return b->kind == SB_CGROUP_V1 || (b->kind == SB_CGROUP_V2 && b->v2_pids);
}
bool sb_cg_counts_cpu(const sb_cg_backend *b) {
  return b->kind == SB_CGROUP_V1 || (b->kind == SB_CGROUP_V2 && b->v2_cpu);
}
