/* Inside the sandbox (child side). The clone()d process is pid 1 of a new
 * pid namespace: the sandbox init. Its whole life, in order:
 *
 *   1. (user-namespace mode) wait until the parent wrote our id maps;
 *   2. enter the shared empty network namespace; hostname "surgebox";
 *   3. build the private root and pivot into it (mounts.c), or, pooled,
 *      enter a copy of a prepared one and mount the job's own parts;
 *   4. join the job's cgroup (unless born in it, or the parent attaches
 *      us), READY to the parent, then wait for GO (so sandbox set-up is
 *      not charged to the program);
 *   5. unshare the cgroup namespace (its root is now the job's cgroup);
 *   6. start the program: stdio, rlimits, identity + capabilities,
 *      no_new_privs, seccomp, exec;
 *   7. drop our own capabilities; reap every child until the program itself
 *      exits; report its wait status, times and rusage; exit. The kernel then
 *      kills whatever the program left running in the namespace.
 *
 * Why an init at all: pid 1 ignores signals it has no handler for, so a
 * program run as pid 1 would survive its own abort(); and orphans need a
 * reaper. Rules here: no malloc, no stdio (the parent may be threaded). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void send_msg(int fd, const sb_msg *m) {
  while (send(fd, m, sizeof *m, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

static __attribute__((noreturn)) void die(int fd, const char *what, int err) {
  sb_msg m;
  memset(&m, 0, sizeof m);
  m.type = SB_MSG_ERROR;
  snprintf(m.text, sizeof m.text, "%s: %s", what, strerror(err));
  send_msg(fd, &m);
  _exit(127);
}

static int wait_for(int fd, int type) {
  sb_msg m;
  for (;;) {
    ssize_t n = recv(fd, &m, sizeof m, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n != (ssize_t)sizeof m) return -EPIPE;
    if (m.type == type) return 0;
  }
}

/* PATH lookup against the *job's* environment (execvpe would use ours). */
static void exec_in_path(const char *const *argv, const char *const *envp) {
  const char *file = argv[0];
  if (strchr(file, '/')) {
    execve(file, (char *const *)argv, (char *const *)envp);
    return;
  }
  const char *path = "/usr/local/bin:/usr/bin:/bin";
  for (const char *const *e = envp; e && *e; e++)
    if (strncmp(*e, "PATH=", 5) == 0) path = *e + 5;
  int saved = ENOENT;
  for (const char *p = path;; p++) {
    const char *end = strchrnul(p, ':');
    char full[PATH_MAX];
    int len = snprintf(full, sizeof full, "%.*s%s%s", (int)(end - p), p, end == p ? "" : "/", file);
    if (len > 0 && len < (int)sizeof full) {
      execve(full, (char *const *)argv, (char *const *)envp);
      if (errno != ENOENT && errno != ENOTDIR) saved = errno;
    }
    if (*end == '\0') break;
    p = end;
  }
  errno = saved;
}

/* The program (child of the init). Reports a failed start through err_fd, a
 * close-on-exec pipe that a successful exec closes silently; err_fd is
 * above 2 (see sb_child_main), so the dup2()s below cannot replace it. Its
 * steps up to the exec are program.c's, shared with a warm start. */
static __attribute__((noreturn)) void program(const sb_plan *a, int err_fd) {
  const char *what = "setup";
  int rc = sb_program_setup(a, &err_fd, &what);
  if (!rc) {
    exec_in_path(a->argv, a->envp);
    what = "exec";
    rc = -errno;
  }
  sb_program_failed(err_fd, what, rc);
}

/* clone()'s entry for the program: the descriptors only the init keeps are
 * closed in the program's own descriptor table (no CLONE_FILES). */
struct program_start {
  const sb_plan *a;
  int err_fd;
  int close_fds[2];
};

static int program_entry(void *arg) {
  const struct program_start *ps = arg;
  close(ps->close_fds[0]);
  close(ps->close_fds[1]);
  program(ps->a, ps->err_fd);
}

/* The program's stack until its exec: PATH lookup's PATH_MAX buffer and
 * libc's formatting need a few kB; only the pages it touches are faulted. */
#define PROGRAM_STACK_BYTES (64 * 1024)

/* The init is a clone of the spawner (spawner_serve.c) and starts with
 * copies of its descriptors: its socket to the daemon and this request's.
 * Keep only ours, so that nothing outside lives on in a sandbox. */
