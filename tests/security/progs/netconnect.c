/* Network escape attempts.
 *   netconnect TCP_PORT UDP_PORT ABSTRACT_NAME
 * TCP_PORT and UDP_PORT are listeners the driver opened on 127.0.0.1 outside
 * the sandbox, ABSTRACT_NAME an abstract AF_UNIX socket it listens on. */
#include "hostile.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif

static void try_socket(const char *name, int domain, int type, int proto) {
  int fd = socket(domain, type, proto);
  result("socket.%s=%s", name, outcome(fd));
  if (fd >= 0) close(fd);
}

static void unix_connect(const char *name, const char *path, int abstract) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) {
    result("unix_connect.%s=socket:%s", name, errname(errno));
    return;
  }
  struct sockaddr_un sa;
  memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  socklen_t len;
  if (abstract) {
    size_t n = strlen(path);
    if (n > sizeof sa.sun_path - 1) n = sizeof sa.sun_path - 1;
    memcpy(sa.sun_path + 1, path, n);
    len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
  } else {
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    len = sizeof sa;
  }
  int rc = connect(fd, (struct sockaddr *)&sa, len);
  result("unix_connect.%s=%s", name, outcome(rc));
  close(fd);
}

int main(int argc, char **argv) {
  int tcp_port = argc > 1 ? atoi(argv[1]) : 1;
  int udp_port = argc > 2 ? atoi(argv[2]) : 1;
  const char *abstract = argc > 3 ? argv[3] : "surgebox-none";

  struct sockaddr_in sin;
  memset(&sin, 0, sizeof sin);
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

  int fd = socket(AF_INET, SOCK_STREAM, 0);
  result("socket.inet_stream=%s", outcome(fd));
  if (fd >= 0) {
    sin.sin_port = htons((unsigned short)tcp_port);
    int rc = connect(fd, (struct sockaddr *)&sin, sizeof sin);
    result("connect=%s", outcome(rc));
    close(fd);
  } else {
    result("connect=NOSOCKET");
  }

  fd = socket(AF_INET, SOCK_DGRAM, 0);
  result("socket.inet_dgram=%s", outcome(fd));
  if (fd >= 0) {
    sin.sin_port = htons((unsigned short)udp_port);
    ssize_t rc = sendto(fd, "escape", 6, 0, (struct sockaddr *)&sin, sizeof sin);
    result("sendto=%s", outcome(rc));
    close(fd);
  } else {
    result("sendto=NOSOCKET");
  }

  try_socket("inet6_stream", AF_INET6, SOCK_STREAM, 0);
  try_socket("inet_raw", AF_INET, SOCK_RAW, IPPROTO_ICMP);
  try_socket("netlink_route", AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
  try_socket("packet", AF_PACKET, SOCK_RAW, 0);
  try_socket("vsock", AF_VSOCK, SOCK_STREAM, 0);
  try_socket("alg", AF_ALG, SOCK_SEQPACKET, 0);
  try_socket("unix_stream", AF_UNIX, SOCK_STREAM, 0);
  try_socket("unix_dgram", AF_UNIX, SOCK_DGRAM, 0);
  int sv[2];
  int rc = socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
  result("socketpair.unix=%s", outcome(rc));
  if (rc == 0) {
    close(sv[0]);
    close(sv[1]);
  }
  unix_connect("abstract", abstract, 1);
  unix_connect("docker", "/var/run/docker.sock", 0);
  unix_connect("dbus", "/run/dbus/system_bus_socket", 0);
  return 0;
}
