/* The memory bound when no cgroup enforces memory (parent side): the
 * rlimits-only backend, i.e. no writable cgroup, a v2 hierarchy without the
 * memory controller (forced v2 on a hybrid host), every unprivileged run.
 * RLIMIT_DATA there is per process and does not count shared mappings or
 * tmpfs pages, so sb_proc_tick calls this poller with its CPU check (every
 * SB_TICK_MS) and the sandbox is killed (limit_hit "memory") when
 *
 *   sum over every process under the sandbox init of
 *       Pss_Anon + SwapPss                  (/proc/<pid>/smaps_rollup)
 *   + the allocated size of every shared-memory object (MAP_SHARED
 *     anonymous memory, memfd, attached SysV shm) a process holds by fd or
 *     by mapping, each object once       (stat of /proc/<pid>/fd/N and
 *                                           /proc/<pid>/map_files/A-B)
 *   + bytes used on /tmp, /dev/shm and /app (when /app is the job's own
 *     tmpfs) beyond what they held at GO    (statfs via /proc/<init>/root)
 *
 * is over the memory limit. PSS so that a page shared by n processes counts
 * once in total, not n times. Objects by their size, not by the pages
 * mapped: MADV_DONTNEED takes pages out of a process's RSS but leaves them
 * in the object. Following map_files needs CAP_SYS_ADMIN (or
 * CAP_CHECKPOINT_RESTORE) in the initial user namespace; without it (an
 * unprivileged supervisor) a mapped object counts as the end of its largest
 * mapped window (offset + length) instead: untouched pages too, and not the
 * pages left outside every window (after a partial munmap or mremap).
 *
 * The init (pid 1 inside) is ours and excluded: it is a copy of the
 * spawner, whose pages are not the program's. Until its exec the program
 * shares the init's memory (CLONE_VM) and is counted: a small copy now,
 * where a copy of the daemon once ended honest jobs memory_limit. Processes are found from
 * the init down through /proc/<pid>/task/<tid>/children: an orphan is
 * re-parented to the init, so nothing in the pid namespace is outside.
 * A warm program (warm.c) is the zygote's child, not the init's: the walk
 * starts from the zygote's children in the job's pid namespace too.
 *
 * Cost: /proc/<pid>/status gives RssAnon + VmSwap from O(1) counters
 * (+ RssShmem if the shm device is unknown), an upper bound of the PSS
 * figure; smaps_rollup walks the page tables (5.5 ms for 1 GiB) and is read
 * only when that bound is over the limit. A poll of one small process costs
 * ~0.25 ms; the next poll comes no sooner than 20x the cost of the last, so
 * a tree built to be expensive to measure gets at most ~5% of the thread.
 *
 * CPU, when no cgroup counts it (sb_cg_counts_cpu false: none, and every
 * unprivileged run): the same walk sums utime+stime+cutime+cstime of every
 * process under the init (/proc/<pid>/stat: the kernel's precise runtime,
 * scaled, in clock ticks), parents before children so a child reaped
 * meanwhile is never counted twice, plus the init's cutime+cstime read
 * first (everything reaped so far). sb_proc_tick kills at the limit;
 * RLIMIT_CPU stays per process at the limit + 1 s as a backstop.
 *
 * Errs towards counting too much: unprivileged, a mapped shared object
 * counts its whole window whether touched or not; a process
 * whose smaps_rollup cannot be read counts its RSS; the program's stdin (a
 * sealed memfd) counts. What it does not see: sb_runtime_enforcement. */
#include "proc_internal.h"

#include <dirent.h>
#include <errno.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static const char *const mount_dirs[SB_MEMPOLL_MOUNTS] = {"tmp", "dev/shm", "app"};
/* [shm_dev_known]: mapped shared memory counted as objects, or by its pages */
static const char *const upper_keys[2][4] = {{"RssAnon", "RssShmem", "VmSwap", NULL}, {"RssAnon", "VmSwap", NULL}};
static const char *const pss_keys[2][4] = {{"Pss_Anon", "Pss_Shmem", "SwapPss", NULL}, {"Pss_Anon", "SwapPss", NULL}};
static const char *const pss_old_keys[] = {"Pss", "SwapPss", NULL}; /* before 5.x split Pss */