static void close_all_except(const int *keep, int n) {
  int sorted[SB_PLAN_NFD];
  int m = 0;
  for (int i = 0; i < n && m < SB_PLAN_NFD; i++)
    if (keep[i] >= 0) sorted[m++] = keep[i];
  for (int i = 1; i < m; i++) /* insertion sort: a dozen */
    for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
      int t = sorted[j];
      sorted[j] = sorted[j - 1];
      sorted[j - 1] = t;
    }
  unsigned lo = 0;
  for (int i = 0; i < m; i++) {
    if ((unsigned)sorted[i] > lo) syscall(SYS_close_range, lo, (unsigned)sorted[i] - 1, 0);
    lo = (unsigned)sorted[i] + 1;
  }
  syscall(SYS_close_range, lo, ~0u, 0);
}

/* The init is a clone of the spawner, so /proc/1/cmdline (readable by
 * the program) would show the spawner's command line; it is named
 * surgebox-init instead. The argument strings are our own copy-on-write pages:
 * overwrite them in place (their bounds are fields 48-49 of
 * /proc/self/stat). Runs before the pivot, while the host /proc is there. */
static void hide_supervisor_cmdline(void) {
  static const char name[] = "surgebox-init";
  prctl(PR_SET_NAME, name, 0, 0, 0);
  char buf[2048];
  int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  if (fd >= 0) close(fd);
  if (n <= 0) return;
  buf[n] = '\0';
  char *p = strrchr(buf, ')'); /* the command name may hold spaces */
  if (!p) return;
  unsigned long start = 0, end = 0;
  int field = 2;
  for (p++; *p && field < 49;) { /* fields are separated by single spaces */
    while (*p == ' ') p++;
    field++;
    if (field == 48) start = strtoul(p, NULL, 10);
    if (field == 49) end = strtoul(p, NULL, 10);
    while (*p && *p != ' ') p++;
  }
  if (!start || end <= start + sizeof name) return;
  memset((void *)start, 0, end - start);
  memcpy((void *)start, name, sizeof name);
}

/* Move fd above 2 (keeping O_CLOEXEC) if it landed on 0-2. */
static int above_stdio(int fd) {
  if (fd > 2) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return moved;
}

static void on_sigchld(int s) { (void)s; }

static void add_tv(struct timeval *to, struct timeval by) {
  to->tv_sec += by.tv_sec;
  to->tv_usec += by.tv_usec;
  if (to->tv_usec >= 1000000) {
    to->tv_sec++;
    to->tv_usec -= 1000000;
  }
}

/* The zygote ended without the program's EXIT. Whether the program ever
 * started is the kernel's word: the job's pid namespace numbers its
 * processes from 1 (us), so a last pid of 1 means no process was ever born
 * in it, and the program (which the zygote forks into it, after our GO)
 * never ran: the daemon runs the job again, cold (warm_lost). Anything
 * else is an internal error; our exit kills what was started. */
static __attribute__((noreturn)) void zygote_gone(int ctl, const char *when) {
  sb_msg e;
  memset(&e, 0, sizeof e);
  e.type = SB_MSG_ERROR;
  char last[32] = "";
  int fd = open("/proc/sys/kernel/ns_last_pid", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, last, sizeof last - 1) : -1;
  if (fd >= 0) close(fd);
  e.warm_lost = n > 0 && strtol(last, NULL, 10) == 1;
  snprintf(e.text, sizeof e.text, "warm zygote gone %s (no exit status)%s", when,
           e.warm_lost ? ": no process of the job was ever started" : ": restarted for the next job");
  send_msg(ctl, &e);
  _exit(127);
}

/* A warm run (warm.c): no program of ours. GO to the zygote (our cgroup
 * namespace exists now), then, reaping what the program orphans as for a
 * cold run, wait for its FAIL and the zygote's EXIT; DONE with its status
 * and rusage (the zygote's wait4, plus the orphans we reaped). The zygote
 * gone without EXIT is an internal error: our exit kills the program. */
