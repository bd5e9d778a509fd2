/* Prints real/effective/saved uids and gids and the supplementary groups. */
#include "hostile.h"

#include <grp.h>
#include <pwd.h>

int main(void) {
  uid_t r, e, s;
  gid_t gr, ge, gs;
  getresuid(&r, &e, &s);
  getresgid(&gr, &ge, &gs);
  result("uid=%u", (unsigned)r);
  result("euid=%u", (unsigned)e);
  result("suid=%u", (unsigned)s);
  result("gid=%u", (unsigned)gr);
  result("egid=%u", (unsigned)ge);
  result("sgid=%u", (unsigned)gs);
  gid_t groups[256];
  int n = getgroups(256, groups);
  char buf[2048] = "";
  for (int i = 0; i < n && strlen(buf) < sizeof buf - 16; i++)
    snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%u", i ? "," : "", (unsigned)groups[i]);
  /* the sandbox's own /etc/passwd and /etc/group name the job's ids */
  struct passwd *pw = getpwuid(r);
  struct group *gp = getgrgid(gr);
  result("pw_name=%s", pw ? pw->pw_name : "none");
  result("pw_dir=%s", pw ? pw->pw_dir : "none");
  result("gr_name=%s", gp ? gp->gr_name : "none");
  result("ngroups=%d", n);
  result("groups=%s", buf);
  return 0;
}
