/* Sleeps past any wall limit (capped at 60 s). */
#include "hostile.h"

#include <time.h>

int main(void) {
  result("sleeping=1");
  for (int i = 0; i < 600; i++) {
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  result("woke=1");
  return 0;
}
