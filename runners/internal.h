/* Internal interfaces of the sandbox runner, grouped by source file.
 * Each group says when its functions run: "parent" (the daemon / CLI
 * process, before or after a run) or "child" (inside the sandbox, after
 * clone: no malloc, no stdio, raw syscalls only where glibc would try to
 * synchronise threads that do not exist in the child). */
#ifndef SURGEBOX_RUNNERS_INTERNAL_H
#define SURGEBOX_RUNNERS_INTERNAL_H

#include "cleanup.h"
#include "clock.h"
#include "sandbox.h"

#include <limits.h>
#include <pthread.h>
#include <linux/filter.h>
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/resource.h>
#include <unistd.h>

#define SB_SETUP_TIMEOUT_MS 10000  /* a sandbox that is not ready by then is broken */
#define SB_TICK_MS 50              /* CPU-limit polling period */

/* ---- attach_warm.c (parent) ---- */
typedef struct {
  int fd;                  /* our own cgroup's cgroup.procs */
  bool usable, started, stop, broken;
  uint64_t until_ns;       /* keep writing until then (CLOCK_MONOTONIC) */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
} sb_attach_warm;
/* own_procs_path NULL or not writable: every call does nothing. */
void sb_attach_warm_init(sb_attach_warm *w, const char *own_procs_path);
void sb_attach_warm_poke(sb_attach_warm *w); /* a job is starting */
void sb_attach_warm_fini(sb_attach_warm *w);

