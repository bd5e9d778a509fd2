/* Network interfaces seen inside the sandbox: names from /proc/net/dev, the
 * flags of lo (via SIOCGIFFLAGS on an AF_UNIX socket), listening TCP sockets
 * and routes visible in /proc/net. */
#include "hostile.h"

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

static int count_lines(const char *path, int skip, const char *field_match, int field) {
  FILE *f = fopen(path, "r");
  if (!f) return -errno;
  char line[1024];
  int n = 0, i = 0;
  while (fgets(line, sizeof line, f)) {
    if (i++ < skip) continue;
    if (field_match) {
      char *tok = strtok(line, " \t\n");
      for (int k = 0; tok && k < field; k++) tok = strtok(NULL, " \t\n");
      if (!tok || strcmp(tok, field_match) != 0) continue;
    }
    n++;
  }
  fclose(f);
  return n;
}

int main(void) {
  FILE *f = fopen("/proc/net/dev", "r");
  char names[1024] = "";
  int n = 0;
  if (f) {
    char line[1024];
    int i = 0;
    while (fgets(line, sizeof line, f)) {
      if (i++ < 2) continue;
      char *c = strchr(line, ':');
      if (!c) continue;
      *c = 0;
      char *s = line;
      while (*s == ' ') s++;
      if (strlen(names) + strlen(s) + 2 < sizeof names) {
        if (n) strcat(names, ",");
        strcat(names, s);
      }
      n++;
    }
    fclose(f);
    result("ifaces=%s", names);
    result("nifaces=%d", n);
  } else {
    result("ifaces=%s", errname(errno));
  }
  int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
  if (fd >= 0) {
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0)
      result("lo_up=%d", (ifr.ifr_flags & IFF_UP) ? 1 : 0);
    else
      result("lo_up=%s", errname(errno));
    close(fd);
  } else {
    result("lo_up=socket:%s", errname(errno));
  }
  /* state 0A = TCP_LISTEN (4th column) */
  result("tcp_listen=%d", count_lines("/proc/net/tcp", 1, "0A", 3));
  result("tcp6_listen=%d", count_lines("/proc/net/tcp6", 1, "0A", 3));
  result("routes=%d", count_lines("/proc/net/route", 1, NULL, 0));
  return 0;
}
