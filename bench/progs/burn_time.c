/* Burns CPU until its own CLOCK_PROCESS_CPUTIME_ID reaches SECONDS (default
 * 0.5): the program decides how long it runs, so a meter reading above
 * SECONDS is start-up, exit and the meter itself. Built with gcc -static -O2. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  double target = argc > 1 ? strtod(argv[1], NULL) : 0.5;
  uint64_t x = 1;
  for (;;) {
    for (int i = 0; i < 4096; i++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      __asm__ volatile("" : "+r"(x));
    }
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    if ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 >= target) break;
  }
  return (int)(x & 0); /* x is live: the loop is not optimised away */
}
