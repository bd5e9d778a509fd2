/* Alternates unbuffered writes to stdout and stderr: out1 err1 out2 err2 ...
 * With --merge-output the merged stream must keep exactly this order. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  char buf[32];
  for (int i = 1; i <= 5; i++) {
    int n = snprintf(buf, sizeof buf, "out%d\n", i);
    if (write(1, buf, (size_t)n) < 0) return 2;
    n = snprintf(buf, sizeof buf, "err%d\n", i);
    if (write(2, buf, (size_t)n) < 0) return 2;
  }
  return 0;
}
