/* Small helpers shared by parent and child code. Nothing here allocates
 * (sb_mkdir_p and sb_rm_rf are in common/fs_tree.c: dataset/ and bench/ use
 * them too). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void sb_err(char err[SB_ERR_MAX], const char *fmt, ...) {
  if (!err) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, SB_ERR_MAX, fmt, ap);
  va_end(ap);
}

int sb_write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  int e = n < 0 ? -errno : ((size_t)n == len ? 0 : -EIO);
  close(fd);
  return e;
}

int sb_read_file(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  size_t got = 0;
  while (got + 1 < cap) {
    ssize_t n = read(fd, buf + got, cap - 1 - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = -errno;
      close(fd);
      return e;
    }
    if (n == 0) break;
    got += (size_t)n;
  }
  buf[got] = '\0';
  close(fd);
  return (int)got;
}

ssize_t sb_sendmsg_fds(int sock, const void *buf, size_t len, const int *fds, int nfds, int flags) {
  if (nfds < 0 || nfds > 16) {
    errno = EINVAL;
    return -1;
  }
  struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
  union {
    char buf[CMSG_SPACE(16 * sizeof(int))];
    struct cmsghdr align;
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
  if (nfds > 0) {
    mh.msg_control = u.buf;
    mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
    memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
  }
  ssize_t n;
  while ((n = sendmsg(sock, &mh, flags)) < 0 && errno == EINTR) {
  }
  return n;
}

bool sb_pid_ns_ino(pid_t pid, ino_t *ino) {
  char path[64];
  struct stat st;
  snprintf(path, sizeof path, "/proc/%d/ns/pid", (int)pid);
  if (stat(path, &st) < 0) return false;
  *ino = st.st_ino;
  return true;
}
