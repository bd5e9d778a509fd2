/* Memory held in tmpfs pages rather than in the program's own pages: write
 * FILE (on /tmp, /dev/shm, ...) 1 MiB at a time until a write fails or CAP
 * MiB are written. The pages are charged to the job's memory cgroup, but no
 * process maps them, so the OOM killer scores this program as tiny.
 *
 *   tmpfill FILE [CAP_MIB]   (default 2048)
 *
 * First reports its own oom_score_adj=V and lower_adj=OK|E (trying to make
 * itself immune to the OOM killer, as the sandbox init is), then
 * written_mib=N every 8 MiB, then errno=E or capped_mib=N. */
#include "hostile.h"

#include <fcntl.h>

int main(int argc, char **argv) {
  const char *file = argc > 1 ? argv[1] : "/dev/shm/fill";
  long cap = argc > 2 ? atol(argv[2]) : 2048;
  /* Small and on the stack: the program's own footprint stays far below
   * the sandbox init's, as a small program's would. */
  char chunk[4096];
  memset(chunk, 0x5a, sizeof chunk);
  int afd = open("/proc/self/oom_score_adj", O_RDWR | O_CLOEXEC);
  ssize_t n = afd >= 0 ? read(afd, chunk, 32) : -1;
  if (n > 0 && chunk[n - 1] == '\n') n--;
  result("oom_score_adj=%.*s", n > 0 ? (int)n : 0, chunk);
  result("lower_adj=%s", afd >= 0 ? outcome(pwrite(afd, "-1000", 5, 0)) : errname(errno));
  if (afd >= 0) close(afd);
  memset(chunk, 0x5a, sizeof chunk);
  int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    result("open=%s", errname(errno));
    return 1;
  }
  for (long mib = 0; mib < cap; mib++) {
    for (size_t k = 0; k < (1 << 20) / sizeof chunk; k++) {
      ssize_t w = write(fd, chunk, sizeof chunk);
      if (w < 0 && errno == EINTR) {
        k--;
        continue;
      }
      if (w != (ssize_t)sizeof chunk) {
        result("written_mib=%ld", mib);
        result("errno=%s", w < 0 ? errname(errno) : "SHORT");
        return 0;
      }
    }
    if ((mib + 1) % 8 == 0) result("written_mib=%ld", mib + 1);
  }
  result("capped_mib=%ld", cap);
  return 0;
}
