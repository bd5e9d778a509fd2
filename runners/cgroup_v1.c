/* cgroup v1 backend: memory, pids and cpuacct hierarchies (parent side).
 * Limits: memory.limit_in_bytes (+ memory.memsw.limit_in_bytes when swap is
 * accounted, so swap cannot extend it), pids.max. Accounting: cpuacct.usage*
 * (ns, whole tree), memory.max_usage_in_bytes, memory.oom_control's oom_kill
 * counter, pids.events' "max" counter. v1 has no cgroup.kill: the runner
 * kills the pid namespace's init instead, which takes every task with it. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const controllers[] = {"memory", "pids", "cpuacct"};

static char *slot(sb_cg_backend *b, int i) {
  return i == 0 ? b->v1_memory : i == 1 ? b->v1_pids : b->v1_cpuacct;
}
static char *jslot(sb_cg_job *j, int i) {
  return i == 0 ? j->v1_memory : i == 1 ? j->v1_pids : j->v1_cpuacct;
}

int sb_cg1_open(sb_cg_backend *b, const char *instance, const char *lock_dir, char err[SB_ERR_MAX]) {
  for (int i = 0; i < 3; i++) {
    char mount[PATH_MAX], own[PATH_MAX], parent[PATH_MAX];
    if (sb_cg_find_mount(controllers[i], mount, own) < 0) {
      sb_err(err, "no v1 %s hierarchy", controllers[i]);
      return -ENOENT;
    }
    if (snprintf(parent, sizeof parent, "%s%s", mount, own) >= (int)sizeof parent) return -ENAMETOOLONG;
    if (snprintf(slot(b, i), PATH_MAX, "%s/%s", parent, instance) >= PATH_MAX) return -ENAMETOOLONG;
    bool shared = false; /* co-mounted controllers: one directory, claimed once */
    for (int k = 0; k < i; k++) shared |= strcmp(slot(b, k), slot(b, i)) == 0;
    int rc = shared ? 0 : sb_cg_claim_instance(b, parent, slot(b, i), lock_dir, err);
    if (rc < 0) {
      for (int k = 0; k < i; k++) rmdir(slot(b, k));
      return rc;
    }
  }
  char probe[PATH_MAX];
  snprintf(probe, sizeof probe, "%s/memory.memsw.limit_in_bytes", b->v1_memory);
  b->v1_memsw = access(probe, W_OK) == 0;
  b->kind = SB_CGROUP_V1;
  snprintf(b->describe, sizeof b->describe, "v1 (memory, pids, cpuacct)");
  return 0;
}

void sb_cg1_close(sb_cg_backend *b) {
  for (int i = 0; i < 3; i++) sb_cg_rmdir_retry(slot(b, i));
}


int sb_cg1_job_dirs(const sb_cg_backend *b, const char *name, sb_cg_job *j, char err[SB_ERR_MAX]) {
  sb_cg_backend *bb = (sb_cg_backend *)b;
  for (int i = 0; i < 3; i++) {
    snprintf(jslot(j, i), PATH_MAX, "%s/%s", slot(bb, i), name);
    int rc = sb_cg_mkdir_job(jslot(j, i));
    if (rc < 0) {
      sb_err(err, "cannot create %s: %s", jslot(j, i), strerror(-rc));
      for (int k = 0; k < i; k++) rmdir(jslot(j, k));
      return rc;
    }
  }
  return 0;
}

int sb_cg1_job_create(const sb_cg_backend *b, const char *name, const sb_limits *l, sb_cg_job *j,
                      char err[SB_ERR_MAX]) {
  int mk = sb_cg1_job_dirs(b, name, j, err);
  if (mk < 0) return mk;
  j->created = true;
  char v[32];
  snprintf(v, sizeof v, "%llu", (unsigned long long)l->memory_mib << 20);
  int rc = sb_cg_put(j->v1_memory, "memory.limit_in_bytes", v, err);
  if (!rc && b->v1_memsw) rc = sb_cg_put(j->v1_memory, "memory.memsw.limit_in_bytes", v, err);
  if (!rc) sb_cg_put(j->v1_memory, "memory.swappiness", "0", NULL); /* best effort */
  snprintf(v, sizeof v, "%llu", (unsigned long long)l->pids);
  if (!rc) rc = sb_cg_put(j->v1_pids, "pids.max", v, err);
  if (rc) sb_cg1_job_destroy(j);
  return rc;
}

int sb_cg1_job_attach(const sb_cg_job *j, pid_t pid, char err[SB_ERR_MAX]) {
  char v[32];
  snprintf(v, sizeof v, "%d", (int)pid);
  for (int i = 0; i < 3; i++) {
    int rc = sb_cg_put(jslot((sb_cg_job *)j, i), "cgroup.procs", v, err);
    if (rc) return rc;
  }
  return 0;
}

static uint64_t read_u64(const char *dir, const char *file, bool *ok) {
  char path[PATH_MAX], buf[64];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  int n = sb_read_file(path, buf, sizeof buf);
  if (n <= 0) {
    if (ok) *ok = false;
    return 0;
  }
  return strtoull(buf, NULL, 10);
}


void sb_cg1_scale_user_sys(sb_cg_stats *s) {
  /* usage_user/usage_sys come from tick sampling while usage is exact:
   * keep their ratio, scaled to the exact total. */
  if (s->user_ns + s->sys_ns > 0) {
    uint64_t user = (uint64_t)((double)s->cpu_ns * (double)s->user_ns / (double)(s->user_ns + s->sys_ns));
    s->user_ns = user;
    s->sys_ns = s->cpu_ns - user;
  }
}

void sb_cg1_job_stats(const sb_cg_job *j, sb_cg_stats *s) {
  bool ok = true;
  s->cpu_ns = read_u64(j->v1_cpuacct, "cpuacct.usage", &ok);
  s->user_ns = read_u64(j->v1_cpuacct, "cpuacct.usage_user", &ok);
  s->sys_ns = read_u64(j->v1_cpuacct, "cpuacct.usage_sys", &ok);
  s->has_cpu = ok;
  sb_cg1_scale_user_sys(s);
  ok = true;
  s->mem_peak_bytes = read_u64(j->v1_memory, "memory.max_usage_in_bytes", &ok);
  s->has_peak = ok;
  s->oom_kills = sb_cg_read_keyed(j->v1_memory, "memory.oom_control", "oom_kill", NULL);
  ok = true;
  s->own_limit_hits = read_u64(j->v1_memory, "memory.failcnt", &ok);
  s->has_own = ok;
  bool sw = true;
  uint64_t memsw = read_u64(j->v1_memory, "memory.memsw.failcnt", &sw);
  if (sw) s->own_limit_hits += memsw;
  s->pids_max_events = sb_cg_read_keyed(j->v1_pids, "pids.events", "max", NULL);
}

void sb_cg1_job_destroy(sb_cg_job *j) {
  for (int i = 0; i < 3; i++)
    if (jslot(j, i)[0]) sb_cg_rmdir_retry(jslot(j, i));
}
