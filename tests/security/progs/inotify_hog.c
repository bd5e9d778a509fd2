/* Per-uid inotify instances (fs.inotify.max_user_instances).
 *   inotify_hog hog SECS  take instances until the kernel refuses, report how
 *                         many and why, then hold them SECS seconds
 *   inotify_hog one       take a single instance and report the outcome
 * Two jobs sharing a uid share that limit: a hog starves its neighbour. */
#include "hostile.h"

#include <sys/inotify.h>

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "one") == 0) {
    result("one=%s", outcome(inotify_init1(IN_CLOEXEC)));
    return 0;
  }
  int secs = argc >= 3 ? atoi(argv[2]) : 5;
  int n = 0, rc = 0;
  while (n < 100000 && (rc = inotify_init1(IN_CLOEXEC)) >= 0) n++; /* cap far above any default */
  result("hogged=%d", n);
  result("hog_stop=%s", rc < 0 ? errname(errno) : "cap");
  sleep((unsigned)(secs > 0 && secs < 60 ? secs : 5));
  return 0;
}
