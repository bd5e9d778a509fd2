/* The parent-side state of one run, shared by proc.c (driving it) and
 * accounting.c (turning it into a result). */
#ifndef SURGEBOX_PROC_INTERNAL_H
#define SURGEBOX_PROC_INTERNAL_H
#include "internal.h"

typedef enum { PHASE_SETUP, PHASE_RUNNING, PHASE_EXITED } phase;

/* mempoll.c: the memory bound when no cgroup enforces memory. */
#define SB_MEMPOLL_MOUNTS 3 /* /tmp, /dev/shm, /app */
typedef struct {
  bool active;                       /* no memory cgroup: poll */
  bool shm_dev_known, see_maps;      /* see mempoll.c */
  dev_t shm_dev;                     /* the kernel's internal shm mount */
  bool counted[SB_MEMPOLL_MOUNTS];   /* a tmpfs of the job's own */
  uint64_t base[SB_MEMPOLL_MOUNTS];  /* bytes it held at GO */
  uint64_t next_ns, last_bytes, peak_bytes;
  /* No cgroup counting CPU (none, unprivileged): the same walk sums the
   * tree's CPU, so the limit holds for the tree and by precise time
   * (RLIMIT_CPU counts tick samples: under steal time a program was killed
   * after 1.75 s of a 2 s limit). */
  bool cpu_active, cpu_valid;
  uint64_t cpu_ns, cpu_user_ns, cpu_sys_ns; /* the largest reading so far */
  uint64_t cpu_at_ns;                       /* when it was taken (sbu_now_ns) */
} sb_mempoll;

typedef struct {
  int fd;           /* /proc/<pid>/schedstat, -1: none */
  uint64_t base_ns; /* its run_delay at GO */
} sb_stall_starter;

struct sb_proc {
  sb_runtime *rt;
  sb_limits limits;
  phase phase;
  pid_t pid;
  int pidfd, ctl_fd, out_fd, err_fd;
  int trace_fd;           /* a traced run's pipe (read end), -1 otherwise or once closed */
  bool traced;
  uint64_t trace_cap;     /* bytes kept of the trace; past them the pipe is closed */
  bool pooled;   /* the init entered a prepared root (pool.c) */
  bool init_joins; /* the init joins its cgroup itself before READY (child.c), not attached at GO */
  char pool_note[SB_ERR_MAX]; /* the result's enforced.pool (sb_pool_prepare) */
  char start_note[SB_ERR_MAX]; /* the result's enforced.start (sb_warm_prepare) */
  sb_warm_run warm;            /* a warm run: its zygote and descriptors (warm.c) */
  int job_ns_fd; /* pooled: its mount namespace, closed on the teardown thread */
  int ipc_ns_fd; /* its ipc namespace from GO, emptied at the end (ipcns.c) */
  int netns_slot; /* the slot whose network namespace it entered, or -1 (namespaces.c) */
  sb_cg_job cg;
  sb_bpf own_filter; /* when the spec extends the runtime's policy */
  uint64_t t_start, t_go, setup_deadline, wall_deadline, next_cpu_check;
  sb_buf out, err, trace;
  sb_trace_scan trace_scan; /* how far the trace was checked (trace.c) */
  const char *kill_reason; /* limit_hit, or "cancel" */
  bool killed, reaped, have_done, internal_error;
  bool warm_lost; /* the init's word: the zygote ended before any process of the job was born */
  sb_msg done;
  int init_status;
  struct rusage init_ru;
  char error[SB_ERR_MAX];
  char argv0[256];
  char **argv, **envp;  /* our own copies: the init wipes the supervisor's argv area */
  char *cwd;
  char *root;           /* profile root, or NULL for the host */
  sb_mount *mounts;
  size_t n_mounts;
  char **submounts; /* mount points under the read-only binds (submounts.c) */
  sb_uid_lease *own_lease; /* taken for this run alone (no workspace, no lease in the spec) */
  uid_t uid;
  gid_t gid;
  bool output_base64;
  char etc_passwd[512], etc_group[256]; /* the sandbox's identity files (mounts.c) */
  sb_mempoll mem;
  sb_stall_starter stall_init, stall_zygote; /* their schedstat and run_delay at GO (stall.c) */
  int stall_fd;             /* the program's first process's schedstat, -1 until found (stall.c) */
  int stall_dir;            /* ... and its /proc directory (O_PATH): its wait channel at a wall kill */
  bool stall_gone;          /* no schedstat to read: never excused */
  uint64_t wall_excused_ns; /* how far the wall deadline moved for time spent waiting for a CPU */
  sb_waiting wall_waiting;  /* read at the wall kill (stall.c) */
  bool zygote_killed;       /* a warm run's zygote never started the program in its wall limit: killed */
};

void sb_proc_free(sb_proc *p);

/* stall.c: the wall limit does not count waiting for a CPU other work held. */
void sb_stall_go(sb_proc *p);    /* at GO: the starters' baselines */
void sb_stall_find(sb_proc *p);  /* latch the program's first process, once */
/* ns the deadline may move; job_idle_ns: the wall since GO the job's CPU did not fill */
uint64_t sb_stall_excuse_ns(sb_proc *p, uint64_t job_idle_ns);
void sb_stall_close(sb_proc *p);
/* At a wall kill: what the program (else the init, no program found) was
 * waiting in, into the result (sb_result.wall_waiting). */
void sb_stall_waiting(sb_proc *p, sb_waiting *w);

void sb_mempoll_start(sb_proc *p);             /* at GO: baselines, or inactive */
bool sb_mempoll_over(sb_proc *p, uint64_t now); /* poll when due; true: kill */
bool sb_mempoll_cpu_ns(const sb_proc *p, uint64_t *ns); /* the tree's CPU at the last poll (cpu_active) */
/* Sum of the "Key:  N kB" values of keys in a /proc text; *found: how many. */
uint64_t sb_mempoll_kb(const char *text, const char *const *keys, int *found);

#endif
