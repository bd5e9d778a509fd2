/* surgebox-spawner: the spawner process (spawner_serve.c) as a static
 * program of its own. Every sandbox init is a clone of the spawner, a
 * copy of its address space: of a static program, a few mappings and a
 * few pages, where a copy of our dynamically linked binary carried the
 * mappings of nine libraries. On the VMs this runs on (a page fault
 * 13-19 us) a fork + exit of such a copy cost 1.13-1.38 ms against
 * 0.70-0.79 ms for a static one (bench/RESULTS.md, stop 43); a vfork +
 * exec of a static init cost more than either (1.40 ms), which is why
 * the init is still a copy and not an exec.
 *
 * Started only by spawner.c's spawn(): argv[0] SB_SPAWNER_ARGV0, the
 * socket and the daemon's pid in SB_SPAWNER_ENV; anything else exits 2. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv, char **envp) {
  static const char key[] = SB_SPAWNER_ENV "=";
  if (argc != 1 || !argv[0] || strcmp(argv[0], SB_SPAWNER_ARGV0) != 0) return 2;
  for (char **e = envp; e && *e; e++) {
    int fd, ppid;
    if (strncmp(*e, key, sizeof key - 1) == 0 && sscanf(*e + sizeof key - 1, "%d:%d", &fd, &ppid) == 2 && fd >= 0)
      sb_spawner_serve(fd, (pid_t)ppid);
  }
  return 2;
}
