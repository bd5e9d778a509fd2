/* Runs a fixed number of dependent multiply-adds (argv[1]): the same work on
 * every run, so the spread of its measured CPU time is the spread of the
 * machine and the meter, not of the program. Built with gcc -static -O2. */
#include <stdint.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000000ull;
  uint64_t x = 1;
  for (uint64_t i = 0; i < n; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    __asm__ volatile("" : "+r"(x));
  }
  return (int)(x & 0);
}
