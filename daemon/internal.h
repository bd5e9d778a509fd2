/* Internal structures of surgeboxd, grouped by source file. Everything runs
 * on the one libuv loop thread. */
#ifndef SURGEBOX_DAEMON_INTERNAL_H
#define SURGEBOX_DAEMON_INTERNAL_H

#include "daemon.h"
#include "protocol.h"
#include "sandbox.h"
#include "toolchain.h"
#include "profile.h"

#include <uv.h>

typedef struct sbd_server sbd_server;
typedef struct sbd_conn sbd_conn;
typedef struct sbd_job sbd_job;
typedef struct sbd_step_run sbd_step_run;

/* ---- profiles.c: jobs in another root file system ---- */
typedef struct sbd_profile sbd_profile;
typedef struct sbd_load sbd_load;
/* What a request waiting for a profile's load is called back with, on the
 * loop when the load ends: the profile, or NULL and why not. */
typedef struct {
  void (*fn)(void *arg, sbd_profile *p, const char *err);
  void *arg;
} sbd_profile_wait;
typedef enum { SBD_PROFILE_READY, SBD_PROFILE_LOADING, SBD_PROFILE_ERROR } sbd_profile_state;
/* READY: *out is the profile (NULL for "host" or no name). LOADING: it is
 * being loaded on the thread pool (this call started the load, or joined
 * the one in flight); wait is called once it ended, unless forgotten first.
 * ERROR: err (e.g. a bad name, out of memory). */
sbd_profile_state sbd_profile_want(sbd_server *srv, const char *name, sbd_profile_wait wait, sbd_profile **out,
                                   char *err, size_t n);
bool sbd_profile_forget_waiter(sbd_server *srv, const void *arg); /* the wait with this arg; true if it waited */
/* Shutting down: every waiter is called now with an error (srv->draining is
 * set); loads in flight end on their own, the loop waits for them. */
void sbd_profiles_drain(sbd_server *srv);
const sbt_registry *sbd_profile_registry(sbd_server *srv, const sbd_profile *p);
const char *sbd_profile_root(const sbd_profile *p);
json_object *sbd_profile_identity(const sbd_profile *p); /* {"name","manifest_hash"} */
void sbd_profiles_forget(sbd_server *srv);
/* The name of a profile in the profiles directory (other than except) whose
 * manifest packages toolchain (e.g. g++-9 in surge-2025): 0 and out, or -1. */
int sbd_profile_offering(sbd_server *srv, const char *toolchain, const char *except, char *out, size_t n);

/* What a service calls back, as libuv's uv_queue_work is handed its work:
 * the cache, the scheduler, a step, a connection, a cases step and a job's
 * end are told what to call and name nothing of their users
 * (bench/house_figures.py). */
typedef struct {
  void (*fn)(void *arg);
  void *arg;
} sbd_call;

/* ---- cache.c: the compile cache ---- */
typedef struct sbd_cache sbd_cache;
typedef struct {
  char **paths;
  uint64_t *sizes;
  int64_t *mtimes;
  size_t n;
  bool failed; /* the walk could not see everything: store nothing */
} sbd_snapshot; /* the files of a workspace, to see what a compile produced */
typedef enum { SBD_CACHE_OFF, SBD_CACHE_HIT, SBD_CACHE_WAIT, SBD_CACHE_LEAD } sbd_cache_lookup_result;
int sbd_cache_open(sbd_cache **out, uv_loop_t *loop, const char *dir, uint64_t max_bytes, char *err, size_t err_len);
void sbd_cache_close(sbd_cache *c);
/* 0, or -1 when the workspace a program already ran in cannot be keyed
 * (too big, unreadable): then the step is not cached. */
int sbd_cache_key(const sbd_job *job, char out[65]);
/* HIT: *doc is the cached compile result and the artifacts are in ws.
 * WAIT: an identical compile runs; wake is called (on a later loop turn)
 * when it ends (a wake without fn: OFF instead, the caller compiles
 * uncached). LEAD: compile it, then sbd_cache_store or sbd_cache_abandon. */
