/* Inode exhaustion: create empty files (no data pages, so a tmpfs size=
 * does not stop them) in DIR until creation fails or CAP files exist.
 *
 *   mkfiles DIR [CAP]   (default CAP 200000)
 *
 * Reports created=N and errno=E (the failure), or capped=N. */
#include "hostile.h"

#include <fcntl.h>

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "/tmp";
  long cap = argc > 2 ? atol(argv[2]) : 200000;
  char path[4096];
  long n = 0;
  for (; n < cap; n++) {
    snprintf(path, sizeof path, "%s/i%ld", dir, n);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      int e = errno;
      result("created=%ld", n);
      result("errno=%s", errname(e));
      return 0;
    }
    close(fd);
  }
  result("created=%ld", n);
  result("capped=%ld", n);
  return 0;
}
