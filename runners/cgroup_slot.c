/* A cgroup per worker slot (parent side), created at the slot's first job
 * and reused by its later jobs instead of a mkdir, ~15 opens and a rmdir
 * per job (per hierarchy on v1). The control files a job needs are opened
 * once and kept; limits are written only when they change.
 *
 * Between two jobs the slot is cleaned on a thread of its own (the slot's
 * teardown queue, teardown.c), never on the caller's (the daemon's loop):
 *   - the previous job's pooled mount namespace (its /tmp, /dev/shm tmpfs
 *     pages, charged here) is closed first on that queue, so the cleaning
 *     starts once it is torn down;
 *   - no process is left: cgroup.procs is read and whatever is listed is
 *     killed until it is empty (v2: frozen meanwhile), never assumed from
 *     the init's exit (which kills its pid namespace: the job's end);
 *   - no shmem (tmpfs, e.g. a multi-step job's /app) is still charged: such
 *     pages would count against the next job's limit; the slot is cleaned
 *     once more when a job wants it (the workspace may be gone by then),
 *     and if still charged that job takes a fresh cgroup of its own;
 *   - page cache it left charged over 8 MB is dropped (v1
 *     memory.force_empty, v2 memory.reclaim: up to seconds).
 * Meanwhile the slot is PREPARING: sb_runtime_slot_ready says no, and the
 * daemon starts nothing on it (another ready slot, or the notification on
 * sb_runtime_slot_ready_fd). When a job takes a READY slot (on the loop, a
 * few writes and reads on open descriptors): its limits are written and
 * the counters reset: v1 cpuacct.usage and memory.failcnt are zeroed,
 * memory.max_usage_in_bytes reset to the current usage; v2 memory.peak
 * is reset through the slot's own descriptor (per-fd, 6.12+; before that
 * the slot is not used with a memory controller); what cannot be reset
 * (oom_kill, pids.events' max, cpu.stat, the usage left in clean page
 * cache) is read as a baseline and subtracted (cgroup.c).
 * A slot that cannot be emptied or set up is given up (BROKEN) and its
 * jobs take cgroups of their own. */
#include "internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define KILL_ROUNDS 100       /* kill + re-read rounds before the slot is given up */
#define SHMEM_RESIDUE_MAX (1u << 20)
#define RECLAIM_ABOVE (8u << 20) /* measured after a Python job: 0.2-0.5 MB (bench/FINDINGS.md) */

enum { D_MEM, D_PIDS, D_CPU }; /* v1 hierarchies; v2 uses D_MEM's slot for its one directory */

typedef struct {
  int dir; /* D_* */
  const char *name;
  int flags;
  bool optional;
} file_def;

static const file_def v1_files[SB_SLOT_NFD] = {
    [SB_SF_PROCS_MEM] = {D_MEM, "cgroup.procs", O_RDWR, false},
    [SB_SF_PROCS_PIDS] = {D_PIDS, "cgroup.procs", O_RDWR, false},
    [SB_SF_PROCS_CPU] = {D_CPU, "cgroup.procs", O_RDWR, false},
    [SB_SF_MEM_LIMIT] = {D_MEM, "memory.limit_in_bytes", O_WRONLY, false},
    [SB_SF_MEMSW_LIMIT] = {D_MEM, "memory.memsw.limit_in_bytes", O_WRONLY, true},
    [SB_SF_PIDS_MAX] = {D_PIDS, "pids.max", O_WRONLY, false},
    [SB_SF_CPU] = {D_CPU, "cpuacct.usage", O_RDWR, false},
    [SB_SF_CPU_USER] = {D_CPU, "cpuacct.usage_user", O_RDONLY, false},
    [SB_SF_CPU_SYS] = {D_CPU, "cpuacct.usage_sys", O_RDONLY, false},
    [SB_SF_PEAK] = {D_MEM, "memory.max_usage_in_bytes", O_RDWR, false},
    [SB_SF_MEM_STAT] = {D_MEM, "memory.stat", O_RDONLY, false},
    [SB_SF_USAGE] = {D_MEM, "memory.usage_in_bytes", O_RDONLY, false},
    [SB_SF_FAILCNT] = {D_MEM, "memory.failcnt", O_RDWR, true},
    [SB_SF_OOM] = {D_MEM, "memory.oom_control", O_RDONLY, false},
    [SB_SF_MEMSW_FAILCNT] = {D_MEM, "memory.memsw.failcnt", O_RDWR, true},
    [SB_SF_PIDS_EVENTS] = {D_PIDS, "pids.events", O_RDONLY, false},
    [SB_SF_FREEZE] = {-1, NULL, 0, true},
    [SB_SF_RECLAIM] = {D_MEM, "memory.force_empty", O_WRONLY, true},
};

