/* systemd's two protocols, without libsystemd: readiness notification
 * (sd_notify(3): one datagram to $NOTIFY_SOCKET) and socket activation
 * (sd_listen_fds(3): $LISTEN_PID, $LISTEN_FDS, descriptors from 3). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

void sbd_notify(const char *state) {
  const char *path = getenv("NOTIFY_SOCKET");
  if (!path || !path[0]) return;
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  size_t len = strlen(path);
  if ((path[0] != '/' && path[0] != '@') || len >= sizeof a.sun_path) return;
  memcpy(a.sun_path, path, len);
  if (path[0] == '@') a.sun_path[0] = '\0'; /* abstract namespace */
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
  if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&a, alen) < 0) {
    /* nothing to do: the service manager is gone or not listening */
  }
  close(fd);
}

int sbd_listen_fd(char *path, size_t cap, char *err, size_t err_len) {
  const char *pid_s = getenv("LISTEN_PID"), *n_s = getenv("LISTEN_FDS");
  if (!pid_s || !n_s) return -1;
  char *end;
  long pid = strtol(pid_s, &end, 10);
  bool ours = *pid_s && !*end && pid == (long)getpid();
  long n = strtol(n_s, &end, 10);
  bool n_ok = *n_s && !*end;
  /* Not for our children (sandboxes, a re-exec), whatever happens next. */
  unsetenv("LISTEN_PID");
  unsetenv("LISTEN_FDS");
  unsetenv("LISTEN_FDNAMES");
  if (!ours) return -1; /* meant for another process */
  if (!n_ok || n < 1) {
    snprintf(err, err_len, "LISTEN_FDS=%s: expected one listening socket", n_s);
    return -2;
  }
  int fd = 3;
  int type = 0, listening = 0;
  socklen_t sl = sizeof type;
  struct sockaddr_un a = {0};
  socklen_t alen = sizeof a;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &sl) < 0 || type != SOCK_STREAM ||
      getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &(socklen_t){sizeof listening}) < 0 || !listening ||
      getsockname(fd, (struct sockaddr *)&a, &alen) < 0 || a.sun_family != AF_UNIX) {
    snprintf(err, err_len, "LISTEN_FDS: descriptor 3 is not a listening Unix stream socket");
    return -2;
  }
  if (n > 1) snprintf(err, err_len, "LISTEN_FDS=%ld: only the first socket is used", n);
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  size_t plen = alen > offsetof(struct sockaddr_un, sun_path) ? alen - offsetof(struct sockaddr_un, sun_path) : 0;
  if (plen && a.sun_path[0] == '\0') snprintf(path, cap, "@%.*s", (int)plen - 1, a.sun_path + 1);
  else snprintf(path, cap, "%.*s", (int)strnlen(a.sun_path, plen), a.sun_path);
  return fd;
}
