/* Hostname inside the sandbox, and attempts to change it. */
#include "hostile.h"

#include <sys/utsname.h>

int main(void) {
  struct utsname u;
  if (uname(&u) == 0) {
    result("nodename=%s", u.nodename);
    result("domainname=%s", u.domainname);
  }
  result("sethostname=%s", outcome(sethostname("pwned", 5)));
  result("setdomainname=%s", outcome(setdomainname("pwned", 5)));
  return 0;
}
