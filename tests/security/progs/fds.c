/* Lists the program's open file descriptors and what they point to: anything
 * beyond stdin/stdout/stderr was leaked in by the sandbox (a host directory
 * fd would be an escape through openat(fd, "..")). */
#include "hostile.h"

#include <dirent.h>
#include <fcntl.h>

int main(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) {
    result("opendir=%s", errname(errno));
    return 1;
  }
  int self = dirfd(d), n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    int fd = atoi(e->d_name);
    if (fd == self) continue;
    char path[300], target[512];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(path, target, sizeof target - 1);
    target[k < 0 ? 0 : k] = 0;
    result("fd.%d=%s", fd, target);
    n++;
  }
  closedir(d);
  result("nfds=%d", n);
  return 0;
}
