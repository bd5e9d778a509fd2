/* flock(2) on a read-only file of the sandbox (default /etc/passwd).
 *   flocker hold SECS [PATH]  LOCK_EX (blocking), report, hold SECS seconds
 *   flocker try [PATH]        LOCK_EX|LOCK_NB once and report the outcome
 * On a read-only bind of a host file the lock is on the host's inode: the
 * host and every other job would wait for it. */
#include "hostile.h"

#include <fcntl.h>
#include <stdbool.h>
#include <sys/file.h>

int main(int argc, char **argv) {
  bool hold = argc >= 2 && strcmp(argv[1], "hold") == 0;
  const char *path = hold ? (argc >= 4 ? argv[3] : "/etc/passwd") : (argc >= 3 ? argv[2] : "/etc/passwd");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    result("open=%s", errname(errno));
    return 1;
  }
  if (!hold) {
    result("try=%s", outcome(flock(fd, LOCK_EX | LOCK_NB)));
    return 0;
  }
  result("held=%s", outcome(flock(fd, LOCK_EX)));
  int secs = argc >= 3 ? atoi(argv[2]) : 5;
  sleep((unsigned)(secs > 0 && secs < 60 ? secs : 5));
  return 0;
}
