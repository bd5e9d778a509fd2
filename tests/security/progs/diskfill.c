/* Disk fill: writes DIR/fill.N files of PER_FILE MiB (default 16, below the
 * file size limit) in 1 MiB writes until a write fails; reports the bytes
 * written and the errno, then removes the files. Capped at 1100 MiB.
 *   diskfill DIR [PER_FILE_MIB] */
#include "hostile.h"

#include <fcntl.h>

#define CAP_MIB 1100

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "/tmp";
  long per = argc > 2 ? atol(argv[2]) : 16;
  static char buf[1 << 20];
  memset(buf, 0xa5, sizeof buf);
  unsigned long long total = 0;
  int nfiles = 0, err = 0;
  char path[4096];
  while (!err && total < ((unsigned long long)CAP_MIB << 20)) {
    snprintf(path, sizeof path, "%s/fill.%d", dir, nfiles);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
      err = errno;
      break;
    }
    nfiles++;
    for (long i = 0; i < per; i++) {
      size_t off = 0;
      while (off < sizeof buf) {
        ssize_t w = write(fd, buf + off, sizeof buf - off);
        if (w < 0) {
          if (errno == EINTR) continue;
          err = errno;
          break;
        }
        off += (size_t)w;
        total += (unsigned long long)w;
      }
      if (err) break;
    }
    if (close(fd) < 0 && !err) err = errno;
  }
  result("written_bytes=%llu", total);
  result("written_mib=%llu", total >> 20);
  result("fill_errno=%s", err ? errname(err) : "NONE");
  if (!err) result("capped=1");
  for (int i = 0; i < nfiles; i++) {
    snprintf(path, sizeof path, "%s/fill.%d", dir, i);
    unlink(path);
  }
  return 0;
}
