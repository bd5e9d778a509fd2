/* no_openat2 PROGRAM [ARGS...]: runs PROGRAM with openat2 answering ENOSYS,
 * as on a kernel before 5.6 or under an older container seccomp profile, so
 * that the daemon tests can cover the per-component fallback of wsfs.c. */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: no_openat2 PROGRAM [ARGS...]\n");
    return 2;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0) < 0 || seccomp_load(ctx) < 0) {
    fprintf(stderr, "no_openat2: cannot install the filter\n");
    return 2;
  }
  seccomp_release(ctx);
  execv(argv[1], argv + 1);
  perror(argv[1]);
  return 127;
}
