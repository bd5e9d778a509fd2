/* Attacks on the process group and session the program was started in.
 * kill(0, ...), setpriority(PRIO_PGRP, 0, ...) and ioprio_set(IOPRIO_WHO_PGRP,
 * 0, ...) address the caller's process group by its kernel object, not by a
 * pid the caller's pid namespace can see: if the sandbox shared a group with
 * processes outside it, they would be hit.
 *
 *   pgrp info    report sid/pgid as seen inside (0: the leader is outside)
 *   pgrp kill    kill(0, SIGKILL)  (kills this program too)
 *   pgrp stop    kill(0, SIGSTOP)  (stops this program too)
 *   pgrp prio    setpriority(PRIO_PGRP, 0, 19)
 *   pgrp ioprio  ioprio_set(IOPRIO_WHO_PGRP, 0, IDLE)
 *
 * An optional second argument: seconds to sleep before the attack (so that
 * a test can place processes in the caller's group first). */
#include "hostile.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#define IOPRIO_WHO_PGRP 2
#define IOPRIO_CLASS_IDLE 3
#define IOPRIO_CLASS_SHIFT 13

int main(int argc, char **argv) {
  const char *attack = argc > 1 ? argv[1] : "info";
  result("pid=%d", (int)getpid());
  result("sid=%d", (int)getsid(0));
  result("pgid=%d", (int)getpgid(0));
  if (argc > 2) usleep((useconds_t)(atof(argv[2]) * 1e6));
  if (strcmp(attack, "kill") == 0) {
    result("attack=kill");
    long rc = kill(0, SIGKILL);
    result("kill0=%s", outcome(rc)); /* only reached if the kill missed us */
  } else if (strcmp(attack, "stop") == 0) {
    result("attack=stop");
    long rc = kill(0, SIGSTOP);
    result("stop0=%s", outcome(rc));
  } else if (strcmp(attack, "prio") == 0) {
    long rc = setpriority(PRIO_PGRP, 0, 19);
    result("setpriority=%s", outcome(rc));
  } else if (strcmp(attack, "ioprio") == 0) {
    long rc = syscall(SYS_ioprio_set, IOPRIO_WHO_PGRP, 0, IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT);
    result("ioprio_set=%s", outcome(rc));
  }
  result("survived=yes");
  return 0;
}
