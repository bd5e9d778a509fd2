/* common/clock.c: CLOCK_MONOTONIC in two units. */
#include "../check.h"
#include "clock.h"

#include <time.h>

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(void) {
  /* the same clock as CLOCK_MONOTONIC: read between two readings of it */
  uint64_t a = mono_ns(), n = sbu_now_ns(), b = mono_ns();
  CHECK(a <= n && n <= b);
  double s0 = (double)mono_ns() / 1e9, s = sbu_now_s(), s1 = (double)mono_ns() / 1e9;
  CHECK(s0 <= s + 1e-6 && s <= s1 + 1e-6);
  /* never backwards; a 20 ms sleep advances both by at least 20 ms */
  uint64_t t0 = sbu_now_ns();
  double u0 = sbu_now_s();
  struct timespec d = {0, 20 * 1000 * 1000};
  while (nanosleep(&d, &d) != 0) {
  }
  CHECK(sbu_now_ns() - t0 >= 20u * 1000 * 1000);
  CHECK(sbu_now_s() - u0 >= 0.020 - 1e-9);
  uint64_t prev = sbu_now_ns();
  for (int i = 0; i < 1000; i++) {
    uint64_t x = sbu_now_ns();
    CHECK(x >= prev);
    prev = x;
  }
  return check_exit();
}
