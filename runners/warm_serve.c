/* libsbwarm.so: the zygote's loop over the daemon's jobs, in C
 * (sbzygote_body.py _serve calls sbwarm_serve through ctypes.PyDLL, with
 * the GIL held, and it returns only for what Python must do).
 *
 * Why C: after each fork every page the zygote writes faults again (the
 * fork write-protected it), and the Python loop that received a job, parsed
 * its descriptors and called the steps below through ctypes wrote about 80
 * pages a job; a fault costs 10-15 us on a VM whose page tables the
 * hypervisor shadows (bench/RESULTS.md, stop 45). This loop writes its
 * stack, the inbox and the few words of the interpreter's own fork
 * bookkeeping, nothing of Python's heap.
 *
 * The fork is os.fork()'s: PyOS_BeforeFork, fork, PyOS_AfterFork_Child or
 * _Parent (the interpreter's at-fork hooks, import lock and thread state),
 * looked up at run time as sbwarm_audit_watch looks up its symbols.
 *
 * A request whose first four bytes are not "SBX\0" (the plain protocol:
 * tests, bench/warm_python.py) goes back to Python, which parses it in a
 * child (the zygote reads no job's words: issue 35). */
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

enum { SERVE_EOF = 0, SERVE_PLAIN = 1, SERVE_PROGRAM = 2, SERVE_AGAIN = 3, SERVE_NO_HOOKS = 4 };
enum { SERVE_MAX_FDS = 10 };

static void (*before_fork)(void), (*after_parent)(void), (*after_child)(void);

/* os.fork(): -1 with errno set, 0 in the child, its pid in the parent. */
static pid_t py_fork(void) {
  before_fork();
  pid_t pid = fork();
  int e = errno;
  if (pid == 0)
    after_child();
  else
    after_parent();
  errno = e;
  return pid;
}

static void close_all(const int *fds, int n) {
  for (int i = 0; i < n; i++) close(fds[i]);
}

/* Every descriptor of the job closed but its socket (fds[3]). */
static void keep_job_socket(const int *fds, int n) {
  for (int i = 0; i < n; i++)
    if (i != 3) close(fds[i]);
}

/* User-namespace mode (sbwarm_enter_pid said 1): a first fork enters every
 * namespace, its user namespace first, forks the program's process and
 * exits; the zygote, the subreaper, reaps the program. SERVE_PROGRAM in
 * the program's process; in the zygote, the job's socket left open. */
static int serve_twice(int jfd, int pidfd, int blob, const int *fds, int n) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) < 0) {
    sbwarm_refuse(jfd);
    keep_job_socket(fds, n);
    return SERVE_AGAIN;
  }
  pid_t first = py_fork();
  if (first == 0) {
    close(pipefd[0]);
    if (sbwarm_enter(jfd, pidfd, blob, 0) != 0) _exit(127);
    pid_t pid = py_fork();
    if (pid < 0) {
      sbwarm_refuse(jfd);
      _exit(127);
    }
    if (pid == 0) {
      close(pipefd[1]);
      sb_warm_join_early(fds + 6, n - 6);
      return SERVE_PROGRAM;
    }
    char word[16];
    int len = snprintf(word, sizeof word, "%d", (int)pid);
    while (write(pipefd[1], word, (size_t)len) < 0 && errno == EINTR) {
    }
    _exit(0);
  }
  close(pipefd[1]);
  keep_job_socket(fds, n);
  pid_t pid = 0;
  if (first > 0) {
    while (waitpid(first, NULL, 0) < 0 && errno == EINTR) {
    }
    char word[16] = {0};
    ssize_t got;
    while ((got = read(pipefd[0], word, sizeof word - 1)) < 0 && errno == EINTR) {
    }
    if (got > 0) pid = (pid_t)strtol(word, NULL, 10);
  }
  close(pipefd[0]);
  if (first < 0)
    sbwarm_refuse(jfd);
  else
    sbwarm_reap(jfd, pid); /* 0: the first fork died before its own: 127 */
  return SERVE_AGAIN;
}

/* One job of the daemon (sbzygote_body.py's _sandboxed, whose words this
 * keeps): SERVE_PROGRAM in the program's process, SERVE_AGAIN in the
 * zygote (every descriptor of the job closed). */
