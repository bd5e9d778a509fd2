/* The two ends of gdb for a traced C or C++ program (PROTOCOL.md "Traces",
 * "C and C++").
 * `sbtrace_launch -g GDB ARGS...` (the step's program) keeps the job's
 * standard streams as descriptors 10-12, gives gdb /dev/null as its own 0-2
 * (gdb prints stops and warnings there) and execs gdb, which passes on the
 * descriptors open at its start to what it runs.
 * `sbtrace_launch PROGRAM ARGV0 ARGS...` (what gdb runs) gives the program
 * back the job's streams, closes every other descriptor (the trace's too),
 * loads a seccomp filter that denies ptrace and its relatives (the job's
 * filter allows them for gdb only), and execs PROGRAM with ARGV. gdb
 * already traces this process (PTRACE_TRACEME before our exec), follows the
 * exec and debugs PROGRAM from its first instruction. Standard C and Linux
 * headers only: no library that the sandbox might lack. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __x86_64__
#error "sbtrace_launch: only x86-64's syscall numbers are listed"
#endif

#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)

static int deny_ptrace(void) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      /* x32 numbers (bit 30) would name the same calls */
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      DENY(SYS_ptrace),
      DENY(SYS_process_vm_readv),
      DENY(SYS_process_vm_writev),
      DENY(SYS_pidfd_getfd),
      DENY(SYS_process_madvise),
      DENY(SYS_kcmp),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return -1;
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

static void fail(const char *what) {
  /* on the job's stderr: kept as 12 by the outer end until the inner one
   * put it back on 2 (and closed 12) */
  int e = errno;
  dprintf(fcntl(12, F_GETFD) >= 0 ? 12 : 2, "sbtrace_launch: %s: %s\n", what, strerror(e));
  _exit(127);
}

static int outer(char **argv) {
  for (int fd = 0; fd < 3; fd++)
    if (dup2(fd, 10 + fd) < 0) fail("dup2");
  const char *debug = getenv("SURGEBOX_GDB_DEBUG");
  int null = open("/dev/null", O_RDWR);
  if (null < 0) fail("/dev/null");
  for (int fd = 0; fd < 3; fd++)
    if ((fd == 0 || !debug || strcmp(debug, "1") != 0) && dup2(null, fd) < 0) fail("dup2");
  if (null > 2) close(null);
  execv(argv[0], argv);
  fail(argv[0]);
  return 127;
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "-g") == 0) return outer(argv + 2);
  if (argc < 3) {
    errno = EINVAL;
    fail("usage: sbtrace_launch PROGRAM ARGV0 ARGS...");
  }
  for (int fd = 0; fd < 3; fd++)
    if (fcntl(10 + fd, F_GETFD) >= 0 && dup2(10 + fd, fd) < 0) fail("dup2");
  if (syscall(SYS_close_range, 3u, ~0u, 0u) < 0) fail("close_range");
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (deny_ptrace() < 0) fail("seccomp");
  execv(argv[1], argv + 2);
  fail(argv[1]);
  return 127;
}