sbd_cache_lookup_result sbd_cache_lookup(sbd_cache *c, const char *key, sbd_call wake, sb_workspace *ws,
                                         json_object **doc);
void sbd_cache_store(sbd_cache *c, const char *key, json_object *doc, sb_workspace *ws, const sbd_snapshot *before);
void sbd_cache_abandon(sbd_cache *c, const char *key);
bool sbd_cache_forget_waiter(sbd_cache *c, const void *arg); /* the wake with this arg; true if it was waiting */
json_object *sbd_cache_stats(sbd_cache *c);
void sbd_snapshot_take(sb_workspace *ws, sbd_snapshot *s);
void sbd_snapshot_free(sbd_snapshot *s);

/* ---- job.c: one exec request, its steps run one after another ---- */
typedef struct {
  const char *name;
  char **argv, **env;      /* borrowed from the request or the plan */
  const unsigned char *stdin_data;
  size_t stdin_len;
  bool merge_output;
  bool output_base64;
  bool cacheable;          /* a toolchain's compile step */
  sb_limits limits;
  char **outputs;          /* files to return after it ran (borrowed), n_outputs of them */
  size_t n_outputs;
  bool traced;             /* under the tracer (trace.c): argv, env and mounts its own */
  bool warm;               /* "warm": started by the slot's zygote where it can be (runners/warm.c) */
  uint64_t trace_bytes;    /* the supervisor's cap on the trace */
  char **own_argv, **own_env;
  sb_mount *own_mounts;    /* the plan's mounts and the tracers' directory (and gdb's launcher) */
  const char *const *seccomp_allow; /* what the traced run's filter allows (gdb: ptrace), or NULL */
  size_t n_own_mounts;
  bool check;              /* run untraced first, then compare (trace.check) */
  bool trace_seal;         /* a Python trace: sealed with a key given to its tracer alone (runners/trace.c) */
  char **plain_argv, **plain_env; /* that run: the step as asked, the traced run's environment
                                   * without the tracer's variables (same hash seed) */
  const sb_mount *plain_mounts;
  size_t n_plain_mounts;
  const sbp_cases *cases;  /* "cases": run once per case (cases.c); NULL: once */
} sbd_jstep;
/* trace.c: a request's traced steps checked (0, or -1 with msg), a step
 * rewritten to run under the tracer, its copies freed. */
int sbd_trace_check(const sbp_exec *ex, const sbt_registry *reg, const sbt_toolchain *tc, char *msg, size_t n);
int sbd_trace_step(sbd_jstep *js, const sbp_trace *t, const sb_mount *base, size_t n_base,
                   char *const *build_argv);
void sbd_trace_step_free(sbd_jstep *js);
/* The untraced run's figures kept for the traced step's document, and that
 * document given them and the comparison (trace_check). */
json_object *sbd_trace_untraced_summary(json_object *doc);
void sbd_trace_add_check(json_object *doc, json_object *untraced);
/* The outputs' bytes together per job: the request's outputs_max_bytes, at
 * most this (a response line must stay readable). */
#define SBD_OUTPUTS_MAX_BYTES ((uint64_t)64 << 20)

