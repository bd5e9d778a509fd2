/* Output flood: writes 'x' to stdout (or stderr: `flood stderr`) until the
 * output limit stops it, capped at 64 MiB. */
#include "hostile.h"

int main(int argc, char **argv) {
  int fd = (argc > 1 && strcmp(argv[1], "stderr") == 0) ? 2 : 1;
  static char buf[65536];
  memset(buf, 'x', sizeof buf);
  size_t total = 0;
  while (total < (64u << 20)) {
    ssize_t w = write(fd, buf, sizeof buf);
    if (w < 0) {
      if (errno == EINTR) continue;
      return 3;
    }
    total += (size_t)w;
  }
  return 0;
}
