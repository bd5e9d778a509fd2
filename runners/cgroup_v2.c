/* cgroup v2 backend (parent side). With the memory and pids controllers:
 * memory.max (+ memory.swap.max = 0, memory.oom.group = 1), pids.max,
 * memory.peak, memory.events' oom_kill and oom_group_kill, pids.events'
 * max. Always, even on a controller-less hybrid mount: cpu.stat's
 * usage/user/system microseconds, and cgroup.kill (5.14+) to end every task
 * of a job in one write.
 *
 * Each job directory is kept open so that the sandbox init can be created
 * inside it with clone3(CLONE_INTO_CGROUP) (5.7+), instead of being moved in
 * by a write to cgroup.procs: that write takes cgroup_threadgroup_rwsem for
 * writing, which waits for an RCU grace period when no other attach ran
 * recently (10-18 ms for a lone job, bench/FINDINGS.md). Born inside, the
 * init's set-up is in the counters: cgroup.c subtracts a baseline taken at
 * GO, and memory.peak is reset then (a write resets it for the file
 * descriptor it came through, 6.12+; older kernels keep the set-up's few
 * pages in the peak). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool file_has_word(const char *path, const char *word) {
  char buf[1024];
  if (sb_read_file(path, buf, sizeof buf) < 0) return false;
  size_t n = strlen(word);
  for (char *p = buf; (p = strstr(p, word)); p += n)
    if ((p == buf || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0')) return true;
  return false;
}

/* Enable memory+pids for the children of dir. A non-root cgroup that holds
 * processes cannot ("no internal processes"): move ourselves into a leaf
 * first. Runs at start-up, before any thread exists. */
static int enable_controllers(const char *dir, bool is_root_cgroup, char err[SB_ERR_MAX]) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
  if (file_has_word(path, "memory") && file_has_word(path, "pids")) return 0;
  int rc = sb_write_file(path, "+memory +pids");
  if (rc == -EBUSY && !is_root_cgroup) {
    char leaf[PATH_MAX], me[32];
    snprintf(leaf, sizeof leaf, "%s/surgebox-supervisor", dir);
    if (mkdir(leaf, 0755) < 0 && errno != EEXIST) {
      sb_err(err, "mkdir %s: %s", leaf, strerror(errno));
      return -errno;
    }
    snprintf(me, sizeof me, "%d", (int)getpid());
    snprintf(path, sizeof path, "%s/cgroup.procs", leaf);
    rc = sb_write_file(path, me);
    snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
    if (rc == 0) rc = sb_write_file(path, "+memory +pids");
  }
  if (rc < 0) sb_err(err, "cannot enable memory+pids in %s: %s", dir, strerror(-rc));
  return rc;
}

int sb_cg2_open(sb_cg_backend *b, const char *instance, const char *lock_dir, bool require_controllers,
                char err[SB_ERR_MAX]) {
  char mount[PATH_MAX], own[PATH_MAX], parent[PATH_MAX], path[PATH_MAX];
  if (sb_cg_find_mount("", mount, own) < 0) {
    sb_err(err, "no cgroup2 mount");
    return -ENOENT;
  }
  if (snprintf(parent, sizeof parent, "%s%s", mount, own) >= (int)sizeof parent) return -ENAMETOOLONG;
  snprintf(path, sizeof path, "%s/cgroup.controllers", parent);
  bool mem = file_has_word(path, "memory"), pids = file_has_word(path, "pids");
  if (require_controllers && !(mem && pids)) {
    sb_err(err, "%s lacks the memory and pids controllers", parent);
    return -ENOTSUP;
  }
  if (mem && pids && enable_controllers(parent, own[0] == '\0', err) < 0) {
    if (require_controllers) return -ENOTSUP;
    mem = pids = false;
  }
  snprintf(b->v2, sizeof b->v2, "%s/%s", parent, instance);
  int rc = sb_cg_claim_instance(b, parent, b->v2, lock_dir, err);
  if (rc < 0) return rc;
  if (mem && pids) {
    snprintf(path, sizeof path, "%s/cgroup.subtree_control", b->v2);
    if (sb_write_file(path, "+memory +pids") < 0) mem = pids = false;
  }
  b->v2_memory = mem;
  b->v2_pids = pids;
  snprintf(path, sizeof path, "%s/cpu.stat", b->v2);
  b->v2_cpu = access(path, R_OK) == 0;
  snprintf(path, sizeof path, "%s/cgroup.kill", b->v2);
  b->v2_kill = access(path, W_OK) == 0;
  b->kind = SB_CGROUP_V2;
  snprintf(b->describe, sizeof b->describe, "v2 at %s (%s%s%s%s)", parent, mem ? "memory " : "",
           pids ? "pids " : "", b->v2_cpu ? "cpu.stat " : "", b->v2_kill ? "cgroup.kill" : "");
  return 0;
}