struct sbd_job {
  sbd_server *srv;
  sbd_conn *conn;          /* holds a reference while queued or running */
  sbp_request *req;        /* owned */
  json_object *resp;       /* the exec response being built */
  sb_workspace *ws;
  sbd_step_run *run;       /* the step running now, NULL between steps */
  sbd_jstep *steps;
  size_t n_steps;
  size_t step;             /* index of the next/current step */
  sbt_plan plan;           /* toolchain form */
  bool has_plan;
  char cache_key[65];
  char *root;               /* the profile's root file system, NULL for the host */
  json_object *profile;     /* {"name","manifest_hash"}, recorded in the response */
  uint64_t tc_mtime_ns, tc_size; /* the toolchain binary, part of the cache key */
  bool ran_program;        /* a program ran in ws: the cache keys on its content */
  uint64_t outputs_left;   /* bytes the job's outputs may still return */
  bool cache_leader;       /* this job compiles for everyone waiting on the key */
  sbd_snapshot before;     /* the workspace before the compile */
  int slot;                /* worker slot (selects the shared netns), -1 if queued */
  bool cancelled;          /* cancel request or disconnect */
  bool parked;             /* waiting for its profile's load (in conn->parked and the load's waiters) */
  char cancel_why[128];    /* put in the killed step's "error" */
  uint64_t t_queued, t_started;
  double cpu_s, wall_s;
  char wall_waiting[96];   /* "process:state:wchan" of a step the wall limit ended, for the log */
  json_object *untraced;   /* a checked traced step: its untraced run's summary, while the traced one runs */
  char warm_refused[SB_ERR_MAX]; /* the step's zygote ended before the program started: run again cold, saying why */
  struct sbd_cases_run *cases; /* the cases step running (cases.c), NULL otherwise */
  sbd_job *prev, *next;    /* in conn->queued or conn->running */
};

sbd_job *sbd_job_new(sbd_server *srv, sbd_conn *conn, sbp_request *req);
void sbd_job_start(sbd_job *job, int slot);
/* Kill a running job's sandbox; it completes (as cancelled) through the loop. */
void sbd_job_cancel_running(sbd_job *job, const char *why);
/* Answer a job that never ran (cancelled while queued, shutting down). */
void sbd_job_finish_unrun(sbd_job *job, const char *status, const char *why);
void sbd_job_free(sbd_job *job);
/* A job not started taken out of where it waits (its connection's queue, or
 * its profile's load): the caller answers or frees it. */
void sbd_job_unqueue(sbd_job *job);
void sbd_job_slot_ready(sbd_job *job); /* after waiting for its slot (sched.c) */

/* ---- cases.c: a step with "cases", one sandbox per case ---- */
typedef struct sbd_cases_run sbd_cases_run;
/* What a cases step calls back (the job's, handed to sbd_cases_start):
 * start the current step's sandbox (waiting for the slot's cleaning; its
 * spec from sbd_cases_spec), and the step's document in (takes doc; the
 * job goes on or ends). */
typedef struct {
  void (*start_sandbox)(sbd_job *job);
  void (*finished)(sbd_job *job, json_object *doc, bool ok, double cpu_s, double wall_s);
  void (*job_spec)(sbd_job *job, sb_spec *spec); /* the step's spec as the job would run it (a lent slot's case) */
} sbd_cases_calls;
void sbd_cases_start(sbd_job *job, const sbd_jstep *js, sbd_cases_calls calls);
void sbd_cases_spec(const sbd_job *job, sb_spec *spec); /* the running case's workspace, argv, stdin, limits */
/* A run ended: true when it was a case's (cases.c took r). */
bool sbd_cases_result(sbd_job *job, sb_result *r);
/* What a cases step that never ran answers for its cases ("cases_not_run"):
 * every case compile_error (build_failed) or skipped. */
json_object *sbd_cases_unrun_doc(const char *name, const sbp_cases *cs, bool build_failed);
void sbd_cases_free(sbd_job *job);
/* A cancel: no case starts any more, the ones on lent slots are killed (the
 * job's own sandbox is the job's to kill); true while lent cases run: the
 * step ends once they did. */
bool sbd_cases_cancel(sbd_job *job);
/* The job's own slot got ready for a case after the job was cancelled: that
 * case never runs (the step ends once no case runs). */
void sbd_cases_unstarted(sbd_job *job);
/* checker.c: the checker judge of a cases step (compare "checker"): planned
 * from its toolchain (-1 and err when it cannot be), built once (begin: 1 a
 * sandbox to run with sbd_checker_spec, then build_end; 0 built; -1 err),
 * then per case: case_begin (its workspace: the build, input, output,
 * answer), a sandbox, case_end (the verdict's name; the case's document
 * gets "checker", why the reason when not accepted). */