/* ---- util.c (parent and child) ---- */
void sb_err(char err[SB_ERR_MAX], const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sb_write_file(const char *path, const char *text);   /* 0 or -errno, no stdio */
/* sendmsg of len bytes with nfds (at most 16) descriptors by SCM_RIGHTS,
 * retried on EINTR: the bytes sent, or -1 with errno set */
ssize_t sb_sendmsg_fds(int sock, const void *buf, size_t len, const int *fds, int nfds, int flags);
int sb_read_file(const char *path, char *buf, size_t cap); /* bytes read or -errno; NUL-terminated */
bool sb_pid_ns_ino(pid_t pid, ino_t *ino); /* the inode of /proc/<pid>/ns/pid */

/* ---- teardown.c (parent): closes and cleanings on a thread of its own ----
 * A service: it knows nothing of its users; what to run after a close is
 * handed to it as {fn, arg} (cgroup_slot.c: a slot's cleaning). */
typedef struct sb_cg_slot sb_cg_slot;
typedef struct {
  int pipe[2];
  pthread_t thread;
  bool started;
} sb_teardown;
typedef struct {
  void (*fn)(void *arg); /* NULL: nothing */
  void *arg;
} sb_teardown_call;
#define SB_TEARDOWN_NONE ((sb_teardown_call){NULL, NULL})
void sb_teardown_init(sb_teardown *t);  /* not started: pushes refused */
int sb_teardown_start(sb_teardown *t); /* 0 or -errno */
/* Queue: close fd (if >= 0), then call then.fn(then.arg) on the thread.
 * false: not queued (not started, or the write failed): the caller does it. */
bool sb_teardown_push(sb_teardown *t, int fd, sb_teardown_call then);
/* The same, and last umount2(path, MNT_DETACH) + rmdir (false too when
 * path is SB_TEARDOWN_PATH long or longer: the caller does it). */
#define SB_TEARDOWN_PATH 1024
bool sb_teardown_push_umount(sb_teardown *t, int fd, sb_teardown_call then, const char *path);
void sb_teardown_stop(sb_teardown *t); /* finishes what is queued, joins */

/* ---- cgroup.c / cgroup_v1.c / cgroup_v2.c / cgroup_slot.c (parent) ---- */
typedef struct {
  uint64_t cpu_ns, user_ns, sys_ns; /* 0 when !has_cpu */
  uint64_t mem_peak_bytes;          /* 0 when unknown; the job's own, a reused slot's leftover subtracted */
  uint64_t mem_peak_charged_bytes;  /* the cgroup's peak as the limit saw it (leftover cache included) */
  uint64_t oom_kills;
  /* the job's own limit reached (v2 memory.events' oom, v1 memory.failcnt +
   * memory.memsw.failcnt): an OOM kill without it was not the job's limit
   * (the host's OOM killer, or an ancestor cgroup's) */
  uint64_t own_limit_hits;
  uint64_t pids_max_events;
  bool has_cpu, has_peak, has_own;
} sb_cg_stats;

typedef struct {
  sb_cgroup_kind kind;
  /* v1: one instance directory per controller hierarchy we use */
  char v1_memory[PATH_MAX], v1_pids[PATH_MAX], v1_cpuacct[PATH_MAX];
  bool v1_memsw;
  /* v2: the instance directory and what it can do */
  char v2[PATH_MAX];
  bool v2_memory, v2_pids, v2_cpu, v2_kill;
  char describe[256];
  sb_cg_slot **slots;   /* cgroup_slot.c: one per worker slot, made at its first job */
  int n_slots;
  /* the instance directories, open and flocked while we live (runtime.c) */
  int inst_fd[3];
  int n_inst_fd;
} sb_cg_backend;

typedef struct {
  char v1_memory[PATH_MAX], v1_pids[PATH_MAX], v1_cpuacct[PATH_MAX];
  char v2[PATH_MAX];
  bool created;
  sb_cg_slot *slot; /* the worker slot's cgroup, borrowed (cgroup_slot.c); NULL: the job's own */
  int slot_index;   /* which slot it was (kept after the job for the fence); -1: none */
  /* v2: the job directory, open, for clone3(CLONE_INTO_CGROUP); -1 if not */
  int v2_fd;
  /* the init was born in the job's cgroup (no attach): its set-up is in the
   * counters, so they are read relative to a baseline taken at GO */
  bool born_inside;
  uint64_t base_cpu_ns, base_user_ns, base_sys_ns;
  uint64_t base_oom, base_own, base_pids_events, base_mem; /* a reused slot's counters when the job took it */
  int v2_peak_fd; /* memory.peak, reset at GO (6.12+); -1 if not */
} sb_cg_job;

/* cgroup_slot.c: the control files a slot keeps open (v1 and v2 names in
 * its tables; -1 where absent). */
enum {
  SB_SF_PROCS_MEM, SB_SF_PROCS_PIDS, SB_SF_PROCS_CPU, SB_SF_MEM_LIMIT, SB_SF_MEMSW_LIMIT, SB_SF_PIDS_MAX,
  SB_SF_CPU, SB_SF_CPU_USER, SB_SF_CPU_SYS, SB_SF_PEAK, SB_SF_MEM_STAT, SB_SF_USAGE, SB_SF_FAILCNT, SB_SF_OOM,
  SB_SF_MEMSW_FAILCNT, SB_SF_PIDS_EVENTS, SB_SF_FREEZE, SB_SF_RECLAIM, SB_SLOT_NFD
};
/* Where a slot's cgroup is between jobs (cgroup_slot.c). Only the loop
 * thread changes it, except PREPARING -> READY/RESIDUE/STALE/BROKEN, which
 * the slot's teardown thread does when it is done with the slot. */
typedef enum {
  SB_SLOT_READY,     /* clean: the next job may take it */
  SB_SLOT_BUSY,      /* a job holds it */
  SB_SLOT_PREPARING, /* queued on or being cleaned by its thread: nobody else touches it */
  SB_SLOT_RESIDUE,   /* shmem left charged (a workspace still alive): cleaned again before use */
  SB_SLOT_STALE,     /* cleaned again on request and still charged: the next job takes a cgroup of its own */
  SB_SLOT_BROKEN,    /* could not be emptied or set up: never used again */
} sb_slot_state;
struct sb_cg_slot {
  bool created;
  _Atomic int state;    /* sb_slot_state */
  bool recheck;         /* this cleaning was asked for by a RESIDUE slot (loop thread before the push) */
  bool fence_due;       /* released, its cleaning not queued yet (loop thread only) */
  sb_cg_job dirs;       /* its directories (and v2's open directory for CLONE_INTO_CGROUP) */
  int fd[SB_SLOT_NFD];
  sb_teardown worker;   /* its own queue: the previous job's namespace, then the cleaning */
  sb_runtime *rt;       /* for its cleaning, called back by its queue */
  uint64_t last_mem, last_memsw, last_pids; /* limits as written; 0: unknown */
};

int sb_cg_open(sb_cg_backend *b, sb_cgroup_kind want, const char *instance, const char *lock_dir, char *warning,
               char err[SB_ERR_MAX]);
void sb_cg_close(sb_cg_backend *b);
int sb_cg_job_create(const sb_cg_backend *b, const char *name, const sb_limits *l, sb_cg_job *j,
                     char err[SB_ERR_MAX]);
int sb_cg_job_attach(const sb_cg_backend *b, const sb_cg_job *j, pid_t pid, char err[SB_ERR_MAX]);
/* cgroup.procs of each of the job's directories (the slot's or its own),
 * opened for writing, for a process that joins them itself ("0"): the
 * sandbox init and a warm program. How many (0: no cgroup), or -errno. */
int sb_cg_job_open_procs(const sb_cg_backend *b, const sb_cg_job *j, int fds[4]);
/* At GO, for an init born inside: take the counters' baseline. */
void sb_cg_job_mark_go(const sb_cg_backend *b, sb_cg_job *j);
void sb_cg_job_stats(const sb_cg_backend *b, const sb_cg_job *j, sb_cg_stats *s);
bool sb_cg_job_cpu_ns(const sb_cg_backend *b, const sb_cg_job *j, uint64_t *ns);
void sb_cg_job_kill(const sb_cg_backend *b, const sb_cg_job *j);
void sb_cg_job_destroy(const sb_cg_backend *b, sb_cg_job *j);
bool sb_cg_limits_memory(const sb_cg_backend *b);
bool sb_cg_limits_pids(const sb_cg_backend *b);
bool sb_cg_counts_cpu(const sb_cg_backend *b);
/* rmdir leftovers of dead instances (see sb_instance_is_stale) under dir. */
void sb_cg_remove_stale(const char *dir, const char *lock_dir);
/* In parent, under its flock: remove dead instances, create and lock ours. */
int sb_cg_claim_instance(sb_cg_backend *b, const char *parent, const char *path, const char *lock_dir,
                         char err[SB_ERR_MAX]);
/* mkdir a job cgroup; one already there is a predecessor's: emptied and replaced. */
int sb_cg_mkdir_job(const char *path);

/* cgroup_slot.c: a job in the worker slot's reused cgroup. 0, or -errno
 * and the caller creates the job's own (sb_cg_job_create): the pool off, no
 * cgroup, the slot busy, given up, or not clean yet. */
int sb_cg_slot_take(sb_runtime *rt, int index, const sb_limits *l, sb_cg_job *j);
/* Duplicates of the slot's open cgroup.procs (one per hierarchy), for a
 * warm program that joins the cgroup itself (warm.c): how many, or -errno. */
int sb_cg_slot_procs_dup(const sb_cg_slot *s, int fds[3]);
/* After a run (sb_proc_free): ns_fd (its mount namespace, or -1) is closed
 * and, if the run held slot `index`, the slot is cleaned for its next job,
 * both on the slot's teardown thread; until then the slot is not ready. */
void sb_cg_slot_fence(sb_runtime *rt, int index, int ns_fd);
/* On the slot's teardown thread: kill what is left, check for residue,
 * reclaim, reset the counters; then the new state and a notification
 * (sb_runtime_slot_ready_fd). */
void sb_cg_slot_prepare(sb_runtime *rt, sb_cg_slot *s);
/* The teardown queue of slot `index` (the pool's when it has none). */
sb_teardown *sb_cg_slot_queue(sb_runtime *rt, int index);
int sb_cg_slot_attach(const sb_cg_slot *s, pid_t pid, char err[SB_ERR_MAX]);
void sb_cg_slot_stats(const sb_cg_backend *b, const sb_cg_slot *s, sb_cg_stats *st); /* raw counters */
bool sb_cg_slot_cpu_ns(const sb_cg_backend *b, const sb_cg_slot *s, uint64_t *ns); /* raw; false: none */
void sb_cg_slot_reset_peak(const sb_cg_slot *s);
void sb_cg_slot_release(sb_cg_slot *s);
void sb_cg_slots_close(sb_cg_backend *b);
/* The value of "key N" lines in text (memory.oom_control, cpu.stat ...). */
uint64_t sb_cg_keyed(const char *text, const char *key, bool *found);

/* v1 / v2 specifics, called by cgroup.c only */
int sb_cg1_job_dirs(const sb_cg_backend *b, const char *name, sb_cg_job *j, char err[SB_ERR_MAX]);
int sb_cg2_job_dirs(const sb_cg_backend *b, const char *name, sb_cg_job *j, char err[SB_ERR_MAX]);
int sb_cg1_open(sb_cg_backend *b, const char *instance, const char *lock_dir, char err[SB_ERR_MAX]);
int sb_cg1_job_create(const sb_cg_backend *b, const char *name, const sb_limits *l, sb_cg_job *j, char err[SB_ERR_MAX]);
int sb_cg1_job_attach(const sb_cg_job *j, pid_t pid, char err[SB_ERR_MAX]);
void sb_cg1_job_stats(const sb_cg_job *j, sb_cg_stats *s);
void sb_cg1_scale_user_sys(sb_cg_stats *s); /* user/sys (tick-sampled) scaled to the exact total */
void sb_cg1_job_destroy(sb_cg_job *j);
void sb_cg1_close(sb_cg_backend *b);
int sb_cg2_open(sb_cg_backend *b, const char *instance, const char *lock_dir, bool require_controllers,
                char err[SB_ERR_MAX]);
int sb_cg2_job_create(const sb_cg_backend *b, const char *name, const sb_limits *l, sb_cg_job *j, char err[SB_ERR_MAX]);
int sb_cg2_job_attach(const sb_cg_job *j, pid_t pid, char err[SB_ERR_MAX]);
void sb_cg2_job_stats(const sb_cg_backend *b, const sb_cg_job *j, sb_cg_stats *s);
void sb_cg2_job_kill(const sb_cg_backend *b, const sb_cg_job *j);
void sb_cg2_job_reset_peak(const sb_cg_backend *b, sb_cg_job *j);
void sb_cg2_job_destroy(sb_cg_job *j);
void sb_cg2_close(sb_cg_backend *b);
/* Where a controller (or "" for cgroup2) is mounted and our own cgroup path in it. */
int sb_cg_find_mount(const char *controller, char mount[PATH_MAX], char own[PATH_MAX]);
int sb_cg_rmdir_retry(const char *path);
/* Write val to dir/file; err (may be NULL) says what failed. */
int sb_cg_put(const char *dir, const char *file, const char *val, char err[SB_ERR_MAX]);
/* "key value" lines (memory.oom_control, pids.events, cpu.stat ...). */
uint64_t sb_cg_read_keyed(const char *dir, const char *file, const char *key, bool *found);

/* ---- seccomp.c (parent builds, child loads) ---- */
typedef struct {
  struct sock_filter *insns;
  unsigned short len;
} sb_bpf;
extern const char *const sb_seccomp_default_deny[];
int sb_seccomp_build(const char *const *extra_deny, const char *const *extra_allow,
                     const char *const *extra_deny2, sb_bpf *out, char err[SB_ERR_MAX]);
void sb_seccomp_free(sb_bpf *b);
int sb_seccomp_load(const sb_bpf *b);              /* child */

/* ---- caps.c (child) ---- */
int sb_caps_drop_all(uid_t uid, gid_t gid, bool may_setgroups, cap_t empty, const char **what);
int sb_caps_drop_keep_uid(cap_t empty, const char **what); /* the sandbox init: no caps, same uid */

/* ---- submounts.c (parent) ---- */
/* The mount points strictly under root+sb_host_binds and under the read-only
 * directory sources of extra, from /proc/self/mountinfo (as seen from our
 * root), outermost only: the overlays of mounts.c do not show them, so the
 * child binds them on top. NULL-terminated, malloc'd (sb_submounts_free);
 * NULL on error (no /proc: none known). */
char **sb_submounts_list(const char *root, const sb_mount *extra, size_t n_extra);
void sb_submounts_free(char **list);

/* ---- zygote_root.c (the spawner, then the zygote it clones) ----
 * A warm zygote's read-only directories (the directories of sb_host_binds
 * that are directories) served by read-only overlays of its own, so that
 * its executable and libraries are not the host's inodes (issue 35). */
#define SB_ZYGOTE_ROOT_MAX 8
typedef struct {
  int n;
  int ovl[SB_ZYGOTE_ROOT_MAX];             /* detached overlays (fsmount); -1: refused by the kernel */
  int err[SB_ZYGOTE_ROOT_MAX];             /* why refused (errno) */
  const char *dir[SB_ZYGOTE_ROOT_MAX];     /* the directory each serves */
} sb_zygote_root;
/* The spawner: each overlay made (empty: an empty directory of its mount
 * namespace, the second lower layer; one the kernel refuses is left out,
 * that directory stays the host's), and argv0 checked to be a file of one
 * of them, not beneath one of submounts. 0, or -errno and what (a reason
 * fit for "cold (warm refused: ...)"); nothing held on failure. */
int sb_zygote_root_make(sb_zygote_root *zr, const char *argv0, const char *empty, const char *const *submounts,
                        char *what, size_t len);
/* The zygote, in its own mount namespace: the overlays moved onto their
 * directories, the mounts beneath them (submounts) cloned first and moved
 * back on top. 0 or -errno; the overlays' descriptors closed either way. */
int sb_zygote_root_enter(sb_zygote_root *zr, const char *const *submounts);
void sb_zygote_root_close(sb_zygote_root *zr);

/* ---- limits.c (child) ---- */
typedef struct {
  bool memory_by_rlimit, pids_by_rlimit;
  bool cpu_backstop_only; /* the cgroup polls CPU; the rlimit is a safety net */
} sb_rlimit_plan;
int sb_limits_apply(const sb_limits *l, const sb_rlimit_plan *plan, const char **what);

/* ---- namespaces.c ---- */
/* Parent, on the calling thread: fd of a fresh empty netns; *probe: its
 * /proc/net/protocols (sb_netns_unix_sockets). */
int sb_netns_create(int *probe, char err[SB_ERR_MAX]);
int sb_netns_unix_sockets(int probe); /* AF_UNIX sockets alive in the probe's namespace, or -errno */
/* A run of the slot starts: the slot's namespace (-1: none, the run makes
 * its own). */
int sb_netns_slot_take(sb_runtime *rt, int slot);
/* A run that took the slot ended, its processes gone. Once no run is left
 * in the slot, a socket still alive there was left in flight: the slot gets
 * a fresh namespace, and the old one's probe holds uid (sb_uid_hold) until
 * the kernel collected what was in flight. */
int sb_netns_slot_release(sb_runtime *rt, int slot, uid_t uid, char err[SB_ERR_MAX]); /* -1: err says why */
int sb_ns_uts_setup(void);                       /* child */
/* A running job's namespace by its init's pidfd (PIDFD_GET_*_NAMESPACE,
 * 6.11+), else by /proc/<pid>/ns/<name>: fd or -1 (errno). Parent. */
int sb_ns_of_job(int pidfd, pid_t pid, unsigned long pidfd_ioctl, const char *name);
int sb_ns_write_id_maps(pid_t pid, uid_t inner_uid, uid_t outer_uid, gid_t inner_gid,
                        gid_t outer_gid, char err[SB_ERR_MAX]); /* parent, userns mode */

/* ---- mounts.c (child) ---- */
typedef struct {
  const char *root;             /* "" for the host, else a profile's root file system */
  const char *newroot;          /* empty directory used as the mount point of the new root */
  const char *empty_file;       /* host file (mode 000) bound over secrets */
  const char *workspace;        /* host dir bound at /app, or NULL for a tmpfs */
  uint64_t tmp_mib, app_mib;
  uid_t uid;
  gid_t gid;
  const char *etc_passwd, *etc_group; /* bound over /etc/passwd, /etc/group; NULL: the root's own */
  const sb_mount *extra;
  size_t n_extra;
  bool template;                /* pool.c: mount points only for /app, /tmp, /dev/shm, /proc; no identity */
  const char *const *submounts; /* mount points under the read-only binds' sources (submounts.c); NULL: none */
} sb_mount_plan;
/* The directories bound read-only from the root (or a profile's root), as
 * paths under it; NULL-terminated. */
extern const char *const sb_host_binds[];
int sb_mounts_build_root(const sb_mount_plan *p, char *what, size_t what_len);
/* Propagation flags (MS_PRIVATE, MS_SLAVE) on every mount of our mount
 * namespace, applied from its root even in a chroot (whose "/" may be no
 * mount point), root and cwd restored. 0 or -errno. Parent or child (no
 * malloc); not with threads sharing our fs (setns refuses). */
int sb_mount_ns_propagation(unsigned long flags);
/* A pooled job (child, after clone into new pid/ipc/uts namespaces): enter
 * a private copy of the template mount namespace tmpl_fd and mount what is
 * the job's own: /app (app_tree_fd, a detached bind of the workspace from
 * open_tree, or -1: a tmpfs), /tmp, /dev/shm, /proc, /etc/passwd and group. */
int sb_mounts_enter_template(const sb_mount_plan *p, int tmpl_fd, int app_tree_fd, char *what, size_t what_len);
/* Inode cap of a job-writable tmpfs of size_mib (/tmp, /dev/shm, /app): one
 * inode per 4 KiB page of its size, so empty files (which cost kernel memory
 * but no pages, not counted by size=) cannot outnumber what one page each
 * would allow. Also used by workspace.c; runtime.c's enforced document and
 * proto/PROTOCOL.md state the rule. */
static inline unsigned long long sb_tmpfs_inodes(uint64_t size_mib) {
  return (unsigned long long)size_mib * 256;
}

/* ---- output.c (parent) ---- */
/* Append up to the cap; returns true when bytes had to be discarded. */
bool sb_buf_append(sb_buf *b, const void *data, size_t len, uint64_t cap);
/* UTF-8 copy with U+FFFD for invalid sequences and NUL; *lossy set when replaced. */
char *sb_utf8_sanitize(const unsigned char *data, size_t len, bool *lossy);
/* trace.c (parent): a trace checked record by record as it arrives
 * (sb_trace_scan_more on every read: a resumable scan, so a turn of the loop
 * costs what that read brought, whatever a line's length; false once a line
 * failed), then cut and given the supervisor's end record where due
 * (sb_trace_finalize, with the scan so far or NULL: from the start); sets
 * r->trace_status. A Python trace is sealed (sb_trace_scan_seal): the
 * tracer's seal line binds every byte before it and its end's status to a
 * key only the tracer was given (PROTOCOL.md "Traces"). */
#define SB_TRACE_KEY_BYTES 32
#define SB_TRACE_END_MAX 16384 /* an end record's bytes, its newline included */
#define SB_TRACE_SCAN_NEST 32  /* a record nests values at most this deep */
typedef struct {
  uint64_t events, lineno; /* ev records and lines checked */
  size_t keep;             /* bytes of valid records (whole lines, up to the end record, if any) */
  size_t scanned;          /* the current line is scanned (and hashed) up to here */
  size_t end_at;           /* where the tracer's end record starts, when seen */
  bool end_seen;
  const char *end_status;  /* the tracer's end's status (static) */
  char reason[160];        /* why tampered, "" when not */
  /* the current line's JSON syntax, resumable (trace.c) */
  uint8_t js, js_hex, js_depth;
  bool js_key;
  const char *js_lit;
  char js_stack[SB_TRACE_SCAN_NEST + 1];
  /* the seal: off when zeroed */
  bool seal_wanted, seal_seen, sealed;
  size_t seal_at, seal_len;       /* the seal line, removed at the end */
  char seal_mac[65];
  struct sha256_ctx hash, at_line, at_seal; /* key + bytes so far; at the current line's start; at the seal's */
} sb_trace_scan;
void sb_trace_scan_seal(sb_trace_scan *sc, const unsigned char key[SB_TRACE_KEY_BYTES]);
bool sb_trace_scan_more(sb_trace_scan *sc, const sb_buf *b);
void sb_trace_finalize(sb_result *r, sb_trace_scan *so_far);

/* ---- child.c: the sandbox init (pid 1) and the program it starts ---- */
enum { SB_MSG_MAPPED = 1, SB_MSG_READY, SB_MSG_GO, SB_MSG_ERROR, SB_MSG_DONE };
typedef struct {
  int type;
  int wstatus;            /* DONE: the program's wait status */
  int exec_errno;         /* DONE: 0, or why the program could not be started
                           * (then text says which step failed, e.g. "exec") */
  uint64_t start_ns, end_ns;
  struct rusage children; /* DONE: every descendant the init reaped */
  char text[SB_ERR_MAX];  /* ERROR: what failed */
  int warm_lost;          /* ERROR: a warm run's zygote ended before any process was born in the
                           * job's pid namespace: nothing of the program ran (child.c warm_lost) */
} sb_msg;

/* What the program's process sends the init when it cannot exec. */
typedef struct {
  int err;       /* errno */
  char what[28]; /* "exec", "chdir", "seccomp", ... */
} sb_start_failure;

/* ---- plan.c: the sandbox's first process, one plan ----
 * What the init (or a zygote, or pool.c's template builder) is and does, in
 * the order child.c applies it, as nsjail's containProc() and minijail's
 * builder read. Built by its user (proc.c, pool.c, warm.c), carried to the
 * spawner, and a warm job's to its zygote's child, by
 * sb_plan_marshal/sb_plan_unmarshal in a memfd (the descriptors beside it, by
 * SCM_RIGHTS), applied by child.c and program.c (warm: warm_lib.c). A new field or descriptor
 * is a line here and the code that uses it: the marshal pair carries
 * scalars whole, the strings it lists (plan.c plan_strings), and every
 * descriptor of fds[]; the init keeps exactly those (child.c). */
#define SB_PLAN_PROCS 4 /* v1: memory, pids, cpuacct; v2: one */
#define SB_PLAN_NFD (9 + SB_PLAN_PROCS)
typedef struct {
  /* namespaces */
  bool userns; /* user-namespace mode: wait for our id maps (MAPPED) first */
  /* descriptors: each one the init keeps; -1: none (sb_plan_init). A new
   * one goes before procs_fd and SB_PLAN_NFD grows by one (plan.c asserts it) */
  union {
    struct {
      int ctl_fd;               /* the init's control socket (the builder's status pipe, a zygote's socket) */
      int stdin_fd, stdout_fd, stderr_fd;
      int netns_fd;             /* the slot's empty network namespace; -1: a new one */
      int tmpl_fd, app_tree_fd; /* pooled: the template mount namespace, /app's detached tree; else -1 */
      int trace_fd;             /* a traced run: the pipe the program gets as SB_TRACE_FD */
      int warm_fd;              /* a warm run (warm.c): the job's socket to its zygote; the init starts no program */
      int procs_fd[SB_PLAN_PROCS]; /* the job's cgroup.procs: the init writes "0" to each before READY (none: the
                                    * daemon attaches it, or it was born inside) */
    };
    int fds[SB_PLAN_NFD];
  };
  /* mounts */
  sb_mount_plan mounts;
  /* identity */
  uid_t uid;
  gid_t gid;
  cap_t empty_caps; /* not carried: the spawner has its own */
  /* limits */
  const sb_limits *limits;
  sb_rlimit_plan rlimits;
  /* seccomp */
  const sb_bpf *filter;
  /* program */
  const char *const *argv;
  const char *const *envp;
  const char *cwd;
} sb_plan;

/* A descriptor's index in fds[] (the spawner's request lists them so). */
#define SB_PLAN_FD(name) ((int)((offsetof(sb_plan, name) - offsetof(sb_plan, fds)) / sizeof(int)))
/* Every descriptor -1, the rest zero. */
static inline void sb_plan_init(sb_plan *p) {
  memset(p, 0, sizeof *p);
  for (int i = 0; i < SB_PLAN_NFD; i++) p->fds[i] = -1;
}
/* The plan's scalars, strings and seccomp program as one blob (malloc'd,
 * *len bytes), its descriptors left out: 0 or -errno. */
int sb_plan_marshal(const sb_plan *p, void **blob, size_t *len);
/* The plan back from a blob of len bytes, mapped writable and private: its
 * pointers point into the blob, which must outlive the plan; descriptors -1.
 * Every count and length is checked against len (the blob is the daemon's,
 * but the spawner is root): 0 or -EINVAL. */
int sb_plan_unmarshal(void *blob, size_t len, sb_plan *p);
/* The blob in a memfd of that name (close-on-exec; *len its bytes): the fd
 * or -errno. */
int sb_plan_memfd(const sb_plan *p, const char *name, size_t *len);
/* The plan from such a memfd, of len bytes (0: whatever its size, up to
 * the plan's cap), mapped private and writable and unmarshalled: 0 and
 * *map (*map_len bytes, for munmap once the plan is no longer used), or
 * -errno (nothing mapped). */
int sb_plan_map(int fd, size_t len, sb_plan *p, void **map, size_t *map_len);
/* Only the plan's mode from such a memfd, nothing of its words: 1
 * user-namespace mode, 0 not, -EINVAL not a plan (a warm zygote, which must
 * not parse a job: issue 35). */
int sb_plan_read_userns(int fd);

__attribute__((noreturn)) void sb_child_main(const sb_plan *a);

/* ---- program.c (child): the program's steps before its start ---- */
/* oom_score_adj, dup2 of 0-2 (and the trace fd), close-on-exec from 3,
 * default signals, chdir, rlimits, uid/gid/capabilities, seccomp: 0 or
 * -errno and *what names the step. *err_fd may move (off SB_TRACE_FD). */
int sb_program_setup(const sb_plan *a, int *err_fd, const char **what);
/* What failed, as an sb_start_failure on err_fd; then _exit(127). */
__attribute__((noreturn)) void sb_program_failed(int err_fd, const char *what, int rc);

/* ---- warm.c (parent) / warm_lib.c (libsbwarm.so, in a zygote's fork) ----
 * A warm run (issue 25; toolchains/warm/README.md): the init is cloned as
 * for a cold run but starts no program; the slot's zygote forks a child that
 * enters the init's namespaces by its pidfd, joins the job's cgroup and runs
 * sb_program_setup, then the program in-process. The job's socket (a
 * SOCK_SEQPACKET pair: the init's end, the zygote's end) carries sb_warm_msg:
 * the init's GO (its cgroup namespace made; only then does the zygote fork),
 * the child's FAIL (a step failed, as sb_start_failure), the zygote's EXIT
 * (the child's wait status and rusage: the zygote is its parent). */
enum { SB_WARM_GO = 1, SB_WARM_FAIL, SB_WARM_EXIT };
typedef struct {
  int type;
  int wstatus;
  bool internal;          /* FAIL: the warm start's own machinery (setns, the zygote): an internal error */
  sb_start_failure fail;  /* FAIL: else one of the program's steps, reported as for a cold program */
  struct rusage ru;
} sb_warm_msg;
/* A zygote serves this many jobs, then a fresh one (with a fresh hash seed
 * and address-space layout) takes its place: what one job can learn of the
 * layout for the next is bounded by it. */
#define SB_WARM_JOBS_PER_ZYGOTE 100
#define SB_WARM_SPARE_AHEAD 10 /* jobs before the swap its successor starts (warm.c zygote_for) */
/* path_vet.c: a path root is about to execute, walked component by
 * component from "/" (root's directories and links, no /proc, no FUSE;
 * with SB_PATH_NO_NOSUID no nosuid mount) to a directory (SB_PATH_WANT_DIR)
 * or a root's regular file; given an anchor (an absolute directory, not
 * vetted), path is relative and walked from there. owners false
 * (user-namespace mode): no owner checks. canon: the path with no link
 * left; *fd_out (when not NULL and SB_PATH_OK): an O_PATH descriptor of the
 * end. */
typedef enum {
  SB_PATH_OK,
  SB_PATH_NOT_ABSOLUTE, /* or too long; or an absolute path given an anchor */
  SB_PATH_UNEXAMINABLE,
  SB_PATH_PROC,
  SB_PATH_FUSE,
  SB_PATH_NOSUID,
  SB_PATH_NOT_DIR,       /* a component (not the end) that is not a directory */
  SB_PATH_OPEN_DIR,      /* a directory on the way others may write */
  SB_PATH_NOT_ROOTS,     /* the file: not root's, or others may write it */
  SB_PATH_NAME_MAX,
  SB_PATH_UNRESOLVED,
  SB_PATH_LINKS,         /* an unreadable link, or too many */
  SB_PATH_TOO_LONG,
  SB_PATH_NOT_REGULAR,
  SB_PATH_NOT_ENDING_DIR,
  SB_PATH_N_FAULTS
} sb_path_fault;
#define SB_PATH_WANT_DIR 1u
#define SB_PATH_NO_NOSUID 2u
sb_path_fault sb_path_walk(const char *anchor, const char *path, bool owners, unsigned flags, char canon[PATH_MAX],
                           int *fd_out);
/* interp_vet.c: why root may not run argv0 as a zygote (its path walked
 * component by component: root's directories and links, no /proc, no FUSE,
 * root's regular file; no pyvenv.cfg beside it), or NULL; canon: the path
 * with no link left. owners false (user-namespace mode): no owner checks. */
const char *sb_interp_vet(const char *argv0, bool owners, char canon[PATH_MAX]);
typedef struct sb_zygote sb_zygote;
typedef struct {
  bool on, seeded;
  int pair[2];  /* the job's socket: [0] the init's end, [1] the zygote's */
  int cg[4];    /* cgroup.procs of the job's directories */
  int n_cg;
  sb_zygote *z;
  pid_t zygote_pid; /* the program's parent: mempoll.c walks its children too */
  uint64_t seed;
} sb_warm_run;
/* Before the init's clone: w->on and the zygote running, or why not in
 * note ("cold (warm refused: ...)"); note is the result's enforced.start. */
void sb_warm_prepare(sb_runtime *rt, const sb_spec *spec, const sb_cg_job *cg, const char *const *envp, sb_warm_run *w,
                     char note[SB_ERR_MAX]);
/* After it: the job to the zygote (a's stdio; pair[1]; the init's pidfd;
 * the plan a, its program's part, marshalled in a memfd: only the zygote's
 * fork maps it, sbwarm_plan). 0, or -errno: internal error. */
int sb_warm_send(sb_warm_run *w, const sb_plan *a, int init_pidfd, char err[SB_ERR_MAX]);
void sb_warm_run_close(sb_warm_run *w);
/* The run's zygote, wedged (it never started the program): SIGKILL. Its
 * slot starts a new one for the next job (zygote_dead). false: gone. */
bool sb_warm_zygote_kill(const sb_warm_run *w);
void sb_warm_fini(sb_runtime *rt); /* every zygote killed */
/* libsbwarm.so's entry points (warm_lib.c, warm_serve.c, warm_classes.c,
 * warm_hot.c), called by the zygote's ctypes: the library's only exports */
#define SBWARM_API __attribute__((visibility("default")))
int sbwarm_await_go(int job_fd);
int sbwarm_enter(int job_fd, int init_pidfd, int plan_fd, int born_inside);
int sbwarm_enter_pid(int job_fd, int init_pidfd, int plan_fd);
int sbwarm_leave_pid(void);
int sbwarm_plan(int job_fd, int plan_fd);
const char *sbwarm_arg(int i);
const char *sbwarm_env(int i);
int sbwarm_program(int job_fd, int in_fd, int out_fd, int err_fd, const int *cg_fds, int n_cg);
int sbwarm_reap(int job_fd, int pid);
void sbwarm_refuse(int job_fd);
void sbwarm_fail(int job_fd);
int sbwarm_audit_watch(void);
int sbwarm_audit_hooked(void);
int sbwarm_class_changed(void);
void sbwarm_exit(int status);
int sbwarm_environ(const char *block, size_t len);
void sbwarm_drop_bounding(void);
int sbwarm_serve(int ctl, char *inbox, size_t inbox_len, int *fds, int *nfds, long *bytes);
int sbwarm_old_set(const uintptr_t *words, size_t n, size_t mro, size_t dict, void *key);
int sbwarm_old_changed(void);
int sbwarm_hot_report(int fd);
int sbwarm_hot_set(const void *report, size_t len);
int sbwarm_hot_ranges(uint64_t *out, int max);
void sbwarm_hot_apply(void);
void sb_warm_hot_apply(void);                        /* warm_hot.c: the program's process, in the job's cgroup */
void sb_warm_join_early(const int *cg_fds, int n_cg); /* warm_lib.c: the job's cgroup, from warm_serve.c's child */

/* ---- spawner.c (parent) / spawner_serve.c (the spawner process) ----
 * Sandbox inits are cloned by the spawner, a small process started as a
 * fresh exec of our own binary (HACKING.md, "The spawner"), never from the
 * daemon: an init is a copy of the process that clones it, and the
 * program's max_rss_kb, the init's exit and the memory poll would carry
 * whatever that process holds. One request at a time on a SOCK_SEQPACKET
 * pair: an sb_spawn_req with its descriptors (SCM_RIGHTS, in the order of
 * the enum, those whose bit is set in fd_mask; the rest of the plan,
 * marshalled by plan.c, in a memfd, SB_SPAWN_FD_PAYLOAD), answered by an sb_spawn_reply
 * with the init's pidfd. The init is cloned with CLONE_PARENT: the caller
 * of sb_runtime_open stays its parent (wait4, SIGCHLD, PDEATHSIG). */
#define SB_SPAWNER_ENV "SURGEBOX_SPAWNER"  /* "FD:PPID", set only for the spawner's exec */
#define SB_SPAWNER_ARGV0 "surgebox-spawner"
#define SB_SPAWN_MAGIC 0x53425350u
#define SB_SPAWN_TIMEOUT_MS 10000 /* no answer by then: the spawner is killed and restarted */
/* The request's descriptors: the plan's fds[] (in their order), then the
 * job's cgroup for clone3 and the payload, the marshalled plan (plan.c). */
enum { SB_SPAWN_FD_CGROUP = SB_PLAN_NFD, SB_SPAWN_FD_PAYLOAD, SB_SPAWN_NFD };
/* sb_child_main, pool.c's builder, or a zygote (warm.c: our own child, argv
 * and envp exec'd with its socket as "ctl", in a mount namespace of its own
 * with an empty /tmp; reaped by the spawner once dead) */
enum { SB_SPAWN_INIT, SB_SPAWN_TEMPLATE_BUILDER, SB_SPAWN_ZYGOTE };
typedef struct {
  uint32_t magic, fd_mask;
  uint32_t kind;            /* SB_SPAWN_INIT or SB_SPAWN_TEMPLATE_BUILDER (its status pipe as the "ctl" fd) */
  uint64_t clone_flags;     /* namespaces only; the spawner adds CLONE_PARENT | CLONE_PIDFD */
  bool into_cgroup;         /* try clone3(CLONE_INTO_CGROUP) with SB_SPAWN_FD_CGROUP */
  uint64_t payload_len;
} sb_spawn_req;
typedef struct {
  int32_t err;              /* 0, or the errno of the failed step (msg says which) */
  int32_t pid;              /* the init, as the caller's pid namespace sees it; its pidfd comes with it */
  bool born_inside;         /* cloned into the cgroup */
  bool into_refused;        /* clone3(CLONE_INTO_CGROUP) refused: cloned, then to be attached */
  char msg[SB_ERR_MAX];
} sb_spawn_reply;
typedef struct {
  int sock;                 /* ours; -1: not running */
  pid_t pid;
  int exe_fd;               /* surgebox-spawner, opened once: every restart execs the same file */
  uint64_t restarts;
  char last_restart[SB_ERR_MAX];
  pthread_mutex_t mu;       /* one request at a time */
  bool mu_init;
} sb_spawner;
typedef struct {
  pid_t pid;
  int pidfd;
  bool born_inside, into_refused;
} sb_spawned;
int sb_spawner_start(sb_runtime *rt, char err[SB_ERR_MAX]); /* sb_runtime_open: -errno if it cannot run */
void sb_spawner_stop(sb_runtime *rt);
/* Clone (kind SB_SPAWN_INIT) a sandbox init running sb_child_main(a), or
 * (SB_SPAWN_TEMPLATE_BUILDER) pool.c's builder of a->mounts reporting on
 * a->ctl_fd, with the namespace flags ns_flags (no exit signal), born into
 * cgroup_fd's cgroup when >= 0. Either is our child (CLONE_PARENT). */
int sb_spawner_clone(sb_runtime *rt, int kind, const sb_plan *a, unsigned long ns_flags, int cgroup_fd,
                     sb_spawned *out, char err[SB_ERR_MAX]);
int sb_spawner_exe_open(bool owners, char err[SB_ERR_MAX]); /* spawner_exe.c: surgebox-spawner, vetted */
__attribute__((noreturn)) void sb_spawner_serve(int sock, pid_t ppid); /* the spawner process (spawner_main.c) */

/* ---- workspace.c / wsfs.c (parent) ---- */
struct sb_workspace {
  sb_runtime *rt;
  char path[PATH_MAX];
  int dirfd;           /* O_PATH of /app's root: every access after a program ran starts here */
  uid_t uid;           /* owner of what the daemon puts into /app */
  gid_t gid;
  bool mounted;
  sb_uid_lease *lease; /* the job's uid, held as long as the workspace lives */
};
/* Resolve rel beneath dirfd: no symlink, no magic link, no "..", no mount
 * crossed (openat2). An fd or -errno. */
int sb_wsfs_open(int dirfd, const char *rel, int flags, mode_t mode);
/* A fresh file at rel (whatever had the name is unlinked first; missing
 * parents made as ws->uid's): a writable fd for sb_wsfs_own, or -errno. */
int sb_wsfs_create(sb_workspace *ws, const char *rel, char err[SB_ERR_MAX]);
void sb_wsfs_own(const sb_workspace *ws, int fd, mode_t mode); /* mode and ws->uid/gid, on the fd */
int sb_wsfs_write(sb_workspace *ws, const char *rel, const void *data, size_t len, mode_t mode,
                  char err[SB_ERR_MAX]);
int sb_wsfs_mkdir(sb_workspace *ws, const char *rel, mode_t mode, char err[SB_ERR_MAX]);
int sb_wsfs_symlink(sb_workspace *ws, const char *rel, const char *target, char err[SB_ERR_MAX]);
int sb_wsfs_read_at(int dirfd, const char *rel, size_t max_bytes, unsigned char **data, size_t *len, mode_t *mode,
                    char err[SB_ERR_MAX]);
/* ---- uids.c (parent) ---- */
int sb_uids_open(sb_runtime *rt, char err[SB_ERR_MAX]); /* check the range, create the lock dir */
/* The last job of uid may still have per-uid budgets taken after its
 * processes are gone: in flight in the namespace probe watches (a netns
 * probe, taken over, and how many are left there: in_flight, handed by the
 * caller, namespaces.c's sb_netns_unix_sockets), for ms milliseconds (an ipc
 * namespace we could not empty), or until another thread calls
 * sb_uid_hold_done (busy: its ipc namespace being emptied). Releasing its
 * lease then keeps the lock (no process takes the uid) until that is over.
 * NULL when nothing is held (user-namespace mode, out of memory). */
struct sb_uid_hold *sb_uid_hold(sb_runtime *rt, uid_t uid, int probe, int (*in_flight)(int probe), unsigned ms,
                                bool busy);
void sb_uid_hold_done(struct sb_uid_hold *h); /* any thread */
void sb_uid_holds_close(sb_runtime *rt);

/* ---- ipcns.c (parent) ---- */
/* A job's ipc namespace while its init lives: fd or -errno. */
int sb_ipc_job_ns(int pidfd, pid_t pid);
/* Its processes gone: remove every SysV object and POSIX queue left in it
 * (what they charged to the uid, mqueue bytes and SHM_LOCK memory, is then
 * given back at once, not when the kernel frees the namespace a grace
 * period later), on the ipc thread (0.1-0.3 ms, a few ms under load: an
 * unmount's RCU wait), uid held until it is done. Takes ipc_ns. */
void sb_ipc_drain_later(sb_runtime *rt, int ipc_ns, uid_t uid);
void sb_ipc_init(sb_runtime *rt); /* the thread; without it drains run inline */
void sb_ipc_fini(sb_runtime *rt); /* what was queued is drained first */
const sb_uid_lease *sb_workspace_lease(const sb_workspace *ws);

/* ---- pool.c (parent) ---- */
typedef struct sb_pool_tmpl sb_pool_tmpl;
/* The template mount namespace of worker slot `slot` for the plan's root and
 * extra mounts (built on first use; up to rt->opts.pool per slot are kept,
 * least recently used dropped first): an
 * fd the pool owns, or -ENOTSUP when the pool is off or the plan does not
 * fit it (then the job builds its own root), or another -errno. */
int sb_pool_template(sb_runtime *rt, int slot, const sb_mount_plan *plan, char err[SB_ERR_MAX]);
/* A lock on the file of fd held by anyone (flock, OFD or POSIX): a test,
 * nothing kept. For files a slot's consecutive runs share (a template's
 * own, a warm zygote's executable), asked when no run of the slot is alive:
 * a lock then was left in flight. */
bool sb_file_locked(int fd);
/* For one run: *tmpl_fd (owned by the pool) and *app_tree_fd (a detached
 * clone of the workspace's mount, the caller closes it), or both -1: the
 * run builds its own root. note: the result's enforced.pool ("used",
 * "off: why" for the runtime, "not used: why" for this run). */
void sb_pool_prepare(sb_runtime *rt, int slot, const sb_workspace *ws, const sb_mount_plan *plan, int *tmpl_fd,
                     int *app_tree_fd, char note[SB_ERR_MAX]);
void sb_pool_init(sb_runtime *rt);
void sb_pool_fini(sb_runtime *rt);
/* Close fd on the teardown thread (a job's mount namespace: its umounts
 * are off the loop thread and off the job's critical path). */
void sb_pool_defer_close(sb_runtime *rt, int fd);
/* A pooled job's mount namespace (its init still alive): fd or -errno. */
int sb_pool_job_ns(int pidfd, pid_t pid);

/* ---- runtime.c ---- */
/* Instances are named "surgebox-i<pid>-<pid namespace inode>-x<64 random
 * bits>": unique per start
 * (a pid namespace's inode, used before, is reused by the kernel, so a
 * restarted container took its dead predecessor's name). An instance holds
 * an flock on each directory it owns (<state_dir>/<name>, its cgroups) for
 * its whole life, so liveness cannot be separated from the directory: one
 * that nobody holds is dead and may be removed. Directories are created and
 * judged under an flock on their parent. Older names
 * ("surgebox-i<pid>-<inode>") are judged by <lock_dir>/<name>.lock. */
#define SB_INSTANCE_PREFIX "surgebox-i"
bool sb_instance_is_stale(const char *parent, const char *name, const char *lock_dir);
bool sb_instance_locks_itself(const char *name); /* "...-x<hex>": its directory carries its own lock */
int sb_lock_dir(const char *dir, bool wait); /* open + flock LOCK_EX; fd or -errno */
struct sb_runtime {
  sb_runtime_options opts;
  char state_dir[PATH_MAX];
  char name[96];             /* this instance's name (see above) */
  char instance[PATH_MAX];   /* state_dir/<name>: everything this process creates */
  int lock_fd;
  char newroot[PATH_MAX];
  char empty_file[PATH_MAX];
  bool userns;               /* not root: each sandbox gets a user namespace mapping its uid to outer_uid */
  bool own_userns;           /* not root, and the runtime itself is uid 0 of a user namespace of its own */
  bool can_mount;            /* root or own_userns: tmpfs for the jobs directory and each /app */
  bool oom_adj_lowerable;    /* CAP_SYS_RESOURCE at start: the init's oom_score_adj can go to -1000 */
  bool no_clone_into_cgroup; /* clone3(CLONE_INTO_CGROUP) failed once: attach instead */
  uid_t outer_uid;           /* our ids where we run (0 in our own user namespace) */
  gid_t outer_gid;
  uid_t host_uid;            /* our ids before sb_runtime_open */
  gid_t host_gid;
  uid_t files_uid;           /* owner of /app's tmpfs as we see it: the sandbox uid, or our 0 */
  gid_t files_gid;
  int *netns_fds;
  int *netns_probes;         /* namespaces.c: each slot namespace's /proc/net/protocols */
  int *netns_users;          /* runs in each slot right now */
  int n_netns;
  uint64_t netns_rebuilds;   /* slots given a fresh namespace: a run left sockets in flight */
  uint64_t pool_rebuilds;    /* pool.c: templates dropped because a file of theirs was locked */
  struct sb_uid_hold *uid_holds; /* uids.c: leases kept after release until their budgets are whole */
  int ipc_pipe[2];           /* ipcns.c: drains queued for its thread */
  pthread_t ipc_thread;
  bool ipc_started;
  sb_cg_backend cg;
  sb_attach_warm warm;       /* v1: keeps cgroup.procs writes cheap (attach_warm.c) */
  sb_bpf filter;
  cap_t empty_caps;
  sb_spawner spawner;         /* spawner.c: clones every sandbox init */
  sb_zygote *zygotes;         /* warm.c: two per worker slot (2s: serving, 2s+1: its successor), started lazily */
  int n_zygotes;
  uint64_t zygote_restarts;   /* found dead before a job */
  /* warm.c: per client and start-up (interpreter and start-up variables),
   * its zygotes dead in a row before they said READY; at 3 warm is refused
   * for that client's start-up only (issue 35: one client must not turn
   * warm off for another); a READY zygote of that start-up resets it */
  struct {
    uint64_t key;             /* 0: a free entry */
    uid_t client;
    char argv0[256];
    int early_deaths;
  } warm_interps[32];
  bool warm_paths;            /* warm.c: warm_script and warm_lib worked out (once) */
  char warm_script[PATH_MAX], warm_lib[PATH_MAX];
  char warning[SB_ERR_MAX];
  char pool_off[SB_ERR_MAX];  /* why the pool was turned off (sb_runtime_pool_disable), else "" */
  uint64_t counter;
  char uid_dir[PATH_MAX];    /* uids.c: the shared lock directory */
  uint32_t uid_next, uids_in_use;
  sb_pool_tmpl *pool;        /* pool.c: up to opts.pool templates */
  int n_pool;
  uint64_t pool_clock;
  sb_teardown teardown;      /* teardown.c: what no slot waits on */
  int slot_ready_fd;         /* eventfd: a slot's cleaning ended (cgroup_slot.c); -1: none */
  uint64_t pool_fallbacks;   /* runs that fit the pool but built their own root */
  uint64_t slot_fallbacks;   /* runs that took a cgroup of their own while their slot's was not clean */
};

#endif
