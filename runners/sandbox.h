/* surgebox sandbox runner: public API.
 *
 * Lifecycle (mirrors libuv's init/start/stop/close discipline):
 *
 *   sb_runtime_open()     once per process, before any thread is created:
 *                         private mount namespace, instance state dir,
 *                         cgroup backend detection, seccomp filter compile,
 *                         shared empty network namespace(s).
 *   sb_workspace_create() a size-capped writable dir that becomes /app; it
 *                         holds the uid (sb_uid_acquire) every run in it uses.
 *   sb_proc_start()       start the sandbox (cloned by the runtime's spawner);
 *                         returns fds an event loop watches.
 *   sb_proc_on_*()        drive it: ready, output readable, exit, tick.
 *   sb_proc_finish()      collect accounting into an sb_result.
 *   sb_run()              the blocking convenience: start + poll() + finish.
 *   sb_workspace_destroy(), sb_runtime_close().
 *
 * Every function returning int returns 0 or a negative errno and, on failure,
 * fills an error message the caller can show as is.
 */
#ifndef SURGEBOX_SANDBOX_H
#define SURGEBOX_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SB_ERR_MAX 512

typedef enum {
  SB_CGROUP_AUTO = 0,
  SB_CGROUP_V2,
  SB_CGROUP_V1,
  SB_CGROUP_NONE,
} sb_cgroup_kind;

const char *sb_cgroup_kind_name(sb_cgroup_kind k);
int sb_cgroup_kind_parse(const char *s, sb_cgroup_kind *out);

typedef struct {
  sb_cgroup_kind cgroup;      /* AUTO: v2 if usable, else v1, else none */
  const char *state_dir;      /* NULL: /run/surgebox/state as root, else $XDG_RUNTIME_DIR/surgebox/state */
  int netns_slots;            /* shared empty network namespaces to pre-create (>=1) */
  uid_t sandbox_uid;          /* user-namespace mode only: the one id mapped (default 65534) */
  gid_t sandbox_gid;          /* default 65534 */
  uid_t uid_first;            /* as root: one uid (gid: the same number) per concurrent job */
  uint32_t uid_count;         /* from [uid_first, uid_first+uid_count); default 1879048192 + 4096 (runtime.c says why) */
  const char *uid_lock_dir;   /* NULL: /run/surgebox/uids (shared by every surgebox process) */
  const char *const *seccomp_extra_deny;  /* NULL-terminated syscall names, may be NULL */
  const char *const *seccomp_extra_allow; /* names removed from the default deny list */
  int pool;                   /* prepared roots kept per worker slot (pool.c); 0: every run builds its own.
                               * Default 8, or $SURGEBOX_POOL when set (tests run both ways) */
  double stall_grace_s;       /* a wall limit excuses at most this much time spent waiting for a CPU
                               * other work held (stall.c); default 5, 0: pure wall clock */
} sb_runtime_options;

void sb_runtime_options_default(sb_runtime_options *o);

typedef struct sb_runtime sb_runtime;

int sb_runtime_open(const sb_runtime_options *opts, sb_runtime **out, char err[SB_ERR_MAX]);
void sb_runtime_close(sb_runtime *rt);
sb_cgroup_kind sb_runtime_cgroup(const sb_runtime *rt);
/* Human-readable warnings from start-up (e.g. "no writable cgroup: rlimits only"). */
const char *sb_runtime_warning(const sb_runtime *rt);
/* Not root, sb_runtime_open enters a user namespace of its own where the
 * caller's uid/gid are 0: ids the kernel reports afterwards (SO_PEERCRED,
 * stat, geteuid) are relative to it. These give the host's ids back (false:
 * an id this namespace does not map, which the kernel shows as 65534). */
bool sb_runtime_host_uid(const sb_runtime *rt, uid_t seen, uid_t *host);
bool sb_runtime_host_gid(const sb_runtime *rt, gid_t seen, gid_t *host);
uid_t sb_host_euid(void); /* geteuid() as it was before sb_runtime_open */
/* The uid range (false in user-namespace mode, where there is none);
 * in_use counts this process's leases. */
