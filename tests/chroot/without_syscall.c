/* without_syscall NAME PROGRAM [ARGS...]: runs PROGRAM with the system call
 * NAME answering ENOSYS (as on an older kernel or under a container's
 * seccomp profile), so that a test can break one mechanism of the daemon
 * (move_mount: the pool; pivot_root: every sandbox) and watch its
 * self-proof at start. */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: without_syscall NAME PROGRAM [ARGS...]\n");
    return 2;
  }
  int nr = seccomp_syscall_resolve_name(argv[1]);
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (nr == __NR_SCMP_ERROR || !ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0) < 0 ||
      seccomp_load(ctx) < 0) {
    fprintf(stderr, "without_syscall: cannot deny %s\n", argv[1]);
    return 2;
  }
  seccomp_release(ctx);
  execv(argv[2], argv + 2);
  perror(argv[2]);
  return 127;
}
