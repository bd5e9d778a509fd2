/* Fork bomb.
 *   forkbomb count    the parent forks sleeping children until fork() fails,
 *                     reports how many it got and why it stopped, then exits
 *                     leaving the children behind for the sandbox to clean up.
 *   forkbomb classic  every process forks forever (until the wall limit).
 *   forkbomb hold S   like count, then the parent stays S seconds (< 60) so
 *                     the children keep counting against the uid.
 * Bounded: never more than CAP successful forks in all, children die by
 * alarm() after 60 s even if nothing else kills them. */
#include "hostile.h"

#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <sys/mman.h>

#define CAP 2000

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "count";
  alarm(60);
  bool hold = strcmp(mode, "hold") == 0;
  if (strcmp(mode, "count") == 0 || hold) {
    int n = 0, err = 0;
    while (n < CAP) {
      pid_t p = fork();
      if (p < 0) {
        err = errno;
        break;
      }
      if (p == 0) {
        alarm(60);
        for (;;) pause();
      }
      n++;
    }
    result("forks=%d", n);
    result("fork_errno=%s", errname(err));
    int secs = hold && argc > 2 ? atoi(argv[2]) : 0;
    if (secs > 0) sleep((unsigned)(secs < 60 ? secs : 59));
    return 0;
  }

  struct shared {
    atomic_int forks, failures, reported;
  } *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) {
    result("mmap=%s", errname(errno));
    return 1;
  }
  result("classic=start");
  for (;;) {
    if (atomic_load(&sh->forks) >= CAP) {
      if (atomic_exchange(&sh->reported, 2) != 2) result("capped=%d", CAP);
      pause();
    }
    pid_t p = fork();
    if (p == 0) {
      alarm(60);
      continue;
    }
    if (p > 0) {
      atomic_fetch_add(&sh->forks, 1);
    } else {
      int e = errno;
      if (atomic_fetch_add(&sh->failures, 1) == 0) {
        result("first_fork_errno=%s", errname(e));
        result("forks_before_failure=%d", atomic_load(&sh->forks));
      }
    }
  }
}