/* Why prepared roots (the pool) are off for this runtime, NULL when on;
 * turning them off drops the templates (sb_runtime_prove does on failure). */
const char *sb_runtime_pool_off(const sb_runtime *rt);
/* Worker slots (netns_slot) reuse one cgroup per slot. After each run of
 * a slot its cgroup is cleaned on a thread of its own (cgroup_slot.c): the
 * job's mount namespace torn down, leftovers killed, page cache reclaimed,
 * counters reset. Until that ends the slot is not ready: a run started on it
 * would take a cgroup of its own. ready: false means a notification follows
 * on the ready fd (an eventfd; read it with _drain); never blocks. wait:
 * blocks until the slot is ready (the blocking driver, sb_run). */
bool sb_runtime_slot_ready(sb_runtime *rt, int slot);
int sb_runtime_slot_ready_fd(const sb_runtime *rt); /* -1: no slot ever waits */
void sb_runtime_slot_ready_drain(const sb_runtime *rt);
void sb_runtime_slot_wait(sb_runtime *rt, int slot);
/* Adds text to the runtime's warning (every result's warnings, status'). */
void sb_runtime_add_warning(sb_runtime *rt, const char *text);
void sb_runtime_pool_disable(sb_runtime *rt, const char *why);
/* The self-proof (selfproof.c): a trivial job (a file in a workspace read
 * back by a shell, as a leased uid, in the runtime's cgroup backend) through
 * each mechanism the runtime will use. A pool that fails where a fresh root
 * works is turned off, saying why. 0 when a job runs here, else -errno and
 * err says what failed (-ERANGE: the uid range is not mapped in our user
 * namespace). */
int sb_runtime_prove(sb_runtime *rt, char err[SB_ERR_MAX]);
bool sb_runtime_uid_range(const sb_runtime *rt, uid_t *first, uint32_t *count, uint32_t *in_use);
/* Parse "FIRST-LAST" (both inclusive). 0 or -EINVAL. */
int sb_uid_range_parse(const char *s, uid_t *first, uint32_t *count);
/* Refuse a range that is empty, reaches 2^31 or nobody, or meets an id in
 * etc/passwd, etc/group, etc/subuid or etc/subgid (etc: normally "/etc"). */
int sb_uid_range_check(uid_t first, uint32_t count, const char *etc, char err[SB_ERR_MAX]);
/* The spawner, which clones every sandbox init (HACKING.md, "The spawner"):
 * how often it was restarted (and why the last time), its pid. */
uint64_t sb_runtime_spawner(const sb_runtime *rt, pid_t *pid, const char **last_restart);
/* Warm starts (warm.c): {"zygotes": running, "restarts": found dead,
 * "off": the interpreters warm is refused for from now on and why, or null}. */
struct json_object *sb_runtime_warm_json(const sb_runtime *rt);
/* What each limit is enforced by under this runtime, e.g. "cgroup v1 memory.limit_in_bytes". */
struct json_object;
struct json_object *sb_runtime_enforcement(const sb_runtime *rt);

/* ---- limits ------------------------------------------------------------ */
typedef struct {
  double wall_time_s;     /* 30 */
  double cpu_time_s;      /* 30 */
  uint64_t memory_mib;    /* 2048 */
  uint64_t pids;          /* 128 */
  uint64_t output_bytes;  /* 8 MiB, stdout and stderr each */
  uint64_t file_size_mib; /* 256 */
  uint64_t tmp_mib;       /* 512, /tmp (and /app when the workspace is created) */
  uint64_t open_files;    /* 256 */
} sb_limits;

void sb_limits_default(sb_limits *l);

/* ---- uid leases ---------------------------------------------------------- */
/* A uid held (across processes, by an flock) until released. A workspace
 * takes one when created: every run in it uses that uid unless the spec
 * names another lease; a run without workspace or lease takes its own. */
typedef struct sb_uid_lease sb_uid_lease;
int sb_uid_acquire(sb_runtime *rt, sb_uid_lease **out, char err[SB_ERR_MAX]);
uid_t sb_uid_lease_uid(const sb_uid_lease *l);
gid_t sb_uid_lease_gid(const sb_uid_lease *l);
void sb_uid_release(sb_uid_lease *l);
/* Every uid is leased or held until what its last job left in flight is
 * freed (sb_uid_acquire would say -EBUSY): try again in a few ms, never
 * block on it. */
