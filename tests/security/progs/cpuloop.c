/* Busy loop burning CPU until the CPU limit (capped at 60 s of CPU).
 *   cpuloop [NPROCS]   NPROCS processes spin in parallel (default 1). */
#include "hostile.h"

#include <time.h>

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1;
  if (n > 8) n = 8;
  alarm(90);
  for (int i = 1; i < n; i++) {
    if (fork() == 0) break;
  }
  result("spinning=1");
  volatile unsigned long x = 0;
  while (cpu_now() < 60.0) {
    for (int i = 0; i < 1000000; i++) x += (unsigned long)i;
  }
  result("capped=60");
  return x == 42; /* read x: the loop must not be optimised away */
}
