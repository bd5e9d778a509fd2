/* File size limit: with SIGXFSZ ignored, grows one file in 1 MiB writes until
 * a write fails (expect EFBIG at the limit); then restores SIGXFSZ's default
 * action and writes once more past the limit (expect death by SIGXFSZ).
 * Capped at 1100 MiB.   filesize DIR */
#include "hostile.h"

#include <fcntl.h>
#include <signal.h>

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "/tmp";
  char path[4096];
  snprintf(path, sizeof path, "%s/big", dir);
  static char buf[1 << 20];
  memset(buf, 0x33, sizeof buf);
  signal(SIGXFSZ, SIG_IGN);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) {
    result("open=%s", errname(errno));
    return 1;
  }
  unsigned long long total = 0;
  int err = 0;
  while (total < (1100ull << 20)) {
    ssize_t w = write(fd, buf, sizeof buf);
    if (w < 0) {
      err = errno;
      break;
    }
    total += (unsigned long long)w;
  }
  result("written_mib=%llu", total >> 20);
  result("written_bytes=%llu", total);
  result("write_errno=%s", err ? errname(err) : "NONE");
  signal(SIGXFSZ, SIG_DFL);
  result("phase2=start");
  ssize_t w = write(fd, buf, sizeof buf);
  result("phase2_write=%s", w < 0 ? errname(errno) : "OK");
  close(fd);
  unlink(path);
  return 0;
}
