/* Dumps the sandbox's mount table (mount point, per-mount options, fs type,
 * super options) from /proc/self/mountinfo and its cgroup membership from
 * /proc/self/cgroup. */
#include "hostile.h"

int main(void) {
  FILE *f = fopen("/proc/self/mountinfo", "r");
  if (!f) {
    result("mountinfo=%s", errname(errno));
    return 1;
  }
  char line[4096];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    /* id parent maj:min root mountpoint options [optional...] - fstype source superopts */
    char *fields[16];
    int nf = 0;
    for (char *tok = strtok(line, " "); tok && nf < 16; tok = strtok(NULL, " ")) fields[nf++] = tok;
    int dash = -1;
    for (int i = 6; i < nf; i++)
      if (strcmp(fields[i], "-") == 0) {
        dash = i;
        break;
      }
    if (dash < 0 || dash + 3 >= nf + 1 || nf < dash + 4) continue;
    result("mount.%d=%s %s %s %s %s", n++, fields[4], fields[5], fields[dash + 1], fields[3],
           fields[dash + 3]);
  }
  fclose(f);
  result("nmounts=%d", n);
  f = fopen("/proc/self/cgroup", "r");
  int k = 0;
  if (f) {
    while (fgets(line, sizeof line, f)) {
      line[strcspn(line, "\n")] = 0;
      result("cgroup.%d=%s", k++, line);
    }
    fclose(f);
  }
  result("ncgroups=%d", k);
  return 0;
}
