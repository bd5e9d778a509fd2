/* Write attempts, never destructive to existing files. Each argument is
 * OP:PATH with OP one of
 *   c  create PATH exclusively, write a byte, then remove it again
 *   d  mkdir PATH, then rmdir it again
 *   w  open an existing PATH for writing (no truncation, nothing written)
 *   m  chmod PATH to the mode it already has
 *   n  mknod a character device (1:3, /dev/null's numbers) at PATH
 * Reports RESULT write.i=OK|ERRNO_NAME per argument index i. */
#include "hostile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strlen(a) < 3 || a[1] != ':') {
      result("write.%d=BADARG", i - 1);
      continue;
    }
    const char *p = a + 2;
    int rc = -1;
    switch (a[0]) {
    case 'c': {
      int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
      if (fd >= 0) {
        ssize_t w = write(fd, "x", 1);
        int e = errno;
        close(fd);
        unlink(p);
        errno = e;
        rc = w == 1 ? 0 : -1;
      }
      break;
    }
    case 'd':
      rc = mkdir(p, 0755);
      if (rc == 0) rmdir(p);
      break;
    case 'w': {
      int fd = open(p, O_WRONLY);
      if (fd >= 0) {
        close(fd);
        rc = 0;
      }
      break;
    }
    case 'm': {
      struct stat st;
      rc = stat(p, &st);
      if (rc == 0) rc = chmod(p, st.st_mode & 07777);
      break;
    }
    case 'n':
      rc = mknod(p, S_IFCHR | 0666, makedev(1, 3));
      if (rc == 0) unlink(p);
      break;
    default:
      errno = EINVAL;
    }
    result("write.%d=%s", i - 1, outcome(rc));
  }
  return 0;
}