/* v2: memory and pids files only where the controllers are (v2_memory, v2_pids). */
static const file_def v2_files[SB_SLOT_NFD] = {
    [SB_SF_PROCS_MEM] = {D_CPU, "cgroup.procs", O_RDWR, false}, /* the one directory, whatever its controllers */
    [SB_SF_PROCS_PIDS] = {-1, NULL, 0, true},
    [SB_SF_PROCS_CPU] = {-1, NULL, 0, true},
    [SB_SF_MEM_LIMIT] = {D_MEM, "memory.max", O_WRONLY, false},
    [SB_SF_MEMSW_LIMIT] = {D_MEM, "memory.swap.max", O_WRONLY, true},
    [SB_SF_PIDS_MAX] = {D_PIDS, "pids.max", O_WRONLY, false},
    [SB_SF_CPU] = {D_CPU, "cpu.stat", O_RDONLY, true},
    [SB_SF_CPU_USER] = {-1, NULL, 0, true},
    [SB_SF_CPU_SYS] = {-1, NULL, 0, true},
    [SB_SF_PEAK] = {D_MEM, "memory.peak", O_RDWR, false},
    [SB_SF_MEM_STAT] = {D_MEM, "memory.stat", O_RDONLY, false},
    [SB_SF_USAGE] = {D_MEM, "memory.current", O_RDONLY, false},
    [SB_SF_FAILCNT] = {-1, NULL, 0, true},
    [SB_SF_OOM] = {D_MEM, "memory.events", O_RDONLY, false},
    [SB_SF_MEMSW_FAILCNT] = {-1, NULL, 0, true},
    [SB_SF_PIDS_EVENTS] = {D_PIDS, "pids.events", O_RDONLY, false},
    [SB_SF_FREEZE] = {D_CPU, "cgroup.freeze", O_WRONLY, true},
    [SB_SF_RECLAIM] = {D_MEM, "memory.reclaim", O_WRONLY, true}, /* 5.19+ */
};

static const char *slot_dir(const sb_cg_job *d, int which) {
  if (d->v2[0]) return d->v2;
  return which == D_MEM ? d->v1_memory : which == D_PIDS ? d->v1_pids : d->v1_cpuacct;
}

/* v2 without a controller: its files are absent, and so is their use. */
static bool v2_has(const sb_cg_backend *b, int dir) {
  return dir == D_CPU || (dir == D_MEM && b->v2_memory) || (dir == D_PIDS && b->v2_pids);
}

static int fd_read(int fd, char *buf, size_t cap) {
  if (fd < 0) return -EBADF;
  ssize_t n = pread(fd, buf, cap - 1, 0);
  if (n < 0) return -errno;
  buf[n] = '\0';
  return (int)n;
}

static uint64_t fd_u64(const sb_cg_slot *s, int f, bool *ok) {
  char buf[64];
  if (fd_read(s->fd[f], buf, sizeof buf) <= 0) {
    if (ok) *ok = false;
    return 0;
  }
  return strtoull(buf, NULL, 10);
}

static uint64_t fd_keyed(const sb_cg_slot *s, int f, const char *key, bool *found) {
  char buf[4096];
  if (found) *found = false;
  if (fd_read(s->fd[f], buf, sizeof buf) <= 0) return 0;
  return sb_cg_keyed(buf, key, found);
}

static int put(const sb_cg_slot *s, int f, const char *val) {
  if (s->fd[f] < 0) return -EBADF;
  size_t n = strlen(val);
  ssize_t w = pwrite(s->fd[f], val, n, 0);
  return w == (ssize_t)n ? 0 : w < 0 ? -errno : -EIO;
}

