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

static bool has_token(const char *list, const char *tok) {
  size_t n = strlen(tok);
  for (const char *p = list; (p = strstr(p, tok)); p += n)
    if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
      return true;
  return false;
}

/* Our own path in a hierarchy, from /proc/self/cgroup. */
static int own_path(const char *controller, char own[PATH_MAX]) {
  SBU_AUTOFCLOSE FILE *f = fopen("/proc/self/cgroup", "re");
  if (!f) return -errno;
  char line[4096];
  int rc = -ENOENT;
  while (fgets(line, sizeof line, f)) {
    char *c1 = strchr(line, ':');
    char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2) continue;
    *c2 = '\0';
    bool match = controller[0] ? has_token(c1 + 1, controller) : (c1[1] == '\0' && line[0] == '0');
    if (!match) continue;
    char *path = c2 + 1;
    path[strcspn(path, "\n")] = '\0';
    snprintf(own, PATH_MAX, "%s", strcmp(path, "/") == 0 ? "" : path);
    rc = 0;
    break;
  }
  return rc;
}

int sb_cg_find_mount(const char *controller, char mount[PATH_MAX], char own[PATH_MAX]) {
  SBU_AUTOFCLOSE FILE *f = fopen("/proc/self/mountinfo", "re");
  if (!f) return -errno;
  char line[4096];
  int rc = -ENOENT;
  char root[PATH_MAX] = "";
  while (fgets(line, sizeof line, f)) {
    /* id parent major:minor root mountpoint opts... - fstype source superopts */
    char r[PATH_MAX], mp[PATH_MAX], fstype[64], superopts[1024];
    char *sep = strstr(line, " - ");
    if (!sep || sscanf(line, "%*s %*s %*s %4095s %4095s", r, mp) != 2) continue;
    if (sscanf(sep + 3, "%63s %*s %1023s", fstype, superopts) != 2) continue;
    bool match = controller[0] ? (strcmp(fstype, "cgroup") == 0 && has_token(superopts, controller))
                               : strcmp(fstype, "cgroup2") == 0;
    if (!match) continue;
    snprintf(mount, PATH_MAX, "%s", mp);
    snprintf(root, sizeof root, "%s", strcmp(r, "/") == 0 ? "" : r);
    rc = 0;
    break;
  }
  if (rc) return rc;
  rc = own_path(controller, own);
  if (rc) return rc;
  /* A mount of a sub-tree (containers): our path is relative to its root. */
  size_t rl = strlen(root);
  if (rl && strncmp(own, root, rl) == 0) memmove(own, own + rl, strlen(own + rl) + 1);
  return 0;
}

int sb_cg_rmdir_retry(const char *path) {
  /* A cgroup whose last task was just reaped can stay busy for a moment. */
  for (int i = 0; i < 200; i++) {
    if (rmdir(path) == 0 || errno == ENOENT) return 0;
    if (errno != EBUSY) return -errno;
    struct timespec ts = {0, 1000000 * (i < 10 ? 1 : 10)};
    nanosleep(&ts, NULL);
  }
  return -EBUSY;
}

static void kill_listed(const char *dir) {
  char path[PATH_MAX], buf[8192];
  snprintf(path, sizeof path, "%s/cgroup.procs", dir);
  if (sb_read_file(path, buf, sizeof buf) <= 0) return;
  for (char *p = buf; *p;) {
    long pid = strtol(p, &p, 10);
    if (pid > 0) kill((pid_t)pid, SIGKILL);
    while (*p == '\n') p++;
  }
}

/* A job cgroup left by a dead instance, or by one of ours whose rmdir gave
 * up: whatever is still listed in it is killed, then it goes. */
static int reclaim(const char *dir) {
  kill_listed(dir);
  return sb_cg_rmdir_retry(dir);
}

int sb_cg_mkdir_job(const char *path) {
  if (mkdir(path, 0755) == 0) return 0;
  if (errno != EEXIST) return -errno;
  int rc = reclaim(path);
  if (rc < 0) return rc;
  return mkdir(path, 0755) < 0 ? -errno : 0;
}

void sb_cg_remove_stale(const char *dir, const char *lock_dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, SB_INSTANCE_PREFIX, strlen(SB_INSTANCE_PREFIX)) != 0) continue;
    if (!sb_instance_is_stale(dir, e->d_name, lock_dir)) continue;
    char inst[PATH_MAX];
    snprintf(inst, sizeof inst, "%s/%s", dir, e->d_name);
    DIR *jd = opendir(inst);
    struct dirent *je;
    while (jd && (je = readdir(jd))) {
      if (je->d_type != DT_DIR || je->d_name[0] == '.') continue;
      char job[PATH_MAX];
      if (snprintf(job, sizeof job, "%s/%s", inst, je->d_name) >= (int)sizeof job) continue;
      reclaim(job);
    }
    if (jd) closedir(jd);
    sb_cg_rmdir_retry(inst);
  }
  closedir(d);
}

int sb_cg_claim_instance(sb_cg_backend *b, const char *parent, const char *path, const char *lock_dir,
                         char err[SB_ERR_MAX]) {
  /* The parent's flock: no other instance judges ours between mkdir and
   * flock. Where it cannot be taken, judge and create without it. */
  SBU_AUTOCLOSE int pfd = sb_lock_dir(parent, true); /* held until we return */
  (void)pfd;                                          /* used for its lifetime only (clang's -Wunused-variable) */
  sb_cg_remove_stale(parent, lock_dir);
  int rc = mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
  int fd = rc < 0 ? rc : sb_lock_dir(path, false);
  if (rc < 0 || fd < 0) {
    sb_err(err, "cannot %s %s: %s", rc < 0 ? "create" : "lock", path, strerror(rc < 0 ? -rc : -fd));
    return rc < 0 ? rc : fd;
  }
  b->inst_fd[b->n_inst_fd++] = fd;
  return 0;
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

uint64_t sb_cg_keyed(const char *text, const char *key, bool *found) {
  if (found) *found = false;
  size_t kl = strlen(key);
  for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
      if (found) *found = true;
      return strtoull(line + kl + 1, NULL, 10);
    }
  }
  return 0;
}

uint64_t sb_cg_read_keyed(const char *dir, const char *file, const char *key, bool *found) {
  char path[PATH_MAX], buf[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  if (found) *found = false;
  if (sb_read_file(path, buf, sizeof buf) <= 0) return 0;
  return sb_cg_keyed(buf, key, found);
}

int sb_cg_put(const char *dir, const char *file, const char *val, char err[SB_ERR_MAX]) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  int rc = sb_write_file(path, val);
  if (rc < 0 && err) sb_err(err, "write %s=%s: %s", path, val, strerror(-rc));
  return rc;
}
