/* Burns argv[1] seconds of CPU (default 0.3) in one thread, then reports the
 * CPU time it measured itself. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  double want = argc > 1 ? atof(argv[1]) : 0.3;
  volatile unsigned long x = 0;
  while (cpu_now() < want)
    for (int i = 0; i < 100000; i++) x += (unsigned long)i;
  printf("RESULT self_cpu=%.3f\n", cpu_now());
  if (x == 42) puts(""); /* read x: the loop must not be optimised away */
  return 0;
}