static void slot_close_fds(sb_cg_slot *s) {
  for (int i = 0; i < SB_SLOT_NFD; i++) sbu_closep(&s->fd[i]);
  sbu_closep(&s->dirs.v2_fd);
}

/* First job of the slot: the directories (claimed like a job's, so a
 * predecessor's leftover is emptied) and every file it will need. */
static int slot_create(sb_cg_backend *b, sb_cg_slot *s, int index) {
  char name[32];
  snprintf(name, sizeof name, "slot%d", index);
  char err[SB_ERR_MAX];
  /* the per-job creation without its limit writes: sb_cg_slot_take writes them */
  int rc = b->kind == SB_CGROUP_V1 ? sb_cg1_job_dirs(b, name, &s->dirs, err) : sb_cg2_job_dirs(b, name, &s->dirs, err);
  if (rc < 0) return rc;
  s->created = true;
  const file_def *defs = b->kind == SB_CGROUP_V1 ? v1_files : v2_files;
  for (int i = 0; i < SB_SLOT_NFD; i++) {
    const file_def *d = &defs[i];
    if (d->dir < 0 || (b->kind == SB_CGROUP_V2 && !v2_has(b, d->dir))) continue;
    if (i == SB_SF_MEMSW_LIMIT && b->kind == SB_CGROUP_V1 && !b->v1_memsw) continue;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", slot_dir(&s->dirs, d->dir), d->name);
    s->fd[i] = open(path, d->flags | O_CLOEXEC);
    if (s->fd[i] < 0 && !d->optional) return -errno;
  }
  /* v2's memory.peak resets per descriptor from 6.12 on; before that, a
   * reused slot would carry the previous job's peak. */
  if (b->kind == SB_CGROUP_V2 && b->v2_memory && put(s, SB_SF_PEAK, "reset\n") < 0) return -ENOTSUP;
  if (b->kind == SB_CGROUP_V1) sb_cg_put(s->dirs.v1_memory, "memory.swappiness", "0", NULL); /* best effort */
  if (b->kind == SB_CGROUP_V2 && b->v2_memory) sb_cg_put(s->dirs.v2, "memory.oom.group", "1", NULL);
  return 0;
}

/* Listed pids of one cgroup.procs, killed; true when it was empty. */
static bool kill_listed_fd(int fd) {
  char buf[8192];
  int n = fd_read(fd, buf, sizeof buf);
  if (n <= 0) return n == 0;
  for (char *p = buf; *p;) {
    long pid = strtol(p, &p, 10);
    if (pid > 0) kill((pid_t)pid, SIGKILL);
    while (*p == '\n') p++;
  }
  return false;
}