static __attribute__((noreturn)) void warm_wait(const sb_plan *a, int ctl) {
  close(a->stdin_fd);
  close(a->stdout_fd);
  close(a->stderr_fd);
  sb_msg done;
  memset(&done, 0, sizeof done);
  done.type = SB_MSG_DONE;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigchld; /* no SA_RESTART: ppoll returns */
  sigaction(SIGCHLD, &sa, NULL);
  sigset_t chld, none;
  sigemptyset(&chld);
  sigemptyset(&none);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  sb_warm_msg m;
  memset(&m, 0, sizeof m);
  m.type = SB_WARM_GO;
  done.start_ns = sbu_now_ns();
  if (send(a->warm_fd, &m, sizeof m, MSG_NOSIGNAL) != (ssize_t)sizeof m) zygote_gone(ctl, "before the job");
  const char *w = NULL;
  sb_caps_drop_keep_uid(a->empty_caps, &w); /* as after a cold program's start */
  for (;;) {
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    struct pollfd pf = {.fd = a->warm_fd, .events = POLLIN};
    int r = ppoll(&pf, 1, NULL, &none);
    if (r < 0) continue; /* EINTR: a SIGCHLD */
    ssize_t n = recv(a->warm_fd, &m, sizeof m, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n != (ssize_t)sizeof m) zygote_gone(ctl, "during the job");
    if (m.type == SB_WARM_FAIL && m.internal) { /* not the program's: our exit kills whatever was started */
      m.fail.what[sizeof m.fail.what - 1] = '\0';
      sb_msg e;
      memset(&e, 0, sizeof e);
      e.type = SB_MSG_ERROR;
      snprintf(e.text, sizeof e.text, "warm start: %s: %s", m.fail.what, strerror(m.fail.err));
      send_msg(ctl, &e);
      _exit(127);
    }
    if (m.type == SB_WARM_FAIL && m.fail.err > 0) {
      done.exec_errno = m.fail.err;
      m.fail.what[sizeof m.fail.what - 1] = '\0';
      memcpy(done.text, m.fail.what, sizeof m.fail.what);
    }
    if (m.type == SB_WARM_EXIT) break;
  }
  done.end_ns = sbu_now_ns();
  done.wstatus = m.wstatus;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
  getrusage(RUSAGE_CHILDREN, &done.children);
  add_tv(&done.children.ru_utime, m.ru.ru_utime);
  add_tv(&done.children.ru_stime, m.ru.ru_stime);
  if (m.ru.ru_maxrss > done.children.ru_maxrss) done.children.ru_maxrss = m.ru.ru_maxrss;
  send_msg(ctl, &done);
  _exit(0);
}

/* A session (and process group) of our own, before anything else:
 * kill(0, ...), setpriority(PRIO_PGRP, 0, ...) and ioprio_set(WHO_PGRP)
 * address the caller's group whatever pid namespace it is in, so a
 * program sharing the supervisor's group would reach the supervisor's
 * caller and, in the daemon, every other job. Also drops the caller's
 * controlling terminal. We are never a group leader here (a fresh clone).
 * Then only the plan's descriptors, and our death with the parent's. */