#define COST_FACTOR 20
#define MAX_PROCS 65536     /* far above any pids limit; a larger tree is not measured but killed */
/* References to shared-memory objects (fds, mappings) in one poll: each
 * costs a stat (4000 took 29 ms), and a poll must stay short (it runs on
 * the daemon's loop thread, and a costly poll delays the next one). Honest
 * programs hold a handful; a tree with more is killed, not measured. */
#define MAX_OBJS 1024

uint64_t sb_mempoll_kb(const char *text, const char *const *keys, int *found) {
  uint64_t sum = 0;
  *found = 0;
  for (const char *line = text; line && *line;) {
    for (const char *const *k = keys; *k; k++) {
      size_t n = strlen(*k);
      if (strncmp(line, *k, n) == 0 && line[n] == ':') {
        sum += strtoull(line + n + 1, NULL, 10);
        (*found)++;
        break;
      }
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
  return sum;
}

static bool tmpfs_used(pid_t init, const char *dir, uint64_t *bytes) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/root/%s", (int)init, dir);
  struct statfs s;
  if (statfs(path, &s) < 0 || s.f_type != TMPFS_MAGIC) return false;
  *bytes = (uint64_t)(s.f_blocks - s.f_bfree) * (uint64_t)s.f_bsize;
  return true;
}

/* Whether we may follow /proc/<pid>/map_files links: the check is on the
 * caller's capabilities, so one of our own file mappings tells (only those
 * have an entry: the first line may be anonymous, e.g. ASan's shadow). */
static bool can_follow_map_files(void) {
  SBU_AUTOFREE char *line = NULL;
  char path[128];
  size_t cap = 0;
  SBU_AUTOFCLOSE FILE *f = fopen("/proc/self/maps", "re");
  if (!f) return false;
  bool ok = false;
  unsigned long a, b, ino;
  while (getline(&line, &cap, f) > 0) {
    if (sscanf(line, "%lx-%lx %*s %*x %*x:%*x %lu", &a, &b, &ino) != 3 || !ino) continue;
    struct stat st;
    snprintf(path, sizeof path, "/proc/self/map_files/%lx-%lx", a, b);
    ok = stat(path, &st) == 0;
    break;
  }
  return ok;
}

void sb_mempoll_start(sb_proc *p) {
  sb_mempoll *m = &p->mem;
  memset(m, 0, sizeof *m);
  m->active = !sb_cg_limits_memory(&p->rt->cg);
  m->cpu_active = !sb_cg_counts_cpu(&p->rt->cg);
  if (!m->active) return;
  /* Every memfd, MAP_SHARED anonymous mapping and SysV segment lives on the
   * kernel's one internal shm mount: a memfd of ours tells its device. */
  {
    SBU_AUTOCLOSE int fd = memfd_create("surgebox-mempoll", MFD_CLOEXEC);
    struct stat st;
    m->shm_dev_known = fd >= 0 && fstat(fd, &st) == 0;
    if (m->shm_dev_known) m->shm_dev = st.st_dev;
  }
  m->see_maps = m->shm_dev_known && can_follow_map_files();
  for (int i = 0; i < SB_MEMPOLL_MOUNTS; i++) {
    /* Unprivileged, /app is a host directory: not memory (and a host
     * tmpfs under it would be everyone's usage, not the job's). */
    if (i == 2 && p->rt->userns) continue;
    m->counted[i] = tmpfs_used(p->pid, mount_dirs[i], &m->base[i]);
  }
}

typedef struct {
  ino_t ino;
  uint64_t bytes;
} shm_obj;

typedef struct {
  const sb_mempoll *m;
  pid_t *pid;
  uint64_t *upper_kb;
  size_t n, cap;
  shm_obj *obj;
  size_t n_obj, cap_obj;
  bool incomplete;
  bool cpu;          /* sum the CPU too */
  pid_t zygote;      /* a warm run: its zygote, whose children are the job's */
  uint64_t cpu_ticks[2]; /* user, system */
  char *buf; /* BUF_SIZE, for the /proc texts */
} tree;
#define BUF_SIZE 65536

static void push(tree *t, pid_t pid) {
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    pid_t *np = cap <= MAX_PROCS ? realloc(t->pid, cap * sizeof *np) : NULL;
    if (np) t->pid = np;
    uint64_t *nu = np ? realloc(t->upper_kb, cap * sizeof *nu) : NULL;
    if (nu) t->upper_kb = nu;
    if (!np || !nu) {
      t->incomplete = true;
      return;
    }
    t->cap = cap;
  }
  t->pid[t->n++] = pid;
}

