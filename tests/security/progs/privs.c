/* Privilege escalation attempts: setuid/setgid to root, setgroups, raising
 * capabilities with capset and the ambient set. */
#include "hostile.h"

#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

int main(void) {
  result("setuid0=%s", outcome(setuid(0)));
  result("seteuid0=%s", outcome(seteuid(0)));
  result("setresuid0=%s", outcome(setresuid(0, 0, 0)));
  result("setgid0=%s", outcome(setgid(0)));
  result("setresgid0=%s", outcome(setresgid(0, 0, 0)));
  gid_t g = 0;
  result("setgroups0=%s", outcome(setgroups(1, &g)));

  struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0xff, sizeof data);
  result("capset_all=%s", outcome(syscall(SYS_capset, &hdr, data)));
  result("ambient_raise=%s",
         outcome(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SYS_ADMIN, 0, 0)));
  result("keepcaps=%s", outcome(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)));
  /* Turning no_new_privs off is impossible; the call must not report success. */
  result("clear_nnp=%s", outcome(prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0)));
  result("uid_after=%d", (int)getuid());
  result("euid_after=%d", (int)geteuid());
  return 0;
}
