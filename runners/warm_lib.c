/* libsbwarm.so: what a zygote (toolchains/warm/python/sbzygote_body.py)
 * calls through ctypes, loaded once before any job. The program's own steps
 * are program.c's sb_program_setup, the cold job's, built into this library
 * from the same sources (runners/CMakeLists.txt); the messages on the job's
 * socket are internal.h's ("warm.c"). Per job:
 *
 *   zygote  sbwarm_await_go   the init made the job's cgroup namespace
 *   zygote  sbwarm_enter_pid  its children's pid namespace: the init's (the
 *                             plan's mode read, nothing else of it)
 *   fork    sbwarm_enter      setns into the init's other namespaces (pidfd)
 *           sbwarm_plan       the job's plan mapped and checked (plan.c's
 *                             reader); Python checks its argv and environment
 *                             (sbwarm_arg, sbwarm_env)
 *           sbwarm_program    the job's cgroup, a session, sb_program_setup,
 *                             the plan unmapped, every descriptor above 2
 *                             closed; then Python runs the program (nothing
 *                             of the job before)
 *   zygote  sbwarm_reap       its wait status and rusage to the init
 *
 * In user-namespace mode (an unprivileged daemon) sbwarm_enter_pid cannot,
 * and a first fork enters every namespace, its user namespace first
 * (sbwarm_enter), then forks the program's process (fork 2, which runs
 * sbwarm_program) and exits: the zygote, its subreaper, reaps fork 2.
 *
 * And the program's short exit (sbzygote_body.py _short_exit): once, in the
 * zygote, sbwarm_audit_watch; at the program's end sbwarm_audit_hooked and
 * sbwarm_exit.
 */
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void send_warm(int job_fd, const sb_warm_msg *m) {
  while (send(job_fd, m, sizeof *m, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

static void send_fail(int job_fd, const char *what, int err, bool internal) {
  sb_warm_msg m;
  memset(&m, 0, sizeof m);
  m.type = SB_WARM_FAIL;
  m.internal = internal;
  m.fail.err = err > 0 ? err : EINVAL;
  strncpy(m.fail.what, what, sizeof m.fail.what - 1);
  send_warm(job_fd, &m);
}

SBWARM_API int sbwarm_await_go(int job_fd) {
  sb_warm_msg m;
  for (;;) {
    ssize_t n = recv(job_fd, &m, sizeof m, 0);
    if (n < 0 && errno == EINTR) continue;
    return n == (ssize_t)sizeof m && m.type == SB_WARM_GO ? 0 : -1;
  }
}

/* The job's mode from its plan (plan.c: its magic and user-namespace
 * flag, nothing of the job's words, which would stay in the zygote's stack
 * for the next job's fork: issue 35): 0 or 1, or FAIL sent and -1. */
static int plan_userns(int job_fd, int plan_fd) {
  int userns = sb_plan_read_userns(plan_fd);
  if (userns < 0) send_fail(job_fd, "warm job", EINVAL, true);
  return userns;
}

/* Every namespace of the job's init at once (pidfd setns, 5.8+); the pid
 * namespace applies to our children. User-namespace mode (the job's steps
 * say so): its user namespace too, which the kernel installs first, so the
 * others are checked against our capabilities in it (full: its owner, the
 * daemon's uid, is ours, and it is a child of ours: setns(2)). 0, or FAIL
 * sent and -errno. */
SBWARM_API int sbwarm_enter(int job_fd, int init_pidfd, int plan_fd, int born_inside) {
  int flags = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET | CLONE_NEWCGROUP;
  int userns = plan_userns(job_fd, plan_fd);
  if (userns < 0) return -EINVAL;
  if (!born_inside) flags |= CLONE_NEWPID;
  if (userns) flags |= CLONE_NEWUSER;
  if (setns(init_pidfd, flags) == 0) return 0;
  int e = errno;
  send_fail(job_fd, "setns", e, true);
  return -e;
}

static int own_pidns = -1; /* the zygote's own pid namespace, opened at its first job */

/* The zygote itself, before the one fork of a job outside user-namespace
 * mode: the pid namespace of its children (pid_for_children) becomes the
 * init's, so the child it forks next is born there and enters the rest
 * itself (sbwarm_enter, born_inside): one fork per job, not two (each
 * copies the zygote's page tables, and the first one's exit unmaps them
 * again). In user-namespace mode the zygote has no CAP_SYS_ADMIN in its own
 * user namespace, which pidns_install also asks for: 1, and the job takes
 * two forks. 0, or FAIL sent and -errno; sbwarm_leave_pid undoes it. */
SBWARM_API int sbwarm_enter_pid(int job_fd, int init_pidfd, int plan_fd) {
  int userns = plan_userns(job_fd, plan_fd);
  if (userns < 0) return -EINVAL;
  if (userns) return 1;
  if (own_pidns < 0) own_pidns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
  if (own_pidns >= 0 && setns(init_pidfd, CLONE_NEWPID) == 0) return 0;
  int e = errno;
  send_fail(job_fd, "setns (pid namespace)", e, true);
  return -e;
}

/* The zygote, once its fork is made: its children's pid namespace back to
 * its own, so that it holds nothing of the job (the namespace would live
 * on until the next job's setns) and a fork for any other reason is not
 * born in it. 0, or -errno. */
SBWARM_API int sbwarm_leave_pid(void) {
  if (own_pidns < 0) return 0;
  return setns(own_pidns, CLONE_NEWPID) == 0 ? 0 : -errno;
}

/* The job's cgroup: "0" (ourselves) into each cgroup.procs the daemon
 * opened; then the pages a program writes, copied in one call (warm_hot.c:
 * charged to the job, before its uid and filter). Once per process. */
static bool joined;
static int join_cgroups(const int *fds, int n, const char **what) {
  if (joined) return 0;
  for (int i = 0; i < n; i++)
    if (pwrite(fds[i], "0", 1, 0) < 0) {
      *what = "cgroup.procs";
      return -errno;
    }
  joined = true;
  sb_warm_hot_apply();
  return 0;
}

/* In the program's process, as soon as it is in the job's namespaces
 * (warm_serve.c): the job's cgroup joined, so that what the process does
 * from there on is the job's (its copies of the zygote's pages above all);
 * a failure is said by sbwarm_program, which tries again. */
void sb_warm_join_early(const int *cg_fds, int n_cg) {
  const char *what;
  (void)join_cgroups(cg_fds, n_cg, &what);
}

/* The job's plan, in the program's process only (sbwarm_plan), mapped
 * until its steps are taken (sbwarm_program). */
static sb_plan job;
static void *job_map;
static size_t job_map_len;
static int job_argc, job_envc;

/* In the program's process, before anything of the job is taken: its plan
 * mapped and checked (plan.c's one reader: every count and length against
 * the memfd's size), for sbwarm_arg, sbwarm_env and sbwarm_program. 0, or
 * FAIL sent and -errno. */
SBWARM_API int sbwarm_plan(int job_fd, int plan_fd) {
  int rc = sb_plan_map(plan_fd, 0, &job, &job_map, &job_map_len);
  if (!rc && !job.argv[0]) rc = -EINVAL;
  if (rc) {
    send_fail(job_fd, "warm job", -rc, true);
    return rc;
  }
  for (job_argc = 0; job.argv[job_argc]; job_argc++) {
  }
  for (job_envc = 0; job.envp[job_envc]; job_envc++) {
  }
  return 0;
}

/* The plan's argv[i] and envp[i] (sbzygote_body.py checks them against the
 * zygote's start-up), NULL past the last. */
SBWARM_API const char *sbwarm_arg(int i) { return job_map && i >= 0 && i < job_argc ? job.argv[i] : NULL; }
SBWARM_API const char *sbwarm_env(int i) { return job_map && i >= 0 && i < job_envc ? job.envp[i] : NULL; }

/* In the program's process (the second fork, pid ~2 of the job's pid
 * namespace), its plan mapped (sbwarm_plan): 0 once it is the job's
 * (nothing but 0-2 open, the plan unmapped), else FAIL sent and _exit(127). */
SBWARM_API int sbwarm_program(int job_fd, int in_fd, int out_fd, int err_fd, const int *cg_fds, int n_cg) {
  const char *what = "warm job";
  int rc = job_map ? join_cgroups(cg_fds, n_cg, &what) : -EINVAL;
  if (!rc && setsid() < 0) {
    what = "setsid";
    rc = -errno;
  }
  sb_plan *a = &job;
  a->stdin_fd = in_fd;
  a->stdout_fd = out_fd;
  a->stderr_fd = err_fd;
  a->empty_caps = cap_init();
  if (!rc && !a->empty_caps) rc = -ENOMEM;
  /* The steps reset every signal to its default, as before a cold exec;
   * python3's start-up then ignores SIGPIPE and SIGXFSZ and handles SIGINT.
   * The zygote's dispositions are exactly those (it was started with
   * defaults, spawner_serve.c): put them back. */
  static struct sigaction started[NSIG];
  for (int s = 1; s < NSIG; s++) sigaction(s, NULL, &started[s]);
  if (!rc) rc = sb_program_setup(a, &job_fd, &what);
  if (rc) {
    send_fail(job_fd, what, -rc, false);
    _exit(127);
  }
  for (int s = 1; s < NSIG; s++)
    if (started[s].sa_handler != SIG_DFL) sigaction(s, &started[s], NULL);
  /* Dumpable, as the kernel leaves a cold program after its execve of an
   * interpreter its uid may read (the uid drop made us not dumpable): its
   * own /proc/self/mem, environ, auxv, ptrace of its own children, as
   * cold (issue 35). Only its own uid's processes, the job's, gain: what
   * it could read of itself it already could (it holds its copy of the
   * zygote's pages); the zygote stays root's and not dumpable. */
  if (access("/proc/self/exe", R_OK) == 0 && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0) {
    send_fail(job_fd, "PR_SET_DUMPABLE", errno, true);
    _exit(127);
  }
  /* the plan's words are the program's own now (Python's copies); its
   * mapping goes, as an init's plan goes at a cold program's exec */
  munmap(job_map, job_map_len);
  job_map = NULL;
  sb_plan_init(&job);
  /* No exec closes what is close-on-exec: close it now (under the filter) */
  syscall(SYS_close_range, 3, ~0u, 0);
  return 0;
}

/* The zygote: the program's end (pid <= 0: it never started; exit 127). */
/* Once, in the zygote: its bounding set emptied, so that its children's
 * own drops (caps.c, in sbwarm_program) find nothing left to drop. The
 * zygote keeps its effective capabilities (setns, cgroup.procs) and never
 * executes anything, where the bounding set would matter. Unprivileged
 * (user-namespace mode) the drops fail and the children drop after their
 * setns, as before. */
SBWARM_API void sbwarm_drop_bounding(void) {
  for (int c = 0; c <= CAP_LAST_CAP; c++) prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
}

SBWARM_API int sbwarm_reap(int job_fd, int pid) {
  sb_warm_msg m;
  memset(&m, 0, sizeof m);
  m.type = SB_WARM_EXIT;
  m.wstatus = 127 << 8;
  while (pid > 0 && wait4(pid, &m.wstatus, __WALL, &m.ru) < 0 && errno == EINTR) {
  }
  send_warm(job_fd, &m);
  int wstatus = m.wstatus;
  explicit_bzero(&m, sizeof m); /* the job's rusage: not in the stack the next job's fork copies */
  return wstatus;
}

/* The program's process refuses its request (sbzygote_body.py _program:
 * its start-up differs, malformed): FAIL (internal); it exits 127 next and
 * the zygote reaps it (EXIT). */
SBWARM_API void sbwarm_fail(int job_fd) { send_fail(job_fd, "zygote refused", EINVAL, true); }

/* The zygote refuses a job (malformed) or could not start it (an
 * exception in its fork): FAIL (internal), then exit 127. */
SBWARM_API void sbwarm_refuse(int job_fd) {
  send_fail(job_fd, "zygote refused or failed", EINVAL, true);
  sbwarm_reap(job_fd, 0);
}

/* Python's audit hooks (3.8+): a C hook of ours, added once in the zygote,
 * notes whether anything added another (every addition is first announced
 * to the hooks already there as "sys.addaudithook"). The short exit is for
 * programs without one: a hook would see its own events (gc.get_objects)
 * and miss finalisation's. The interpreter's symbol is looked up at run time
 * (this library links with --no-undefined and is not Python's); called
 * through ctypes, so without the GIL, where PySys_AddAuditHook only links
 * the hook in (no thread state, no event). 0, or -1: no such interpreter
 * (older than 3.8), and no short exit. */
static volatile int audit_hook_added, class_changed;
static void *(*tuple_item)(void *, long);    /* PyTuple_GetItem */
static int (*str_is)(void *, const char *);  /* PyUnicode_CompareWithASCIIString: 0 when equal */

/* And whether an object's __class__ or a class's __bases__ was assigned
 * ("object.__setattr__" (obj, name, value), raised for those, and a
 * function's __code__ or defaults): an object the zygote made may have
 * been given a finaliser that way, which no scan of the child's own
 * objects sees (issue 35; sbzygote_body.py _old_changed). Called with the
 * GIL held: the interpreter's API may be used. */
static int watch_audit(const char *event, void *args, void *data) {
  (void)data;
  if (event[0] == 's' && strcmp(event, "sys.addaudithook") == 0) audit_hook_added = 1;
  if (event[0] == 'o' && strcmp(event, "object.__setattr__") == 0) {
    void *name = tuple_item && str_is ? tuple_item(args, 1) : NULL;
    if (!name || str_is(name, "__class__") == 0 || str_is(name, "__bases__") == 0) class_changed = 1;
  }
  return 0;
}

SBWARM_API int sbwarm_audit_watch(void) {
  typedef int (*hook_fn)(const char *, void *, void *);
  int (*add)(hook_fn, void *);
  *(void **)&add = dlsym(RTLD_DEFAULT, "PySys_AddAuditHook");
  *(void **)&tuple_item = dlsym(RTLD_DEFAULT, "PyTuple_GetItem");
  *(void **)&str_is = dlsym(RTLD_DEFAULT, "PyUnicode_CompareWithASCIIString");
  return add && add(watch_audit, NULL) == 0 ? 0 : -1;
}

SBWARM_API int sbwarm_audit_hooked(void) { return audit_hook_added; }

SBWARM_API int sbwarm_class_changed(void) { return class_changed; }

/* The program's end without Python's finalisation (only when nothing left
 * in it could show: sbzygote_body.py), through the C library's exit as
 * after Py_FinalizeEx: C atexit handlers, destructors and stdio buffers of
 * the program's C extensions still run. */
SBWARM_API void sbwarm_exit(int status) { exit(status); }

/* The program's C environment, in the job's order: block holds
 * "NAME=VALUE\0" entries (len bytes in all). As os.environ.clear() then
 * update() leave it (every unsetenv, then a putenv per entry, appended in
 * order), without a Python call per variable (sbzygote_body.py _environ
 * builds os.environ's dict). The strings stay for the process's life, as
 * putenv wants. 0, or -1: out of memory (environment unchanged). */
SBWARM_API int sbwarm_environ(const char *block, size_t len) {
  char *copy = malloc(len + 1);
  if (!copy) return -1;
  memcpy(copy, block, len);
  copy[len] = '\0';
  clearenv();
  for (char *e = copy; e < copy + len; e += strlen(e) + 1)
    if (strchr(e, '=')) putenv(e);
  return 0;
}