/* The children of one task: "pid pid ...". */
static void push_children(tree *t, pid_t pid, pid_t tid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)tid);
  int n = sb_read_file(path, t->buf, BUF_SIZE);
  if (n < 0) return; /* gone: its children are now the init's, seen next poll */
  if (n >= BUF_SIZE - 1) t->incomplete = true;
  for (char *s = t->buf, *end; *s; s = end) {
    long c = strtol(s, &end, 10);
    if (end == s) break;
    if (c > 0) push(t, (pid_t)c);
  }
}

/* A warm run's program: the zygote's child in the job's pid namespace. The
 * zygote (single-threaded, never counted) serves one job at a time, but
 * only those of its children inside this job's pid namespace are the
 * job's: not the fork that enters it (the zygote's pages, outside), nor a
 * previous job's program killed and not yet reaped (a zombie has none). */
static void push_zygote_children(tree *t, pid_t zygote, pid_t init) {
  ino_t job_ns, ns;
  if (!sb_pid_ns_ino(init, &job_ns)) return;
  size_t from = t->n;
  push_children(t, zygote, zygote);
  size_t kept = from;
  for (size_t i = from; i < t->n; i++)
    if (sb_pid_ns_ino(t->pid[i], &ns) && ns == job_ns) t->pid[kept++] = t->pid[i];
  t->n = kept;
}

static DIR *proc_dir(pid_t pid, const char *sub) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, sub);
  return opendir(path);
}

static void push_thread_children(tree *t, pid_t pid) {
  DIR *d = proc_dir(pid, "task");
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    long tid = strtol(e->d_name, NULL, 10);
    if (tid > 0) push_children(t, pid, (pid_t)tid);
  }
  closedir(d);
}

/* One reference to a shared-memory object; several references to one
 * object count once, at the largest size any of them shows. */
static void add_obj(tree *t, ino_t ino, uint64_t bytes) {
  shm_obj *last = t->n_obj ? &t->obj[t->n_obj - 1] : NULL;
  if (last && last->ino == ino) { /* consecutive pieces of one object */
    if (bytes > last->bytes) last->bytes = bytes;
    return;
  }
  if (t->n_obj == t->cap_obj) {
    size_t cap = t->cap_obj ? t->cap_obj * 2 : 64;
    shm_obj *no = cap <= MAX_OBJS ? realloc(t->obj, cap * sizeof *no) : NULL;
    if (!no) {
      t->incomplete = true;
      return;
    }
    t->obj = no;
    t->cap_obj = cap;
  }
  t->obj[t->n_obj++] = (shm_obj){ino, bytes};
}

static void add_obj_stat(tree *t, const struct stat *st) {
  if (st->st_dev == t->m->shm_dev && S_ISREG(st->st_mode)) add_obj(t, st->st_ino, (uint64_t)st->st_blocks * 512);
}

/* Shared-memory objects held by fd (a memfd need not be mapped). */
static void scan_fds(tree *t, pid_t pid) {
  DIR *d = proc_dir(pid, "fd");
  if (!d) return;
  struct dirent *e;
  struct stat st;
  while (!t->incomplete && (e = readdir(d)))
    if (e->d_name[0] != '.' && fstatat(dirfd(d), e->d_name, &st, 0) == 0) add_obj_stat(t, &st);
  closedir(d);
}

