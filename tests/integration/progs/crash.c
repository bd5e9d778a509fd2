/* Dies by a signal: crash segv | abort | fpe | kill | term. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  const char *how = argc > 1 ? argv[1] : "segv";
  printf("about to %s\n", how);
  fflush(stdout);
  if (strcmp(how, "segv") == 0) {
    /* An address the compiler cannot see is bad (a literal NULL store may be
     * turned into a trap instruction, i.e. SIGILL). */
    volatile int *p = (volatile int *)(uintptr_t)strtoul(argc > 2 ? argv[2] : "16", NULL, 0);
    *p = 1;
  } else if (strcmp(how, "abort") == 0) {
    abort();
  } else if (strcmp(how, "fpe") == 0) {
    raise(SIGFPE);
  } else if (strcmp(how, "kill") == 0) {
    raise(SIGKILL);
  } else if (strcmp(how, "term") == 0) {
    raise(SIGTERM);
  }
  return 0;
}
