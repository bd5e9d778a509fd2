/* inotify watches on files of the read-only binds.
 *   watcher SECS PATH...
 * Watches each path for opens, reads and closes (IN_OPEN | IN_ACCESS |
 * IN_CLOSE_NOWRITE), reports how many watches it got, then counts the
 * events that arrive within SECS seconds: on a file that shares the host's
 * inode those are the host's and other jobs' opens and reads. The program
 * itself never touches the watched files after adding the watches. */
#include "hostile.h"

#include <poll.h>
#include <sys/inotify.h>
#include <time.h>

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int secs = atoi(argv[1]);
  if (secs <= 0 || secs > 60) secs = 5;
  int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0) {
    result("init=%s", errname(errno));
    return 0;
  }
  int watches = 0;
  for (int i = 2; i < argc; i++) {
    int wd = inotify_add_watch(fd, argv[i], IN_OPEN | IN_ACCESS | IN_CLOSE_NOWRITE);
    result("watch.%d=%s", i - 1, outcome(wd));
    if (wd >= 0) watches++;
  }
  result("watches=%d", watches);
  long events = 0;
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    long left = (long)secs * 1000 - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
    if (left <= 0) break;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, (int)left) <= 0) continue;
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
      for (char *q = buf; q < buf + n; q += sizeof(struct inotify_event) + ((struct inotify_event *)q)->len) events++;
  }
  result("events=%ld", events);
  return 0;
}