/* Shared-memory objects held by mapping (the fd may be closed): their
 * allocated size through map_files, or, where we may not follow those,
 * the end of the mapped window (an upper bound of what the window holds). */
static void scan_maps(tree *t, pid_t pid) {
  char path[96];
  snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
  SBU_AUTOFCLOSE FILE *f = fopen(path, "re");
  if (!f) return;
  unsigned maj = major(t->m->shm_dev), min = minor(t->m->shm_dev);
  SBU_AUTOFREE char *line = NULL;
  size_t cap = 0;
  while (!t->incomplete && getline(&line, &cap, f) > 0) {
    unsigned long a, b, ino;
    unsigned long long off;
    unsigned ma, mi;
    if (sscanf(line, "%lx-%lx %*s %llx %x:%x %lu", &a, &b, &off, &ma, &mi, &ino) != 6 || ma != maj || mi != min ||
        !ino || b < a)
      continue;
    if (!t->m->see_maps) {
      add_obj(t, (ino_t)ino, off + (b - a));
      continue;
    }
    if (t->n_obj && t->obj[t->n_obj - 1].ino == (ino_t)ino) continue; /* stat'ed just before */
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d/map_files/%lx-%lx", (int)pid, a, b);
    if (stat(path, &st) == 0) add_obj_stat(t, &st);
  }
}

static int by_ino(const void *a, const void *b) {
  ino_t x = ((const shm_obj *)a)->ino, y = ((const shm_obj *)b)->ino;
  return x < y ? -1 : x > y;
}

/* Each object once: several processes (or fds and maps) share one. */
static uint64_t objects_bytes(tree *t) {
  if (!t->n_obj) return 0;
  qsort(t->obj, t->n_obj, sizeof *t->obj, by_ino);
  uint64_t sum = 0, best = 0;
  for (size_t i = 0; i < t->n_obj; i++) {
    if (i && t->obj[i].ino != t->obj[i - 1].ino) {
      sum += best;
      best = 0;
    }
    if (t->obj[i].bytes > best) best = t->obj[i].bytes;
  }
  return sum + best;
}

/* utime+stime (+ cutime+cstime with children) of /proc/<pid>/stat, in
 * clock ticks; false when gone. Fields after the command's last ')'. */
static bool stat_ticks(tree *t, pid_t pid, bool self, uint64_t ticks[2]) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  if (sb_read_file(path, t->buf, BUF_SIZE) < 0) return false;
  const char *s = strrchr(t->buf, ')');
  unsigned long long f[4];
  /* ") S ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime" */
  if (!s || sscanf(s + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &f[0], &f[1], &f[2],
                   &f[3]) != 4)
    return false;
  ticks[0] = (self ? f[0] : 0) + f[2];
  ticks[1] = (self ? f[1] : 0) + f[3];
  return true;
}

/* Every process under the init, each with its RSS upper bound (returned
 * summed, in kB), and the shared-memory objects they hold. */