static bool emptied(const sb_cg_backend *b, sb_cg_slot *s) {
  static const int procs[] = {SB_SF_PROCS_MEM, SB_SF_PROCS_PIDS, SB_SF_PROCS_CPU};
  for (int round = 0; round < KILL_ROUNDS; round++) {
    bool empty = true;
    /* Not cgroup.kill: on this 6.18 a cgroup once killed that way gets
     * every later child born into it by CLONE_INTO_CGROUP SIGKILLed (the
     * fork compares the kill counts of two different cgroups). */
    bool freeze = round && b->kind == SB_CGROUP_V2 && s->fd[SB_SF_FREEZE] >= 0;
    if (freeze) put(s, SB_SF_FREEZE, "1"); /* no fork between the read and the kill */
    for (int i = 0; i < 3; i++)
      if (s->fd[procs[i]] >= 0) empty &= kill_listed_fd(s->fd[procs[i]]);
    if (freeze) put(s, SB_SF_FREEZE, "0"); /* SIGKILL is delivered on thaw */
    if (empty) return true;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  return false;
}

/* Writes v to file f unless it holds it already. */
static int limit(sb_cg_slot *s, int f, uint64_t v, uint64_t *last) {
  if (*last == v) return 0;
  char t[32];
  snprintf(t, sizeof t, "%llu", (unsigned long long)v);
  int rc = put(s, f, t);
  *last = rc ? 0 : v;
  return rc;
}

static int write_limits(const sb_cg_backend *b, sb_cg_slot *s, const sb_limits *l) {
  uint64_t mem = (uint64_t)l->memory_mib << 20;
  int rc = 0;
  if (b->kind == SB_CGROUP_V1) {
    /* memsw must stay >= memory: raise memsw first, lower it last */
    bool up = s->last_mem && mem > s->last_mem; /* at first, memory's limit is unlimited */
    if (up && b->v1_memsw) rc = limit(s, SB_SF_MEMSW_LIMIT, mem, &s->last_memsw);
    if (!rc) rc = limit(s, SB_SF_MEM_LIMIT, mem, &s->last_mem);
    if (!rc && !up && b->v1_memsw) rc = limit(s, SB_SF_MEMSW_LIMIT, mem, &s->last_memsw);
  } else if (b->v2_memory) {
    rc = limit(s, SB_SF_MEM_LIMIT, mem, &s->last_mem);
    if (!rc && s->fd[SB_SF_MEMSW_LIMIT] >= 0 && !s->last_memsw) {
      put(s, SB_SF_MEMSW_LIMIT, "0"); /* absent without swap accounting */
      s->last_memsw = 1;
    }
  }
  if (!rc && (b->kind == SB_CGROUP_V1 || b->v2_pids)) rc = limit(s, SB_SF_PIDS_MAX, l->pids, &s->last_pids);
  return rc;
}

/* What the previous job left in memory that the kernel cannot simply drop. */
static uint64_t shmem_left(const sb_cg_backend *b, const sb_cg_slot *s) {
  bool found = false;
  uint64_t v = fd_keyed(s, SB_SF_MEM_STAT, b->kind == SB_CGROUP_V1 ? "total_shmem" : "shmem", &found);
  return found ? v : UINT64_MAX;
}

/* Clean page cache the previous job read stays charged here. The kernel
 * drops it when the next job needs room, but then the peak (read relative
 * to where usage started) would miss what replaced it: above a few MB it is
 * dropped now. Not always: a job's next run rereads it from disk. */
static void reclaim(const sb_cg_backend *b, sb_cg_slot *s) {
  if (b->kind != SB_CGROUP_V1 && !b->v2_memory) return;
  bool ok = true;
  uint64_t usage = fd_u64(s, SB_SF_USAGE, &ok);
  if (!ok || usage <= RECLAIM_ABOVE) return;
  char v[32];
  snprintf(v, sizeof v, "%llu", (unsigned long long)usage);
  put(s, SB_SF_RECLAIM, b->kind == SB_CGROUP_V1 ? "0" : v); /* best effort: what stays is baselined */
}

static void baseline(const sb_cg_backend *b, sb_cg_slot *s, sb_cg_job *j) {
  if (b->kind == SB_CGROUP_V1) {
    put(s, SB_SF_CPU, "0");
    put(s, SB_SF_FAILCNT, "0");
    put(s, SB_SF_MEMSW_FAILCNT, "0");
    put(s, SB_SF_PEAK, "0"); /* v1: resets it to the current usage */
  } else if (b->v2_memory) {
    put(s, SB_SF_PEAK, "reset\n");
  }
  sb_cg_stats raw;
  memset(&raw, 0, sizeof raw);
  sb_cg_slot_stats(b, s, &raw);
  j->base_cpu_ns = raw.cpu_ns;
  j->base_user_ns = raw.user_ns;
  j->base_sys_ns = raw.sys_ns;
  j->base_oom = raw.oom_kills;
  j->base_own = raw.own_limit_hits;
  j->base_pids_events = raw.pids_max_events;
  /* What stays charged (a few hundred kB of cache and kernel objects) is
   * not the job's: its peak is read relative to it. */
  bool ok = true;
  uint64_t usage = (b->kind == SB_CGROUP_V1 || b->v2_memory) ? fd_u64(s, SB_SF_USAGE, &ok) : 0;
  j->base_mem = ok ? usage : 0;
}

static int state_of(sb_cg_slot *s) { return atomic_load_explicit(&s->state, memory_order_acquire); }
static void set_state(sb_cg_slot *s, int st) { atomic_store_explicit(&s->state, st, memory_order_release); }

static sb_cg_slot *slot_at(const sb_runtime *rt, int index) {
  const sb_cg_backend *b = &rt->cg;
  if (index < 0 || index >= b->n_slots || !b->slots[index] || !b->slots[index]->created) return NULL;
  return b->slots[index];
}

/* On the slot's teardown thread, after the previous job's namespace. Only
 * this slot's descriptors and state are touched (the backend's fields read
 * are set once at start): the loop leaves a PREPARING slot alone. */
void sb_cg_slot_prepare(sb_runtime *rt, sb_cg_slot *s) {
  const sb_cg_backend *b = &rt->cg;
  int st = SB_SLOT_READY;
  if (!emptied(b, s)) st = SB_SLOT_BROKEN;
  else if ((b->kind == SB_CGROUP_V1 || b->v2_memory) && shmem_left(b, s) > SHMEM_RESIDUE_MAX)
    st = s->recheck ? SB_SLOT_STALE : SB_SLOT_RESIDUE; /* e.g. a multi-step job's /app files, charged until its workspace goes */
  else reclaim(b, s);
  s->recheck = false;
  set_state(s, st);
  uint64_t one = 1;
  if (write(rt->slot_ready_fd, &one, sizeof one) < 0) { /* a full counter is still readable */
  }
}

/* The cleaning as its teardown queue calls it back. */
static void prepare_cb(void *slot) {
  sb_cg_slot *s = slot;
  sb_cg_slot_prepare(s->rt, s);
}

static sb_teardown_call prepare_call(sb_cg_slot *s) { return (sb_teardown_call){prepare_cb, s}; }

void sb_cg_slot_fence(sb_runtime *rt, int index, int ns_fd) {
  sb_cg_slot *s = slot_at(rt, index);
  if (!s || !s->fence_due) { /* not a run of the slot: nothing waits on it */
    sb_pool_defer_close(rt, ns_fd);
    return;
  }
  s->fence_due = false;
  if (!sb_teardown_push(&s->worker, ns_fd, prepare_call(s))) { /* cannot queue: as before this change, on this thread */
    if (ns_fd >= 0) close(ns_fd);
    sb_cg_slot_prepare(rt, s);
  }
}

sb_teardown *sb_cg_slot_queue(sb_runtime *rt, int index) {
  sb_cg_slot *s = slot_at(rt, index);
  return s && s->worker.started ? &s->worker : &rt->teardown;
}

bool sb_runtime_slot_ready(sb_runtime *rt, int index) {
  sb_cg_slot *s = slot_at(rt, index);
  if (!s) return true;
  int st = state_of(s);
  if (st == SB_SLOT_PREPARING) return false;
  if (st != SB_SLOT_RESIDUE) return true;
  /* what was charged may be gone (the workspace of a job that ended since):
   * cleaned once more before a job takes it */
  s->recheck = true;
  set_state(s, SB_SLOT_PREPARING);
  if (sb_teardown_push(&s->worker, -1, prepare_call(s))) return false;
  s->recheck = false;
  set_state(s, SB_SLOT_STALE);
  return true;
}

int sb_runtime_slot_ready_fd(const sb_runtime *rt) { return rt->slot_ready_fd; }

void sb_runtime_slot_ready_drain(const sb_runtime *rt) {
  uint64_t n;
  if (rt->slot_ready_fd >= 0 && read(rt->slot_ready_fd, &n, sizeof n) < 0) { /* EAGAIN: nothing new */
  }
}

void sb_runtime_slot_wait(sb_runtime *rt, int index) {
  while (!sb_runtime_slot_ready(rt, index)) {
    struct pollfd pfd = {.fd = rt->slot_ready_fd, .events = POLLIN};
    if (poll(&pfd, 1, 1000) < 0 && errno != EINTR) return;
    sb_runtime_slot_ready_drain(rt);
  }
}

int sb_cg_slot_take(sb_runtime *rt, int index, const sb_limits *l, sb_cg_job *j) {
  sb_cg_backend *b = &rt->cg;
  if (rt->opts.pool <= 0 || b->kind == SB_CGROUP_NONE || index < 0 || rt->slot_ready_fd < 0) return -ENOTSUP;
  if (index >= b->n_slots) { /* an array of pointers: running jobs and teardown threads hold theirs */
    sb_cg_slot **ns = realloc(b->slots, (size_t)(index + 1) * sizeof *ns);
    if (!ns) return -ENOMEM;
    for (int i = b->n_slots; i <= index; i++) ns[i] = NULL;
    b->slots = ns;
    b->n_slots = index + 1;
  }
  if (!b->slots[index]) {
    sb_cg_slot *n = calloc(1, sizeof *n);
    if (!n) return -ENOMEM;
    for (int k = 0; k < SB_SLOT_NFD; k++) n->fd[k] = -1;
    n->dirs.v2_fd = n->dirs.v2_peak_fd = -1;
    sb_teardown_init(&n->worker);
    n->rt = rt;
    set_state(n, SB_SLOT_READY);
    b->slots[index] = n;
  }
  sb_cg_slot *s = b->slots[index];
  if (!s->created) {
    if (state_of(s) == SB_SLOT_BROKEN) return -EBUSY;
    /* a fresh directory (a predecessor's leftover was emptied when it was claimed) */
    if (slot_create(b, s, index) < 0 || sb_teardown_start(&s->worker) < 0 || !emptied(b, s)) {
      set_state(s, SB_SLOT_BROKEN);
      return -ENOTSUP;
    }
  }
  switch (state_of(s)) {
  case SB_SLOT_READY:
    break;
  case SB_SLOT_STALE:
    set_state(s, SB_SLOT_RESIDUE); /* this run takes its own; the next cleans again */
    rt->slot_fallbacks++;
    return -EAGAIN;
  case SB_SLOT_PREPARING:
  case SB_SLOT_RESIDUE: /* started without waiting for it (sb_runtime_slot_ready) */
    rt->slot_fallbacks++;
    return -EAGAIN;
  default:
    return -EBUSY; /* concurrent runs on one slot (the CLI), or given up */
  }
  if (write_limits(b, s, l) < 0) {
    rt->slot_fallbacks++;
    return -EAGAIN; /* e.g. v1 refuses a limit under the current usage */
  }
  memset(j, 0, sizeof *j);
  memcpy(j->v1_memory, s->dirs.v1_memory, sizeof j->v1_memory);
  memcpy(j->v1_pids, s->dirs.v1_pids, sizeof j->v1_pids);
  memcpy(j->v1_cpuacct, s->dirs.v1_cpuacct, sizeof j->v1_cpuacct);
  memcpy(j->v2, s->dirs.v2, sizeof j->v2);
  j->v2_fd = s->dirs.v2_fd; /* the slot's: not closed with the job */
  j->v2_peak_fd = -1;
  j->slot = s;
  j->slot_index = index;
  j->created = true;
  baseline(b, s, j);
  set_state(s, SB_SLOT_BUSY);
  return 0;
}

int sb_cg_slot_procs_dup(const sb_cg_slot *s, int fds[3]) {
  static const int procs[] = {SB_SF_PROCS_MEM, SB_SF_PROCS_PIDS, SB_SF_PROCS_CPU};
  int n = 0;
  for (int i = 0; i < 3; i++) {
    if (s->fd[procs[i]] < 0) continue;
    if ((fds[n] = fcntl(s->fd[procs[i]], F_DUPFD_CLOEXEC, 3)) < 0) {
      while (n) close(fds[--n]);
      return -errno;
    }
    n++;
  }
  return n;
}

int sb_cg_slot_attach(const sb_cg_slot *s, pid_t pid, char err[SB_ERR_MAX]) {
  static const int procs[] = {SB_SF_PROCS_MEM, SB_SF_PROCS_PIDS, SB_SF_PROCS_CPU};
  char v[32];
  snprintf(v, sizeof v, "%d", (int)pid);
  for (int i = 0; i < 3; i++) {
    if (s->fd[procs[i]] < 0) continue;
    int rc = put(s, procs[i], v);
    if (rc) {
      sb_err(err, "attach %d to %s: %s", (int)pid, s->dirs.v2[0] ? s->dirs.v2 : "a slot cgroup", strerror(-rc));
      return rc;
    }
  }
  return 0;
}

void sb_cg_slot_stats(const sb_cg_backend *b, const sb_cg_slot *s, sb_cg_stats *st) {
  bool ok = true;
  if (b->kind == SB_CGROUP_V1) {
    st->cpu_ns = fd_u64(s, SB_SF_CPU, &ok);
    st->user_ns = fd_u64(s, SB_SF_CPU_USER, &ok);
    st->sys_ns = fd_u64(s, SB_SF_CPU_SYS, &ok);
    st->has_cpu = ok;
    sb_cg1_scale_user_sys(st);
    ok = true;
    st->mem_peak_bytes = fd_u64(s, SB_SF_PEAK, &ok);
    st->has_peak = ok;
    st->oom_kills = fd_keyed(s, SB_SF_OOM, "oom_kill", NULL);
    ok = true;
    st->own_limit_hits = fd_u64(s, SB_SF_FAILCNT, &ok);
    st->has_own = ok;
    if (s->fd[SB_SF_MEMSW_FAILCNT] >= 0) st->own_limit_hits += fd_u64(s, SB_SF_MEMSW_FAILCNT, NULL);
    st->pids_max_events = fd_keyed(s, SB_SF_PIDS_EVENTS, "max", NULL);
    return;
  }
  char buf[1024];
  if (b->v2_cpu && fd_read(s->fd[SB_SF_CPU], buf, sizeof buf) > 0) {
    st->cpu_ns = sb_cg_keyed(buf, "usage_usec", &st->has_cpu) * 1000;
    st->user_ns = sb_cg_keyed(buf, "user_usec", NULL) * 1000;
    st->sys_ns = sb_cg_keyed(buf, "system_usec", NULL) * 1000;
  }
  if (b->v2_memory) {
    ok = true;
    st->mem_peak_bytes = fd_u64(s, SB_SF_PEAK, &ok);
    st->has_peak = ok;
    if (fd_read(s->fd[SB_SF_OOM], buf, sizeof buf) > 0) {
      st->oom_kills = sb_cg_keyed(buf, "oom_kill", NULL) + sb_cg_keyed(buf, "oom_group_kill", NULL);
      st->own_limit_hits = sb_cg_keyed(buf, "oom", &st->has_own);
    }
  }
  if (b->v2_pids) st->pids_max_events = fd_keyed(s, SB_SF_PIDS_EVENTS, "max", NULL);
}


bool sb_cg_slot_cpu_ns(const sb_cg_backend *b, const sb_cg_slot *s, uint64_t *ns) {
  bool ok = b->kind == SB_CGROUP_V1 || b->v2_cpu;
  if (b->kind == SB_CGROUP_V1) *ns = fd_u64(s, SB_SF_CPU, &ok);
  else *ns = ok ? fd_keyed(s, SB_SF_CPU, "usage_usec", &ok) * 1000 : 0;
  return ok;
}

void sb_cg_slot_reset_peak(const sb_cg_slot *s) { put(s, SB_SF_PEAK, "reset\n"); }

/* Not ready until cleaned: sb_cg_slot_fence (sb_proc_free, right after)
 * queues the cleaning behind the job's namespace. */
void sb_cg_slot_release(sb_cg_slot *s) {
  s->recheck = false;
  s->fence_due = true;
  set_state(s, SB_SLOT_PREPARING);
}

void sb_cg_slots_close(sb_cg_backend *b) {
  for (int i = 0; i < b->n_slots; i++) {
    sb_cg_slot *s = b->slots[i];
    if (s) sb_teardown_stop(&s->worker); /* what is queued is done first */
    if (s && s->created) {
      emptied(b, s);
      slot_close_fds(s);
      if (b->kind == SB_CGROUP_V1) sb_cg1_job_destroy(&s->dirs);
      else sb_cg2_job_destroy(&s->dirs);
    }
    free(s);
  }
  free(b->slots);
  b->slots = NULL;
  b->n_slots = 0;
}