static void session_phase(const sb_plan *a) {
  if (setsid() < 0) die(a->ctl_fd, "setsid", errno);
  close_all_except(a->fds, SB_PLAN_NFD);
  /* If the parent dies, so does the sandbox: the kernel then kills the
   * whole pid namespace with us. A parent that died before the prctl is
   * noticed below: the control socket reads EOF and we exit. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) die(a->ctl_fd, "PR_SET_PDEATHSIG", errno);
}

static void namespaces_phase(const sb_plan *a) {
  int ctl = a->ctl_fd;
  if (a->userns && wait_for(ctl, SB_MSG_MAPPED) < 0) _exit(127);
  if (a->netns_fd >= 0 && setns(a->netns_fd, CLONE_NEWNET) < 0) die(ctl, "setns(net)", errno);
  hide_supervisor_cmdline();
  int rc = sb_ns_uts_setup();
  if (rc < 0) die(ctl, "sethostname", -rc);
}

static void mounts_phase(const sb_plan *a) {
  char what[SB_ERR_MAX];
  int mrc = a->tmpl_fd >= 0 ? sb_mounts_enter_template(&a->mounts, a->tmpl_fd, a->app_tree_fd, what, sizeof what)
                            : sb_mounts_build_root(&a->mounts, what, sizeof what);
  if (a->tmpl_fd >= 0) close(a->tmpl_fd);
  if (a->app_tree_fd >= 0) close(a->app_tree_fd);
  if (mrc < 0) {
    sb_msg m;
    memset(&m, 0, sizeof m);
    m.type = SB_MSG_ERROR;
    snprintf(m.text, sizeof m.text, "%s", what);
    send_msg(a->ctl_fd, &m);
    _exit(127);
  }
}

/* Into the job's cgroup ourselves, after set-up (mounts and pivot are not
 * the program's CPU time): on cgroup v1 the write takes the host-wide
 * cgroup_threadgroup_rwsem and can wait for readers and an RCU grace
 * period; the daemon's loop thread waited there ~0.4 ms a job when it
 * attached us at READY. Then READY, GO, and the cgroup namespace (its root
 * is now the job's cgroup). */
static void cgroup_phase(const sb_plan *a) {
  int ctl = a->ctl_fd;
  for (int i = 0; i < SB_PLAN_PROCS; i++) {
    if (a->procs_fd[i] < 0) continue;
    if (pwrite(a->procs_fd[i], "0", 1, 0) < 0) die(ctl, "joining the job's cgroup (cgroup.procs)", errno);
    close(a->procs_fd[i]);
  }
  sb_msg ready;
  memset(&ready, 0, sizeof ready);
  ready.type = SB_MSG_READY;
  send_msg(ctl, &ready);
  if (wait_for(ctl, SB_MSG_GO) < 0) _exit(127);
  if (unshare(CLONE_NEWCGROUP) < 0) die(ctl, "unshare(cgroup)", errno);
}

/* The program's error pipe: close_all_except() closed the supervisor's 0-2
 * (the program's stdio are other descriptors until its dup2()s), so a new
 * pipe would land on 0 and 1, and the program's dup2(stdout, 1) would
 * replace the error pipe: its report then went into the program's
 * recorded stdout. */
static void error_pipe(int ctl, int errpipe[2]) {
  if (pipe2(errpipe, O_CLOEXEC) < 0) die(ctl, "pipe", errno);
  errpipe[0] = above_stdio(errpipe[0]);
  errpipe[1] = above_stdio(errpipe[1]);
  if (errpipe[0] < 0 || errpipe[1] < 0) die(ctl, "pipe", errno);
}

/* The program starts as a vfork-style child (CLONE_VM | CLONE_VFORK) on
 * a stack of its own: the init is a copy of the spawner's address space
 * (small: HACKING.md, "The spawner"), and a fork would copy its page
 * tables only for the exec to throw them away (bench/FINDINGS.md, issue
 * 16). At the exec the kernel records the init's largest RSS as the
 * program's own maxrss, which is why the init must not be a copy of the
 * daemon. We stay suspended until the program's exec or its _exit, so
 * nothing here runs while it uses our memory; it writes only its own stack
 * and our errno. glibc's clone() runs no atfork handlers (malloc locks
 * copied from a threaded parent could be held forever). */
static pid_t program_phase(const sb_plan *a, const int errpipe[2]) {
  struct program_start ps = {.a = a, .err_fd = errpipe[1], .close_fds = {errpipe[0], a->ctl_fd}};
  /* Carved from our own stack, not a static buffer: a sanitizer runtime
   * checks that a stack lies within the thread's, and ASan's complaint at a
   * failed exec's _exit went into the program's stderr (daemon.exec_failure
   * under ASan). The program has exec'd or exited when clone returns
   * (CLONE_VFORK): it never runs on this frame after we leave it. */
  char *program_stack = __builtin_alloca(PROGRAM_STACK_BYTES);
  pid_t pid = clone(program_entry, program_stack + PROGRAM_STACK_BYTES, CLONE_VM | CLONE_VFORK | SIGCHLD, &ps);
  if (pid < 0) die(a->ctl_fd, "start program", errno);
  return pid;
}

/* Our ends of what the program holds closed; its start failure, if any,
 * into done. */
static void started_phase(const sb_plan *a, const int errpipe[2], sb_msg *done) {
  close(errpipe[1]);
  close(a->stdin_fd);
  close(a->stdout_fd);
  close(a->stderr_fd);
  if (a->trace_fd >= 0) close(a->trace_fd); /* the program's end of it reads EOF when the program is gone */
  sb_start_failure f;
  memset(&f, 0, sizeof f);
  ssize_t got;
  while ((got = read(errpipe[0], &f, sizeof f)) < 0 && errno == EINTR) {
  }
  close(errpipe[0]);
  if (got == (ssize_t)sizeof f && f.err > 0) {
    done->exec_errno = f.err;
    f.what[sizeof f.what - 1] = '\0';
    memcpy(done->text, f.what, sizeof f.what);
  }
}

/* Reap every child until the program itself exits; DONE with its status
 * and the rusage of all we reaped. */
static __attribute__((noreturn)) void reap_phase(int ctl, pid_t pid, sb_msg *done) {
  for (;;) {
    int st;
    pid_t r = waitpid(-1, &st, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break; /* ECHILD: cannot happen before the program was reaped */
    if (r == pid) {
      done->end_ns = sbu_now_ns();
      done->wstatus = st;
      break;
    }
  }
  getrusage(RUSAGE_CHILDREN, &done->children);
  send_msg(ctl, done);
  _exit(0);
}

void sb_child_main(const sb_plan *a) {
  session_phase(a);
  namespaces_phase(a);
  mounts_phase(a);
  cgroup_phase(a);
  if (a->warm_fd >= 0) warm_wait(a, a->ctl_fd);
  int errpipe[2];
  error_pipe(a->ctl_fd, errpipe);
  sb_msg done;
  memset(&done, 0, sizeof done);
  done.type = SB_MSG_DONE;
  done.start_ns = sbu_now_ns();
  pid_t pid = program_phase(a, errpipe);
  started_phase(a, errpipe, &done);
  const char *w = NULL;
  if (sb_caps_drop_keep_uid(a->empty_caps, &w) < 0) {
    /* Not fatal for the result; the program already runs unprivileged. */
  }
  reap_phase(a->ctl_fd, pid, &done);
}
