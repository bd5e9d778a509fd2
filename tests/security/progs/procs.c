/* Counts the processes visible in /proc and looks for CANARY (argv[1], or
 * the first line of FILE when argv[1] is @FILE) in every visible process's
 * environment and command line (except our own command line). */
#include "hostile.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>

static int file_contains(const char *path, const char *needle) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -errno;
  static char buf[1 << 20];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n < 0) return -errno;
  size_t nl = strlen(needle);
  for (ssize_t i = 0; i + (ssize_t)nl <= n; i++)
    if (memcmp(buf + i, needle, nl) == 0) return 1;
  return 0;
}

int main(int argc, char **argv) {
  const char *canary = argc > 1 ? argv[1] : "SBTEST_CANARY";
  static char fromfile[256];
  if (canary[0] == '@') { /* @FILE: read the canary from FILE */
    FILE *cf = fopen(canary + 1, "r");
    if (!cf || !fgets(fromfile, sizeof fromfile, cf)) {
      result("canary_file=%s", errname(errno));
      return 1;
    }
    fclose(cf);
    fromfile[strcspn(fromfile, "\n")] = 0;
    canary = fromfile;
  }
  DIR *d = opendir("/proc");
  if (!d) {
    result("opendir=%s", errname(errno));
    return 1;
  }
  int n = 0, leaks = 0;
  char list[4096] = "";
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    n++;
    char path[300], comm[64] = "?";
    snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (f) {
      if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = 0;
      fclose(f);
    }
    if (strlen(list) + strlen(comm) + 24 < sizeof list)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s:%s", n > 1 ? "," : "",
               e->d_name, comm);
    const char *files[] = {"environ", "cmdline"};
    int self = atoi(e->d_name) == (int)getpid();
    for (int k = 0; k < 2; k++) {
      if (self && k == 1) continue;
      snprintf(path, sizeof path, "/proc/%s/%s", e->d_name, files[k]);
      int r = file_contains(path, canary);
      if (r == 1) {
        leaks++;
        result("canary_in=%s", path);
      }
    }
  }
  closedir(d);
  result("nprocs=%d", n);
  result("procs=%s", list);
  result("self=%d", (int)getpid());
  result("canary_leaks=%d", leaks);
  return 0;
}
