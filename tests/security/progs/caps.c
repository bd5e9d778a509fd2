/* Prints the capability / no_new_privs / seccomp fields of /proc/self/status
 * and what prctl() and capget() say. */
#include "hostile.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

int main(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) {
    result("status=%s", errname(errno));
    return 1;
  }
  char line[512];
  while (fgets(line, sizeof line, f)) {
    static const char *keys[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
                                 "NoNewPrivs", "Seccomp", "Seccomp_filters"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
      size_t n = strlen(keys[i]);
      if (strncmp(line, keys[i], n) == 0 && line[n] == ':') {
        char *v = line + n + 1;
        while (*v == ' ' || *v == '\t') v++;
        v[strcspn(v, "\n")] = 0;
        result("%s=%s", keys[i], v);
      }
    }
  }
  fclose(f);
  result("prctl_nnp=%d", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
  result("prctl_seccomp=%d", prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
  struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];
  memset(d, 0, sizeof d);
  if (syscall(SYS_capget, &hdr, d) == 0)
    result("capget=%08x%08x/%08x%08x/%08x%08x", d[1].effective, d[0].effective, d[1].permitted,
           d[0].permitted, d[1].inheritable, d[0].inheritable);
  else
    result("capget=%s", errname(errno));
  int bset = 0;
  for (int c = 0; c <= 63; c++) {
    int r = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
    if (r == 1) bset++;
  }
  result("bset_count=%d", bset);
  return 0;
}