bool sb_uids_waiting(sb_runtime *rt);
/* Slots handed on only when empty (issue 22): how many times a slot got a
 * fresh network namespace (its last run left sockets in flight) and a
 * template was built again (a file of it was locked); uids held now until
 * their last job's budgets are whole. */
void sb_runtime_slot_rebuilds(sb_runtime *rt, uint64_t *netns, uint64_t *templates, uint32_t *uids_held);

/* ---- workspace (/app) -------------------------------------------------- */
typedef struct sb_workspace sb_workspace;

int sb_workspace_create(sb_runtime *rt, uint64_t size_mib, sb_workspace **out, char err[SB_ERR_MAX]);
const char *sb_workspace_path(const sb_workspace *ws);
/* Copy a host directory tree into the workspace (regular files, dirs, symlinks). */
int sb_workspace_copy_in(sb_workspace *ws, const char *src_dir, char err[SB_ERR_MAX]);
/* Write one file (rel_path must be relative, without ".."); parents are created. */
int sb_workspace_write(sb_workspace *ws, const char *rel_path, const void *data, size_t len,
                       mode_t mode, char err[SB_ERR_MAX]);
void sb_workspace_destroy(sb_workspace *ws);
/* The same for a workspace whose runs used worker slot `slot`: its /app
 * (charged to the slot's cgroup) is unmounted on the slot's teardown
 * thread, so the slot's next cleaning comes after it. */
void sb_workspace_destroy_in_slot(sb_workspace *ws, int slot);
/* After a program ran in the workspace every name in it is hostile: these
 * (wsfs.c) never follow a symlink, never leave /app's file system and never
 * block on a FIFO. sb_workspace_write is link-safe too. */
/* One regular file's bytes (malloc'd, *len) and mode; a symlink anywhere on
 * the way, a directory, a FIFO, a device or a file over max_bytes: -errno
 * and err says which. */
int sb_workspace_read(sb_workspace *ws, const char *rel_path, size_t max_bytes, unsigned char **data, size_t *len,
                      mode_t *mode, char err[SB_ERR_MAX]);
/* Every entry under /app (pre-order, readdir order, "." and ".." left out):
 * rel is its path, st its lstat, (dirfd, name) the entry for readlinkat or
 * sb_workspace_read_at. A non-zero return of fn stops the walk with it;
 * an entry that cannot be read (a directory, too deep, another file system)
 * fails the walk. */
struct stat;
typedef int (*sb_workspace_visit)(const char *rel, const struct stat *st, int dirfd, const char *name, void *ud);
int sb_workspace_walk(sb_workspace *ws, sb_workspace_visit fn, void *ud, char err[SB_ERR_MAX]);
/* sb_workspace_read for the entry (dirfd, name) a walk visits. */
int sb_workspace_read_at(int dirfd, const char *name, size_t max_bytes, unsigned char **data, size_t *len,
                         mode_t *mode, char err[SB_ERR_MAX]);

/* ---- one run ----------------------------------------------------------- */
typedef struct {
  const char *source;     /* host path */
  const char *target;     /* absolute path inside the sandbox */
  bool writable;
} sb_mount;

