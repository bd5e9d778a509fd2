/* kill(-1, SIGKILL) from inside the sandbox: it must only reach the sandbox's
 * own processes (here an own child, which must die), never anything outside.
 * Also tries SIGKILL on pid 1 (the sandbox's init) and reports it survived. */
#include "hostile.h"

#include <signal.h>
#include <sys/wait.h>

int main(void) {
  pid_t child = fork();
  if (child == 0) {
    alarm(30);
    for (;;) pause();
  }
  usleep(100 * 1000);
  int rc = kill(-1, SIGKILL);
  result("kill_all=%s", outcome(rc));
  int st = 0;
  pid_t w = waitpid(child, &st, 0);
  result("child_killed=%s", (w == child && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) ? "yes" : "no");
  if (getpid() != 1) {
    rc = kill(1, SIGKILL);
    result("kill_pid1=%s", outcome(rc));
    usleep(100 * 1000);
    result("pid1_alive=%s", kill(1, 0) == 0 || errno == EPERM ? "yes" : "no");
  }
  result("survived=yes");
  return 0;
}
