/* Build shim for Debian 11 (bullseye): glibc 2.31 and Linux 5.10 UAPI headers.
 *
 * docker/Dockerfile.surge-2025 force-includes this file (-include) and puts
 * include/ first on the search path; the normal build never sees either.
 * surgebox is written against glibc >= 2.34 and Linux >= 5.12 headers; on
 * bullseye these names are missing (checked by compiling every source with
 * bullseye's libc6-dev 2.31, linux-libc-dev 5.10, libjson-c-dev 0.15,
 * libseccomp-dev 2.5.1, libuv1-dev 1.40, libcap-dev 2.44, nettle-dev 3.7):
 *   SYS_close_range, CLOSE_RANGE_CLOEXEC   runners/child.c   (Linux 5.9/5.11)
 *   SYS_mount_setattr, struct mount_attr   runners/mounts.c  (Linux 5.12)
 *   OPEN_TREE_*, MOVE_MOUNT_*              runners/pool.c, mounts.c (Linux 5.2,
 *                                          in include/linux/mount.h, which
 *                                          replaces the real one)
 *   SYS_openat2                            runners/wsfs.c    (Linux 5.6)
 *   sigabbrev_np                           runners/accounting.c, result.c (glibc 2.32)
 *   SYS_pidfd_getfd, SYS_process_madvise   toolchains/tracers/gdb/sbtrace_launch.c
 *                                          (Linux 5.6/5.10; glibc 2.31 lacks their names)
 * tests/docker/bullseye_headers.py compiles every source so in CI
 * (docker.bullseye_headers). Only names are supplied here: what the kernel offers is decided at run
 * time by the host's kernel, which Docker shares with every image. */
#ifndef SURGEBOX_BULLSEYE_COMPAT_H
#define SURGEBOX_BULLSEYE_COMPAT_H

#include <signal.h>
#include <stddef.h>
#include <sys/syscall.h>

/* Syscall numbers from 424 on are the same on every architecture. */
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* glibc 2.32's sigabbrev_np: the abbreviation without "SIG", or NULL. */
static inline const char *surgebox_compat_sigabbrev_np(int sig) {
  switch (sig) {
  case SIGHUP: return "HUP";
  case SIGINT: return "INT";
  case SIGQUIT: return "QUIT";
  case SIGILL: return "ILL";
  case SIGTRAP: return "TRAP";
  case SIGABRT: return "ABRT";
  case SIGBUS: return "BUS";
  case SIGFPE: return "FPE";
  case SIGKILL: return "KILL";
  case SIGUSR1: return "USR1";
  case SIGSEGV: return "SEGV";
  case SIGUSR2: return "USR2";
  case SIGPIPE: return "PIPE";
  case SIGALRM: return "ALRM";
  case SIGTERM: return "TERM";
  case SIGSTKFLT: return "STKFLT";
  case SIGCHLD: return "CHLD";
  case SIGCONT: return "CONT";
  case SIGSTOP: return "STOP";
  case SIGTSTP: return "TSTP";
  case SIGTTIN: return "TTIN";
  case SIGTTOU: return "TTOU";
  case SIGURG: return "URG";
  case SIGXCPU: return "XCPU";
  case SIGXFSZ: return "XFSZ";
  case SIGVTALRM: return "VTALRM";
  case SIGPROF: return "PROF";
  case SIGWINCH: return "WINCH";
  case SIGIO: return "IO";
  case SIGPWR: return "PWR";
  case SIGSYS: return "SYS";
  default: return NULL;
  }
}
#define sigabbrev_np surgebox_compat_sigabbrev_np

#endif
