/* Lists /dev: RESULT dev.NAME=c:MAJ:MIN | b:MAJ:MIN | d | l | f | other,
 * then tries to create a file in /dev/shm (must work). */
#include "hostile.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

int main(void) {
  DIR *d = opendir("/dev");
  if (!d) {
    result("opendir=%s", errname(errno));
    return 1;
  }
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char path[300];
    snprintf(path, sizeof path, "/dev/%s", e->d_name);
    struct stat st;
    if (lstat(path, &st) != 0) {
      result("dev.%s=%s", e->d_name, errname(errno));
      continue;
    }
    n++;
    if (S_ISCHR(st.st_mode))
      result("dev.%s=c:%u:%u", e->d_name, major(st.st_rdev), minor(st.st_rdev));
    else if (S_ISBLK(st.st_mode))
      result("dev.%s=b:%u:%u", e->d_name, major(st.st_rdev), minor(st.st_rdev));
    else if (S_ISDIR(st.st_mode))
      result("dev.%s=d", e->d_name);
    else if (S_ISLNK(st.st_mode))
      result("dev.%s=l", e->d_name);
    else if (S_ISREG(st.st_mode))
      result("dev.%s=f", e->d_name);
    else
      result("dev.%s=other", e->d_name);
  }
  closedir(d);
  result("dev_count=%d", n);
  int fd = open("/dev/shm/sbtest", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  result("shm_create=%s", outcome(fd));
  if (fd >= 0) {
    close(fd);
    unlink("/dev/shm/sbtest");
  }
  return 0;
}
