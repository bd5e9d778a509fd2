/* ptrace and friends: PTRACE_TRACEME, attaching to pid 1 and to an own
 * child, process_vm_readv/writev on the child, opening /proc/1/mem. */
#include "hostile.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

int main(void) {
  long rc = ptrace(PTRACE_TRACEME, 0, NULL, NULL);
  result("traceme=%s", outcome(rc));

  if (getpid() != 1) {
    rc = ptrace(PTRACE_ATTACH, 1, NULL, NULL);
    result("attach_pid1=%s", outcome(rc));
    if (rc == 0) ptrace(PTRACE_DETACH, 1, NULL, NULL);
    int fd = open("/proc/1/mem", O_RDONLY);
    result("pid1_mem=%s", outcome(fd));
    if (fd >= 0) close(fd);
  } else {
    result("attach_pid1=SELF");
    result("pid1_mem=SELF");
  }

  static volatile int target = 42;
  pid_t child = fork();
  if (child == 0) {
    alarm(30);
    for (;;) pause();
  }
  rc = ptrace(PTRACE_ATTACH, child, NULL, NULL);
  result("attach_child=%s", outcome(rc));
  if (rc == 0) ptrace(PTRACE_DETACH, child, NULL, NULL);
  rc = ptrace(PTRACE_SEIZE, child, NULL, NULL);
  result("seize_child=%s", outcome(rc));

  int val = 0;
  struct iovec local = {&val, sizeof val}, remote = {(void *)&target, sizeof target};
  rc = process_vm_readv(child, &local, 1, &remote, 1, 0);
  result("process_vm_readv=%s", outcome(rc));
  rc = process_vm_writev(child, &local, 1, &remote, 1, 0);
  result("process_vm_writev=%s", outcome(rc));

  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  return 0;
}