void sb_cg2_close(sb_cg_backend *b) { sb_cg_rmdir_retry(b->v2); }


int sb_cg2_job_dirs(const sb_cg_backend *b, const char *name, sb_cg_job *j, char err[SB_ERR_MAX]) {
  snprintf(j->v2, sizeof j->v2, "%s/%s", b->v2, name);
  int mk = sb_cg_mkdir_job(j->v2);
  if (mk < 0) {
    sb_err(err, "cannot create %s: %s", j->v2, strerror(-mk));
    return mk;
  }
  j->v2_fd = open(j->v2, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* for CLONE_INTO_CGROUP; -1 is fine */
  return 0;
}

int sb_cg2_job_create(const sb_cg_backend *b, const char *name, const sb_limits *l, sb_cg_job *j,
                      char err[SB_ERR_MAX]) {
  int mk = sb_cg2_job_dirs(b, name, j, err);
  if (mk < 0) return mk;
  j->created = true;
  char v[32];
  int rc = 0;
  if (b->v2_memory) {
    snprintf(v, sizeof v, "%llu", (unsigned long long)l->memory_mib << 20);
    rc = sb_cg_put(j->v2, "memory.max", v, err);
    if (!rc) sb_cg_put(j->v2, "memory.swap.max", "0", NULL); /* absent without swap accounting */
    /* An OOM ends the whole job (tasks at oom_score_adj -1000, the init,
     * are spared and report it), not one process of the tree. */
    if (!rc) sb_cg_put(j->v2, "memory.oom.group", "1", NULL); /* 4.19+ */
  }
  if (!rc && b->v2_pids) {
    snprintf(v, sizeof v, "%llu", (unsigned long long)l->pids);
    rc = sb_cg_put(j->v2, "pids.max", v, err);
  }
  if (rc) sb_cg2_job_destroy(j);
  return rc;
}

int sb_cg2_job_attach(const sb_cg_job *j, pid_t pid, char err[SB_ERR_MAX]) {
  char v[32];
  snprintf(v, sizeof v, "%d", (int)pid);
  return sb_cg_put(j->v2, "cgroup.procs", v, err);
}

void sb_cg2_job_stats(const sb_cg_backend *b, const sb_cg_job *j, sb_cg_stats *s) {
  bool ok = false;
  if (b->v2_cpu) {
    s->cpu_ns = sb_cg_read_keyed(j->v2, "cpu.stat", "usage_usec", &ok) * 1000;
    s->user_ns = sb_cg_read_keyed(j->v2, "cpu.stat", "user_usec", NULL) * 1000;
    s->sys_ns = sb_cg_read_keyed(j->v2, "cpu.stat", "system_usec", NULL) * 1000;
    s->has_cpu = ok;
  }
  if (b->v2_memory) {
    char path[PATH_MAX], buf[64];
    snprintf(path, sizeof path, "%s/memory.peak", j->v2);
    ssize_t n = -1;
    if (j->v2_peak_fd >= 0) { /* the descriptor the reset went through */
      n = pread(j->v2_peak_fd, buf, sizeof buf - 1, 0);
      if (n >= 0) buf[n] = '\0';
    } else {
      n = sb_read_file(path, buf, sizeof buf);
    }
    if (n > 0) { /* 5.19+ */
      s->mem_peak_bytes = strtoull(buf, NULL, 10);
      s->has_peak = true;
    }
    s->oom_kills = sb_cg_read_keyed(j->v2, "memory.events", "oom_kill", NULL) +
                   sb_cg_read_keyed(j->v2, "memory.events", "oom_group_kill", NULL); /* 6.1+ */
    s->own_limit_hits = sb_cg_read_keyed(j->v2, "memory.events", "oom", &s->has_own);
  }
  if (b->v2_pids) s->pids_max_events = sb_cg_read_keyed(j->v2, "pids.events", "max", NULL);
}

void sb_cg2_job_kill(const sb_cg_backend *b, const sb_cg_job *j) {
  if (b->v2_kill) sb_cg_put(j->v2, "cgroup.kill", "1", NULL);
}

void sb_cg2_job_reset_peak(const sb_cg_backend *b, sb_cg_job *j) {
  if (!b->v2_memory || j->v2_peak_fd >= 0) return;
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/memory.peak", j->v2);
  SBU_AUTOCLOSE int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd >= 0 && write(fd, "reset\n", 6) == 6) j->v2_peak_fd = sbu_take_fd(&fd); /* else closed: read-only before 6.12 */
}

void sb_cg2_job_destroy(sb_cg_job *j) {
  sbu_closep(&j->v2_peak_fd);
  sbu_closep(&j->v2_fd);
  if (j->v2[0]) sb_cg_rmdir_retry(j->v2);
}
