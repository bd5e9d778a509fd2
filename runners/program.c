/* The program's own steps up to its start (child side), in the order a cold
 * job takes them: oom_score_adj, stdio, the trace descriptor, every other
 * descriptor close-on-exec, default signals, the working directory,
 * rlimits, identity and capabilities, seccomp. child.c runs them in the
 * init's program before its exec; a warm child (warm_lib.c, issue 25) runs
 * the same function in the zygote's fork before the program's module frame.
 * Rules of code in the child: no malloc, no stdio. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

/* A "Key:\tHEX" mask of /proc/self/status, or all ones when it is not there. */
static uint64_t status_mask(const char *status, const char *key) {
  const char *p = strstr(status, key);
  if (!p) return ~0ull;
  char *end;
  unsigned long long v = strtoull(p + strlen(key), &end, 16);
  return end == p + strlen(key) ? ~0ull : (uint64_t)v;
}

/* Default signal dispositions (the spawner, whose copy we are, ignores
 * SIGPIPE). exec resets a caught signal's handler but not an ignored one,
 * and a warm child starts without an exec: /proc/self/status names both
 * sets (SigIgn, SigCgt), so reset just those, not all 64 (a syscall each,
 * on every job's path to its program); all of them when it cannot say. */
static void default_signals(void) {
  char status[4096];
  uint64_t m = ~0ull;
  if (sb_read_file("/proc/self/status", status, sizeof status) > 0)
    m = status_mask(status, "\nSigIgn:\t") | status_mask(status, "\nSigCgt:\t");
  for (int s = 1; s < NSIG && s <= 64; s++)
    if (m >> (s - 1) & 1) signal(s, SIG_DFL);
}

int sb_program_setup(const sb_plan *a, int *err_fd, const char **what) {
  int rc = 0;
  /* The init is protected from the OOM killer (oom_score_adj -1000, set by
   * the parent; we inherited it); the program must not be: back to 0,
   * written while we may still hold CAP_SYS_RESOURCE, which also raises
   * oom_score_adj_min to 0 so the program cannot lower it again. Where the
   * parent could not lower it (no CAP_SYS_RESOURCE), make the program the
   * preferred victim instead (raising needs no capability, but the program
   * may undo it: the verdict then rests on the cgroup's OOM count).
   * User-namespace mode: left alone. */
  if (!a->userns) {
    char adj[16];
    bool protected_init = sb_read_file("/proc/self/oom_score_adj", adj, sizeof adj) > 0 && strncmp(adj, "-1000", 5) == 0;
    sb_write_file("/proc/self/oom_score_adj", protected_init ? "0" : "1000");
  }
  if (dup2(a->stdin_fd, 0) < 0 || dup2(a->stdout_fd, 1) < 0 || dup2(a->stderr_fd, 2) < 0) {
    *what = "dup2";
    rc = -errno;
  }
  /* A traced run: the trace pipe becomes SB_TRACE_FD (3), inherited by the
   * program; the error pipe may sit there and moves up first. */
  unsigned first_closed = 3;
  if (!rc && a->trace_fd >= 0) {
    if (*err_fd == SB_TRACE_FD) *err_fd = fcntl(*err_fd, F_DUPFD_CLOEXEC, SB_TRACE_FD + 1);
    if (*err_fd < 0 || (a->trace_fd == SB_TRACE_FD ? fcntl(SB_TRACE_FD, F_SETFD, 0) : dup2(a->trace_fd, SB_TRACE_FD)) < 0) {
      *what = "trace fd";
      rc = -errno;
    }
    first_closed = SB_TRACE_FD + 1;
  }
  if (!rc && syscall(SYS_close_range, first_closed, ~0u, CLOSE_RANGE_CLOEXEC) < 0) {
    *what = "close_range";
    rc = -errno;
  }
  if (!rc) {
    default_signals();
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
  }
  if (!rc && chdir(a->cwd) < 0) {
    *what = "chdir";
    rc = -errno;
  }
  if (!rc) rc = sb_limits_apply(a->limits, &a->rlimits, what);
  if (!rc) rc = sb_caps_drop_all(a->uid, a->gid, !a->userns, a->empty_caps, what);
  if (!rc && sb_seccomp_load(a->filter) < 0) {
    *what = "seccomp";
    rc = -errno;
  }
  return rc;
}

void sb_program_failed(int err_fd, const char *what, int rc) {
  /* Nothing ran: nothing goes to the program's stdout or stderr. The
   * parent turns this into the result's error. */
  sb_start_failure f;
  memset(&f, 0, sizeof f);
  f.err = -rc;
  snprintf(f.what, sizeof f.what, "%s", what);
  if (write(err_fd, &f, sizeof f) < 0) {
  }
  /* as a shell: 126 found but not executable (no execute permission, not a
   * program), 127 everything else (not found, a set-up step) */
  _exit(strcmp(what, "exec") == 0 && (-rc == EACCES || -rc == ENOEXEC || -rc == EPERM) ? 126 : 127);
}
