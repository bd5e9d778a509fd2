/* Resource limits as the program sees them, an attempt to raise one past its
 * hard limit, and how many files it can really open. */
#include "hostile.h"

#include <fcntl.h>
#include <sys/resource.h>

static void show(const char *name, int res) {
  struct rlimit rl;
  if (getrlimit(res, &rl) != 0) {
    result("%s=%s", name, errname(errno));
    return;
  }
  char s[32], h[32];
  if (rl.rlim_cur == RLIM_INFINITY) snprintf(s, sizeof s, "inf");
  else snprintf(s, sizeof s, "%llu", (unsigned long long)rl.rlim_cur);
  if (rl.rlim_max == RLIM_INFINITY) snprintf(h, sizeof h, "inf");
  else snprintf(h, sizeof h, "%llu", (unsigned long long)rl.rlim_max);
  result("%s=%s/%s", name, s, h);
}

int main(void) {
  show("nofile", RLIMIT_NOFILE);
  show("core", RLIMIT_CORE);
  show("fsize", RLIMIT_FSIZE);
  show("cpu", RLIMIT_CPU);
  show("data", RLIMIT_DATA);
  show("nproc", RLIMIT_NPROC);
  show("as", RLIMIT_AS);
  show("stack", RLIMIT_STACK);
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_max != RLIM_INFINITY) {
    struct rlimit up = {rl.rlim_max + 1, rl.rlim_max + 1};
    result("raise_nofile=%s", outcome(setrlimit(RLIMIT_NOFILE, &up)));
  }
  getrlimit(RLIMIT_CORE, &rl);
  if (rl.rlim_max != RLIM_INFINITY) {
    struct rlimit up = {rl.rlim_max + 1, rl.rlim_max + 1};
    result("raise_core=%s", outcome(setrlimit(RLIMIT_CORE, &up)));
  }
  int opened = 0, err = 0;
  for (int i = 0; i < 100000; i++) {
    int fd = open("/dev/null", O_RDONLY);
    if (fd < 0) {
      err = errno;
      break;
    }
    opened++;
  }
  result("opened=%d", opened);
  result("open_errno=%s", err ? errname(err) : "NONE");
  return 0;
}