typedef struct sbd_checker sbd_checker;
int sbd_checker_new(sbd_job *job, const sbp_checker *spec, sbd_checker **out, char err[SB_ERR_MAX]);
int sbd_checker_build_begin(sbd_checker *k, sbd_job *job, char err[SB_ERR_MAX]);
int sbd_checker_build_end(sbd_checker *k, sbd_job *job, sb_result *r, char err[SB_ERR_MAX]);
bool sbd_checker_building(const sbd_checker *k);
int sbd_checker_case_begin(sbd_checker *k, sbd_job *job, const void *input, size_t input_len, const void *output,
                           size_t output_len, const void *answer, size_t answer_len, char err[SB_ERR_MAX]);
void sbd_checker_spec(const sbd_checker *k, sb_spec *spec);
const char *sbd_checker_case_end(sbd_checker *k, sbd_job *job, sb_result *r, json_object *case_doc, char *why,
                                 size_t why_len);
void sbd_checker_abandon(sbd_checker *k, sbd_job *job); /* a cancelled build: its cache waiters go on */
void sbd_checker_free(sbd_checker *k, int slot);
/* the function-call harness (toolchains/harness/fn_harness.py, built in as fn_harness.c), its name in /app */
extern const char sbd_fn_harness[];
#define SBD_FN_HARNESS_NAME ".sb_fn_harness.py" /* a job ended between cases (cancelled while waiting for its slot) */

/* ---- step.c: uv handles watching one sandboxed run ---- */
#define SBD_STEP_FDS 5
/* A step's end, handed to sbd_step_start: fn(arg, the result). */
typedef struct {
  void (*fn)(void *arg, sb_result *r);
  void *arg;
} sbd_step_done;
struct sbd_step_run {
  sbd_step_done done;
  sb_proc *proc;
  uv_poll_t poll[SBD_STEP_FDS]; /* pidfd, control, stdout, stderr, trace */
  int dup_fd[SBD_STEP_FDS];      /* our own descriptor each poll watches (-1: none) */
  bool active[SBD_STEP_FDS];
  uv_timer_t timer;
  int open_handles;        /* freed when the last close callback ran */
  bool finished;
};
/* The run started on srv's loop (*out), done called once it ended: 0, or
 * a negative errno with err (nothing started, done never called). */
int sbd_step_start(sbd_server *srv, const sb_spec *spec, sbd_step_done done, sbd_step_run **out,
                   char err[SB_ERR_MAX]);
/* The result of a run sbd_step_start could not start: an internal error
 * under spec's limits that says why (err). */
void sbd_step_start_failed(sbd_server *srv, const sb_spec *spec, const char *err, sb_result *r);
void sbd_step_kill(sbd_step_run *run, const char *why);

/* ---- conn.c: a client connection ---- */
struct sbd_conn {
  sbd_server *srv;
  uv_pipe_t pipe;
  uv_shutdown_t shutdown;
  sbp_linesplit lines;
  bool read_eof;           /* the client will send nothing more */
  bool backlogged;         /* too many unwritten answers: not reading, not starting its jobs */
  int refs;                /* 1 while the pipe is open + 1 per job */
  bool closing;
  uid_t uid;
  gid_t gid;
  pid_t pid;
  uint64_t serial;
  sbd_job *queued_head, *queued_tail;
  size_t n_queued;
  sbd_job *running;
  sbd_job *parked;         /* jobs waiting for a profile's load (dispatch.c) */
  size_t n_parked;         /* requests waiting for a profile's load: those jobs and toolchains requests */
  sbd_conn *prev, *next;   /* server's list, the round-robin order */
  /* A connection with no socket (front.c: the HTTP front's one): its
   * answers go to sink instead of a pipe. NULL for a Unix-socket client. */
  void (*sink)(sbd_conn *c, json_object *resp);
  void *sink_arg;
};
/* What a connection calls (the server's, srv->conn_calls, set once): a
 * parsed request line (dispatch.c), and on close a queued job freed, a
 * running one cancelled (job.c). */