typedef struct {
  const char *const *argv;      /* argv[0] is looked up in PATH inside the sandbox */
  const char *const *envp;      /* NULL: a minimal default environment */
  const char *cwd;              /* default /app */
  const sb_workspace *workspace;/* mounted at /app; NULL: an empty tmpfs */
  const void *stdin_data;       /* fed through a pipe; NULL: /dev/null */
  size_t stdin_len;
  bool merge_output;            /* stderr goes to the stdout pipe (SURGE DR) */
  const sb_mount *extra_mounts; /* read-only unless writable */
  size_t n_extra_mounts;
  const char *const *seccomp_extra_deny;  /* per-run additions to the runtime policy */
  const char *const *seccomp_extra_allow; /* per-run removals from it (a traced C step's gdb: ptrace) */
  sb_limits limits;
  int netns_slot;               /* which shared netns to enter; -1: a fresh one */
  const char *root;             /* a profile's root file system whose /usr, /lib*, /bin, /sbin
                                 * and /etc replace the host's; NULL: the host's */
  const sb_uid_lease *uid_lease;/* NULL: the workspace's, else one for this run */
  bool output_base64;           /* stdout_b64/stderr_b64 even when the text is exact */
  /* A traced run (PROTOCOL.md "Traces"): the program gets a pipe's write end
   * as descriptor SB_TRACE_FD; the supervisor reads it like stdout, keeps up
   * to trace_bytes (0: SB_TRACE_BYTES_DEFAULT) and has the last word on the
   * trace's end record (trace.c). The program must be told the number
   * (the Python tracer: SURGEBOX_TRACE_FD in its environment). */
  bool trace;
  uint64_t trace_bytes;
  /* A Python trace (its tracer shares the program's process): the pipe is a
   * socket on which the supervisor first writes a fresh key (then shuts its
   * side), which the tracer reads before the program runs; the trace must
   * end with the tracer's seal made with it (trace.c). The tracer must be
   * told (SURGEBOX_TRACE_SEAL). */
  bool trace_seal;
  /* Started by the slot's warm Python zygote (warm.c, issue 25) with the
   * cold run's isolation; a run that cannot be warm runs cold and says why
   * (sb_result.start). */
  bool warm;
  /* The interpreter's language as its toolchain file says (warm_lang.h);
   * NULL: none of them names argv[0], the run is cold. */
  const struct sb_warm_lang *warm_lang;
  /* Run cold because an earlier attempt could not be warm: its
   * enforced.start is "cold (warm refused: <this>)". NULL: as warm says. */
  const char *warm_refused;
  /* Who asked (the daemon: its peer's uid), for what warm.c counts per
   * client (a start-up's early deaths); 0 for a caller of its own. */
  uid_t client;
} sb_spec;
/* The zygote of slot spec->netns_slot for spec's warm run (its interpreter
 * and environment), started when none is (no job sent: its start-up runs
 * meanwhile, off the caller's thread): 1 up and READY (a warm run there
 * waits for no interpreter's start-up), 0 starting (ask again later), -1
 * spec cannot run warm there (err says why; the run goes cold). */
int sb_runtime_warm_slot_start(sb_runtime *rt, const sb_spec *spec, char err[SB_ERR_MAX]);

#define SB_TRACE_FD 3
#define SB_TRACE_BYTES_DEFAULT ((uint64_t)16 << 20)
#define SB_TRACE_BYTES_MAX ((uint64_t)256 << 20)

void sb_spec_init(sb_spec *s);

typedef enum {
  SB_OK = 0,
  SB_RUNTIME_ERROR,
  SB_SIGNALED,
  SB_TIMEOUT,
  SB_MEMORY_LIMIT,
  SB_OUTPUT_LIMIT,
  SB_INTERNAL_ERROR,
  /* an OOM kill the job's own limit did not cause (the host's OOM killer,
   * or an ancestor cgroup's): the machine's failure, not the program's */
  SB_HOST_KILLED,
} sb_status;

const char *sb_status_name(sb_status s);

typedef struct {
  unsigned char *data; /* NUL-terminated for convenience; may contain NULs */
  size_t len, cap;
  bool truncated;
} sb_buf;

/* Where a process waited when the wall limit fired (stall.c): which one
 * ("program"; "init" or "zygote", its starter, when no program was found), its state letter
 * (/proc/PID/stat: R, S, D, ...) and kernel wait channel (/proc/PID/wchan,
 * "" when running, unreadable or not a symbol). process NULL: not read. */
typedef struct {
  const char *process;
  char state;
  char wchan[64];
} sb_waiting;