static int serve_job(const int *fds, int n, long bytes) {
  if (n < 6) { /* malformed: nobody to tell but the init, if its socket came */
    if (n > 3) sbwarm_refuse(fds[3]);
    close_all(fds, n);
    return SERVE_AGAIN;
  }
  int jfd = fds[3], pidfd = fds[4], blob = fds[5];
  if (bytes < 0) {
    sbwarm_refuse(jfd);
  } else if (sbwarm_await_go(jfd) == 0) {
    int born = sbwarm_enter_pid(jfd, pidfd, blob);
    if (born == 0) { /* one fork, born in the job's pid namespace */
      pid_t pid = py_fork();
      if (pid == 0) {
        if (sbwarm_enter(jfd, pidfd, blob, 1) != 0) _exit(127);
        sb_warm_join_early(fds + 6, n - 6);
        return SERVE_PROGRAM;
      }
      if (sbwarm_leave_pid() != 0) _exit(1); /* cannot happen (its own namespace): never serve again */
      keep_job_socket(fds, n);
      if (pid < 0)
        sbwarm_refuse(jfd);
      else
        sbwarm_reap(jfd, pid);
      close(jfd);
      return SERVE_AGAIN;
    }
    if (born == 1) { /* user-namespace mode: two forks */
      int r = serve_twice(jfd, pidfd, blob, fds, n);
      if (r == SERVE_PROGRAM) return r;
      close(jfd);
      return SERVE_AGAIN;
    }
    sbwarm_reap(jfd, 0); /* FAIL said */
  }
  close_all(fds, n);
  return SERVE_AGAIN;
}

/* The zygote's loop (ctl: its socket to the spawner; inbox: its private
 * anonymous mapping of inbox_len bytes, a request's max + 1). Returns
 *   SERVE_EOF      the spawner closed its end
 *   SERVE_PLAIN    a request for Python: *bytes received (-1: too long),
 *                  its descriptors in fds[*nfds]; the inbox's pages are
 *                  Python's to drop
 *   SERVE_PROGRAM  in the program's process: the job's descriptors in fds
 *   SERVE_AGAIN    a signal interrupted the wait (Python runs its handlers,
 *                  then calls again)
 *   SERVE_NO_HOOKS the interpreter has no PyOS_BeforeFork (older than
 *                  3.7): Python's own loop serves
 *   -errno         the socket failed
 * fds holds SERVE_MAX_FDS. The daemon's jobs never leave this function in
 * the zygote: each one's pages of the inbox are dropped before the next
 * fork, as Python's loop drops them. */
SBWARM_API int sbwarm_serve(int ctl, char *inbox, size_t inbox_len, int *fds, int *nfds, long *bytes) {
  if (!before_fork) {
    *(void **)&before_fork = dlsym(RTLD_DEFAULT, "PyOS_BeforeFork");
    *(void **)&after_parent = dlsym(RTLD_DEFAULT, "PyOS_AfterFork_Parent");
    *(void **)&after_child = dlsym(RTLD_DEFAULT, "PyOS_AfterFork_Child");
    if (!before_fork || !after_parent || !after_child) {
      before_fork = NULL;
      return SERVE_NO_HOOKS;
    }
  }
  for (;;) {
    union {
      char buf[CMSG_SPACE(SERVE_MAX_FDS * sizeof(int))];
      struct cmsghdr align;
    } control;
    struct iovec iov = {.iov_base = inbox, .iov_len = inbox_len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
    ssize_t got = recvmsg(ctl, &msg, 0);
    if (got < 0) return errno == EINTR ? SERVE_AGAIN : -errno;
    if (got == 0) return SERVE_EOF;
    int n = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < k && n < SERVE_MAX_FDS; i++) memcpy(&fds[n++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
    }
    long len = (size_t)got > inbox_len - 1 || (msg.msg_flags & MSG_TRUNC) ? -1 : (long)got;
    *nfds = n;
    *bytes = len;
    if (memcmp(inbox, "SBX", 4) != 0) return SERVE_PLAIN; /* (the only bytes of a request the zygote reads) */
    int r = serve_job(fds, n, len);
    if (r == SERVE_PROGRAM) return r;
    long page = sysconf(_SC_PAGESIZE);
    size_t filled = ((size_t)got | (size_t)(page - 1)) + 1;
    madvise(inbox, filled < inbox_len ? filled : inbox_len, MADV_DONTNEED);
  }
}