typedef struct {
  void (*request)(sbd_conn *c, sbp_request *req);
  void (*free_job)(sbd_job *job);
  void (*cancel_job)(sbd_job *job, const char *why);
} sbd_conn_calls;
void sbd_conn_accept(sbd_server *srv);
void sbd_conn_send(sbd_conn *c, json_object *resp); /* takes the reference */
void sbd_conn_close(sbd_conn *c);          /* now: drops queued jobs, kills running ones */
void sbd_conn_maybe_finish(sbd_conn *c);   /* after EOF, once nothing is left to answer */
bool sbd_conn_hung_up(sbd_conn *c);
/* Answers not yet taken by the client above which its requests are not read
 * and its queued jobs not started (until the backlog is below a quarter). */
#define SBD_BACKLOG_HIGH ((size_t)64 << 20)
#define SBD_BACKLOG_LOW (SBD_BACKLOG_HIGH / 4)
void sbd_conn_unref(sbd_conn *c);
void sbd_conn_ref(sbd_conn *c);
sbd_job *sbd_conn_find(sbd_conn *c, const char *id_key, bool *running);
void sbd_conn_unlink_queued(sbd_conn *c, sbd_job *j); /* the queue's: in sched.c */
void sbd_conn_link_running(sbd_conn *c, sbd_job *j);
void sbd_conn_unlink_running(sbd_conn *c, sbd_job *j);
void sbd_conn_link_parked(sbd_conn *c, sbd_job *j);
void sbd_conn_unlink_parked(sbd_conn *c, sbd_job *j);

/* ---- front.c: the HTTP front (http/) on the daemon's loop ---- */
/* All HTTP requests share one socketless connection, so the fair queue
 * gives HTTP as a whole one share beside each Unix-socket client. */
int sbd_front_start(sbd_server *srv); /* 0, or -1 after one line on stderr */
void sbd_front_drain(sbd_server *srv); /* stop listening */
void sbd_front_stop(sbd_server *srv);  /* close every HTTP connection */
void sbd_front_free(sbd_server *srv);  /* after the loop ended */

/* ---- dispatch.c: one parsed request ---- */
void sbd_dispatch(sbd_conn *c, sbp_request *req);

/* ---- sched.c: bounded, fair queue ---- */
/* 0, or -1 when the queue is full (busy). */
int sbd_sched_submit(sbd_server *srv, sbd_job *job);
/* Start queued jobs while workers are free and ready (their cgroup cleaned
 * after the previous job, sb_runtime_slot_ready), round robin over
 * connections. */
void sbd_sched_pump(sbd_server *srv);
void sbd_sched_release(sbd_server *srv, int slot);
/* Watch the runtime's slot-ready fd (start: after the loop's init; stop:
 * with the other handles). A step whose own slot is not ready yet (a
 * multi-step job's next step) waits as the slot's waiter, never blocking. */
/* What the scheduler calls (its user's, handed once): start a job on the
 * slot it was given; a waiting job's slot is ready. */
typedef struct {
  void (*start)(sbd_job *job, int slot);
  void (*slot_ready)(sbd_job *job);
} sbd_sched_calls;
void sbd_sched_start(sbd_server *srv, sbd_sched_calls calls);
void sbd_sched_stop(sbd_server *srv);
/* false: the slot is still being cleaned, the job waits (resumed by
 * sbd_job_slot_ready); true: start now. */
bool sbd_sched_slot_wait(sbd_server *srv, sbd_job *job);
bool sbd_sched_forget_waiter(sbd_server *srv, sbd_job *job); /* true if it was waiting */
/* A running job that could use more slots (a cases step: one case per lent
 * slot) borrows: while nothing is queued, the pump hands it an idle, ready
 * slot through take (busy from then on; take false: not this slot, which
 * stays free; a borrower that wants none unborrows itself). A lent slot goes
 * back with give_back once its one case ended. */
typedef struct sbd_borrower {
  bool (*take)(void *arg, int slot);
  void *arg;
  struct sbd_borrower *prev, *next;
  bool linked;
} sbd_borrower;
void sbd_sched_borrow(sbd_server *srv, sbd_borrower *b); /* linked at the tail; the caller pumps */
void sbd_sched_unborrow(sbd_server *srv, sbd_borrower *b);
void sbd_sched_give_back(sbd_server *srv, int slot);      /* release, then pump */
void sbd_sched_pump_soon(sbd_server *srv, uint64_t ms);   /* a pump in ms (a lent slot's zygote starting) */