typedef struct {
  sb_status status;
  int exit_code;          /* -1 when signaled or not run */
  int signal;             /* 0 when none */
  sb_buf out, err;
  double cpu_time_s, user_time_s, sys_time_s, wall_time_s, setup_time_s;
  double wall_excused_s;        /* the wall deadline moved by this: time the program waited for a CPU (stall.c) */
  sb_waiting wall_waiting;      /* limit_hit wall_time: what the program was waiting in when it fired */
  uint64_t max_rss_kb;          /* largest single process (rusage) */
  uint64_t cgroup_peak_kb;      /* whole tree, 0 when the backend has no peak */
  const char *limit_hit;        /* "wall_time", "cpu_time", "memory", "output", "file_size" or NULL */
  bool pids_limit_hit;
  const char *cpu_source;       /* "cgroup v1 cpuacct", "cgroup v2 cpu.stat", "rusage" */
  double cpu_resolution_s;      /* what cpu_source tells apart: 0 = microseconds; a clock tick from /proc */
  char error[SB_ERR_MAX];       /* internal_error / exec failure explanation */
  sb_limits limits;             /* as requested */
  sb_cgroup_kind cgroup;
  int64_t uid;                  /* the run's uid (and gid), -1 when it never started */
  bool output_base64;           /* as requested by the spec */
  char pool[SB_ERR_MAX];        /* enforced.pool: "used", "off: why", "not used: why"; "" never started */
  bool traced;                  /* the spec asked for a trace: the fields below are set */
  sb_buf trace;                 /* JSON Lines ending in an end record; truncated: the byte cap cut it */
  const char *trace_status;     /* the last end record's status: complete, truncated, tampered, crashed */
  uint64_t trace_bytes;         /* the cap applied */
  bool trace_seal_wanted;       /* the spec asked for a sealed trace (trace_seal) */
  bool trace_sealed;            /* ... and the tracer's seal matched its end and every byte before it */
  char start[SB_ERR_MAX];       /* enforced.start: "cold", "cold (warm refused: why)", "warm (zygote, hash seed N)" */
  bool warm;                    /* started warm */
  bool warm_seeded;             /* ... with the zygote's hash seed (below), not the job's PYTHONHASHSEED */
  uint64_t warm_seed;
  /* internal_error because the slot's zygote ended before it started the
   * program (nothing of the program ran): the daemon runs the step again,
   * cold (warm_refused below says why) */
  bool warm_lost;
} sb_result;

void sb_result_free(sb_result *r);
/* The result document (field names are part of the protocol). Caller owns it. */
struct json_object *sb_result_to_json(const sb_result *r, const sb_runtime *rt);

/* ---- event-driven interface (for the daemon) --------------------------- */
typedef struct sb_proc sb_proc;

int sb_proc_start(sb_runtime *rt, const sb_spec *spec, sb_proc **out, char err[SB_ERR_MAX]);
/* fds to watch for readability; -1 when closed. */
int sb_proc_pidfd(const sb_proc *p);
int sb_proc_control_fd(const sb_proc *p);  /* sandbox init's status channel */
int sb_proc_stdout_fd(const sb_proc *p);
int sb_proc_stderr_fd(const sb_proc *p);
int sb_proc_stdin_fd(const sb_proc *p);    /* writable; -1 when all stdin was written */
int sb_proc_trace_fd(const sb_proc *p);    /* a traced run's trace pipe (read with sb_proc_on_output); else -1 */
/* Call when the named fd is ready. They never block. */
void sb_proc_on_control(sb_proc *p);
void sb_proc_on_output(sb_proc *p, int fd);
void sb_proc_on_stdin(sb_proc *p);
/* Call periodically (every ~50 ms) and when a deadline passes: enforces wall and
 * CPU limits. Returns milliseconds until the next check is useful. */
int sb_proc_tick(sb_proc *p);
/* Kill the whole sandbox now (cancel); the result says why. */
void sb_proc_kill(sb_proc *p, const char *why);
/* True once the sandbox init was reaped (pidfd readable → call sb_proc_on_exit). */
void sb_proc_on_exit(sb_proc *p);
bool sb_proc_done(const sb_proc *p);
/* Collect the result and free the proc. */
void sb_proc_finish(sb_proc *p, sb_result *out);

/* ---- file helpers the daemon shares: sb_mkdir_p, sb_rm_rf ------------- */
#include "fs_tree.h" /* (common/) */

/* Blocking: start, drive with poll(), finish. Returns 0 if the sandbox worked. */
int sb_run(sb_runtime *rt, const sb_spec *spec, sb_result *out);

#endif
