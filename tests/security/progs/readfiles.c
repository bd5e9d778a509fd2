/* Tries to read each path given: a file is read to the end, a directory is
 * listed. Reports per argument index i:
 *   RESULT path.i=file:BYTES | dir:ENTRIES | ERRNO_NAME
 * and, for directories, the first few names. Never prints file contents. */
#include "hostile.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *p = argv[i];
    struct stat st;
    if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
      DIR *d = opendir(p);
      if (!d) {
        result("path.%d=%s", i - 1, errname(errno));
        continue;
      }
      int n = 0;
      char names[1024] = "";
      struct dirent *e;
      while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (n < 8 && strlen(names) + strlen(e->d_name) + 2 < sizeof names) {
          strcat(names, e->d_name);
          strcat(names, ",");
        }
        n++;
      }
      closedir(d);
      result("path.%d=dir:%d", i - 1, n);
      result("names.%d=%s", i - 1, names);
      continue;
    }
    int fd = open(p, O_RDONLY);
    if (fd < 0) {
      result("path.%d=%s", i - 1, errname(errno));
      continue;
    }
    char buf[65536];
    long long total = 0;
    ssize_t r;
    int err = 0;
    while ((r = read(fd, buf, sizeof buf)) != 0) {
      if (r < 0) {
        if (errno == EINTR) continue;
        err = errno;
        break;
      }
      total += r;
      if (total > (64 << 20)) break;
    }
    close(fd);
    if (err)
      result("path.%d=read:%s", i - 1, errname(err));
    else
      result("path.%d=file:%lld", i - 1, total);
  }
  return 0;
}