/* ---- log.c ---- */
void sbd_log(sbd_server *srv, const char *level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void sbd_spawner_check(sbd_server *srv); /* log a restart of the runtime's spawner once */
void sbd_log_job(sbd_server *srv, const sbd_job *job, const char *status);

/* ---- metrics.c: OpenMetrics text of the counters ---- */
#define SBD_HIST_N 13 /* finite buckets; +Inf is the count */
typedef struct {
  uint64_t bucket[SBD_HIST_N]; /* cumulative: observations <= the bound */
  uint64_t count;
  double sum;
} sbd_hist;
extern const double sbd_metrics_bounds[SBD_HIST_N];
void sbd_metrics_step(sbd_server *srv, double cpu_s, double wall_s); /* one finished step */
void sbd_metrics_loop_turn(sbd_server *srv, double busy_s);          /* one turn of the loop (loopstat.c) */
/* ---- queuetime.c: p50/p99 queue time over a recent window ---- */
#define SBD_QT_WINDOW 1024 /* the last this many jobs started... */
#define SBD_QT_WINDOW_S 300 /* ...and of those, the ones started within this many seconds */
typedef struct {
  uint64_t started_ns[SBD_QT_WINDOW], queue_ns[SBD_QT_WINDOW]; /* a ring */
  size_t next, n;
  uint64_t count; /* every job started since the daemon did */
  double sum_s;
} sbd_queuetime;
void sbd_queuetime_add(sbd_queuetime *q, uint64_t started_ns, uint64_t queue_ns);
/* The window's job count as of now_ns, and (when not 0) its p50 and p99 in seconds. */
size_t sbd_queuetime_quantiles(const sbd_queuetime *q, uint64_t now_ns, double *p50, double *p99);
json_object *sbd_queuetime_json(const sbd_queuetime *q, uint64_t now_ns); /* status' queue_time */
/* ---- loopstat.c: the loop thread's busy time per turn ---- */
void sbd_loopstat_start(sbd_server *srv);
void sbd_loopstat_stop(sbd_server *srv);
char *sbd_metrics_text(sbd_server *srv); /* malloc'd, ends with "# EOF\n"; NULL: no memory */

/* ---- systemd.c: sd_notify and socket activation, without libsystemd ---- */
void sbd_notify(const char *state); /* a datagram to $NOTIFY_SOCKET, if set */
/* The socket systemd passed (LISTEN_PID is ours): its fd (3) and its path;
 * -1 when none was passed, -2 on error (err set). Unsets LISTEN_*. */
int sbd_listen_fd(char *path, size_t cap, char *err, size_t err_len);

/* ---- status.c: the counters of finished jobs, the status answer ---- */
#define SBD_N_STATUS 12
extern const char *const sbd_status_names[SBD_N_STATUS];
void sbd_count_status(sbd_server *srv, const char *status);
json_object *sbd_status_json(sbd_server *srv, json_object *id);

/* ---- peer.c: who may connect ---- */
/* fd: the peer's socket (its supplementary groups, for the socket's group) */
bool sbd_peer_allowed(const sbd_server *srv, uid_t uid, gid_t gid, int fd);
/* The refused peer's one line: not allowed, and what to ask its
 * administrator for (the socket group, --allow-uid / allow-uid =). */
void sbd_peer_refusal(const sbd_server *srv, bool uid_known, uid_t uid, char *buf, size_t len);

/* ---- server.c ---- */

struct sbd_server {
  uv_loop_t loop;
  sbd_config *cfg;
  sb_runtime *rt;
  char socket_path[4096];
  uv_pipe_t listener;
  bool listening;
  uv_signal_t sig_term, sig_int, sig_hup;
  uv_timer_t grace;
  uv_timer_t hangups;       /* checks half-closed clients for a real hang-up */
  sbd_conn *conns;         /* doubly linked */
  sbd_conn *rr_last;       /* connection served last */
  bool *slot_busy;
  sbd_job **slot_waiter;    /* sched.c: a step waiting for its slot's cleaning, per slot */
  uint64_t *slot_last_conn; /* sched.c: serial of the connection whose job used the slot last (0: none) */
  uv_poll_t slot_ready;     /* the runtime's slot-ready fd */
  sbd_sched_calls sched_calls; /* sched.c: what it calls, from sbd_sched_start */
  sbd_conn_calls conn_calls;   /* conn.c: what it calls, from sbd_run */
  sbd_call job_ended;          /* job.c: a job ended (server.c's drain, malloc_trim) */
  bool slot_ready_on;
  int n_slots;
  int running;
  size_t queued;
  bool draining;
  uint64_t start_ns, conn_serial;
  uint64_t totals[SBD_N_STATUS];
  uint64_t jobs_done, rejected_busy, connections_total;
  uint64_t spawner_restarts_seen; /* sbd_spawner_check: restarts already logged */
  sbt_registry toolchains;
  bool have_toolchains;
  sbt_warm_langs warm_langs; /* what may start warm: <warm dir>/<lang>/warm.json (sbd_toolchains_reload) */
  char toolchain_error[SBT_ERR_MAX];
  sbd_cache *cache;
  sbd_profile *profiles;    /* opened on demand */
  sbd_load *loads;          /* profiles.c: loads on the thread pool */
  uint64_t profiles_gen;    /* profiles.c: SIGHUPs seen (a load started before one is not kept) */
  sbd_hist step_cpu, step_wall;
  uv_prepare_t turns;       /* loopstat.c */
  uint64_t turn_start_ns, turn_idle_ns, turn_delay_ns;
  int turn_schedstat_fd;    /* /proc/thread-self/schedstat of the loop thread, -1: none */
  sbd_hist loop_busy;       /* busy time per turn of the loop */
  sbd_queuetime queue_time; /* queuetime.c: submit to start, recent jobs */
  double loop_busy_max;
  bool socket_adopted;      /* from systemd: never unlinked by us */
  bool has_socket_gid;      /* members of socket_gid may connect (group of the socket file) */
  gid_t socket_gid;
  uv_timer_t idle;          /* --idle-timeout: checks for an idle daemon */
  uv_timer_t uid_wait;      /* sched.c: every uid held (sb_uids_waiting): pump again shortly */
  uv_timer_t trim;          /* idle a second: malloc_trim */
  struct sbd_borrower *borrowers; /* sched.c: running jobs that would take an idle slot */
  bool pumping, repump;     /* sched.c: a pump running; another asked for meanwhile */
  uint64_t logged_netns_rebuilds, logged_template_rebuilds; /* job.c: the slot rebuilds said so far */
  uint64_t idle_since;      /* uv_hrtime() when the last client/job went, 0: busy */
  uint64_t idle_seen_conns; /* connections_total at the last idle check */
  char proof_cgroup[SB_ERR_MAX + 96]; /* prove.c: "on: v1", "off: why" */
  char proof_uids[96];                /* prove.c: "on: first-last", "off: why" */
  double proof_ms;                    /* how long the self-proof took */
  sbh_server *http;         /* front.c: the HTTP front, NULL when off */
  int (*http_metrics)(sbd_server *srv, char **buf, size_t *len); /* front.c: its families appended (metrics.c); -1: no memory */
  sbd_conn *front;          /* front.c: its connection */
  struct sbd_ticket *tickets; /* front.c: HTTP requests not answered */
  uint64_t next_ticket;
};
void sbd_toolchains_reload(sbd_server *srv);

/* ---- prove.c ---- */
/* The self-proof at start (before the loop): 0, or -1 after printing the
 * one-line reason why no job can run here. May reopen srv->rt. */
int sbd_prove(sbd_server *srv);
void sbd_prove_log(sbd_server *srv);
json_object *sbd_prove_json(sbd_server *srv); /* status' self_proof */

#endif