static uint64_t walk(tree *t, pid_t init) {
  uint64_t sum = 0, ticks[2];
  if (t->cpu && stat_ticks(t, init, false, ticks)) { /* reaped so far: first */
    t->cpu_ticks[0] += ticks[0];
    t->cpu_ticks[1] += ticks[1];
  }
  push_children(t, init, init); /* the init is single-threaded */
  /* A warm program is its zygote's child (the init reaps only what it
   * orphans): see push_zygote_children. */
  if (t->zygote > 0) push_zygote_children(t, t->zygote, init);
  for (size_t i = 0; i < t->n && !t->incomplete; i++) {
    char path[64];
    if (t->cpu && stat_ticks(t, t->pid[i], true, ticks)) { /* before its children */
      t->cpu_ticks[0] += ticks[0];
      t->cpu_ticks[1] += ticks[1];
    }
    snprintf(path, sizeof path, "/proc/%d/status", (int)t->pid[i]);
    int found, threads = 1;
    t->upper_kb[i] = 0;
    if (sb_read_file(path, t->buf, BUF_SIZE) < 0) continue; /* exited */
    t->upper_kb[i] = sb_mempoll_kb(t->buf, upper_keys[t->m->shm_dev_known], &found);
    const char *th = strstr(t->buf, "\nThreads:");
    if (th) threads = atoi(th + 9);
    sum += t->upper_kb[i];
    if (t->m->shm_dev_known) scan_fds(t, t->pid[i]);
    if (t->m->shm_dev_known) scan_maps(t, t->pid[i]);
    if (threads > 1) push_thread_children(t, t->pid[i]);
    else push_children(t, t->pid[i], t->pid[i]);
  }
  return sum;
}

static uint64_t pss_kb(tree *t, size_t i) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)t->pid[i]);
  int n = sb_read_file(path, t->buf, BUF_SIZE), found;
  if (n == -ENOENT || n == -ESRCH) return 0; /* exited */
  if (n < 0) return t->upper_kb[i];         /* not readable: its RSS */
  uint64_t kb = sb_mempoll_kb(t->buf, pss_keys[t->m->shm_dev_known], &found);
  if (found == 0 && n > 0) kb = sb_mempoll_kb(t->buf, pss_old_keys, &found);
  return kb;
}

bool sb_mempoll_cpu_ns(const sb_proc *p, uint64_t *ns) {
  *ns = p->mem.cpu_ns;
  return p->mem.cpu_active && p->mem.cpu_valid;
}

bool sb_mempoll_over(sb_proc *p, uint64_t now) {
  sb_mempoll *m = &p->mem;
  if ((!m->active && !m->cpu_active) || now < m->next_ns) return false;
  uint64_t limit = (uint64_t)p->limits.memory_mib << 20, fs = 0;
  for (int i = 0; i < SB_MEMPOLL_MOUNTS; i++) {
    uint64_t used;
    if (m->counted[i] && tmpfs_used(p->pid, mount_dirs[i], &used) && used > m->base[i]) fs += used - m->base[i];
  }
  tree t = {.m = m, .cpu = m->cpu_active, .zygote = p->warm.on ? p->warm.zygote_pid : 0, .buf = malloc(BUF_SIZE)};
  if (!t.buf) return false; /* try again next tick */
  uint64_t rss = walk(&t, p->pid) << 10;
  if (m->cpu_active && !t.incomplete) {
    long hz = sysconf(_SC_CLK_TCK);
    uint64_t per = hz > 0 ? 1000000000ull / (uint64_t)hz : 0;
    uint64_t user = t.cpu_ticks[0] * per, sys = t.cpu_ticks[1] * per;
    if (user + sys > m->cpu_ns) { /* a child reaped between two reads is missed once, never counted twice */
      m->cpu_ns = user + sys;
      m->cpu_user_ns = user;
      m->cpu_sys_ns = sys;
    }
    m->cpu_at_ns = now;
    m->cpu_valid = hz > 0;
  }
  fs += objects_bytes(&t);
  uint64_t total = fs + rss;
  if (m->active && total > limit && !t.incomplete) {
    total = fs;
    for (size_t i = 0; i < t.n && total <= limit; i++) total += pss_kb(&t, i) << 10;
  }
  free(t.pid);
  free(t.upper_kb);
  free(t.obj);
  free(t.buf);
  m->last_bytes = total;
  if (total > m->peak_bytes) m->peak_bytes = total;
  uint64_t cost = sbu_now_ns() - now, gap = (uint64_t)SB_TICK_MS * 1000000ull;
  m->next_ns = now + (cost * COST_FACTOR > gap ? cost * COST_FACTOR : gap);
  return m->active && (t.incomplete || total > limit); /* CPU alone: sb_proc_tick judges it */
}
