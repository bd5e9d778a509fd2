/* Memory bomb: allocate CHUNK MiB at a time and touch every page until
 * allocation fails (or the 4096 MiB cap).
 *   membomb [CHUNK_MIB [NPROCS [PER_PROC_MIB]]]
 * With NPROCS > 1, NPROCS children each allocate PER_PROC_MIB and hold it
 * for 3 s; the parent reports how each child ended and exits 1 if any was
 * killed. */
#include "hostile.h"

#include <signal.h>
#include <sys/wait.h>

#define CAP_MIB 4096

static int bomb(size_t chunk_mib, size_t cap_mib, const char *who) {
  size_t total = 0;
  while (total < cap_mib) {
    char *p = malloc(chunk_mib << 20);
    if (!p) {
      int e = errno;
      result("%salloc_failed_mib=%zu", who, total);
      result("%salloc_errno=%s", who, errname(e));
      return 0;
    }
    memset(p, 0x5a, chunk_mib << 20);
    total += chunk_mib;
    result("%stouched_mib=%zu", who, total);
  }
  result("%scapped_mib=%zu", who, total);
  return 0;
}

int main(int argc, char **argv) {
  size_t chunk = argc > 1 ? strtoul(argv[1], NULL, 10) : 8;
  int nprocs = argc > 2 ? atoi(argv[2]) : 1;
  size_t per = argc > 3 ? strtoul(argv[3], NULL, 10) : CAP_MIB;
  if (chunk == 0) chunk = 8;
  if (per > CAP_MIB) per = CAP_MIB;
  alarm(60);
  if (nprocs <= 1) return bomb(chunk, per, "");
  if (nprocs > 16) nprocs = 16;
  for (int i = 0; i < nprocs; i++) {
    pid_t p = fork();
    if (p == 0) {
      char who[32];
      snprintf(who, sizeof who, "child%d.", i);
      bomb(chunk, per, who);
      /* Hold the memory: a child that is done at once would free its pages
       * before the others allocate theirs, and on a quiet machine the
       * children then never add up to the limit (CI saw a 246 MiB peak
       * under 256 MiB with all four reaching 128 MiB one after another). */
      sleep(3);
      _exit(0);
    }
    if (p < 0) result("fork%d=%s", i, errname(errno));
  }
  int killed = 0, st;
  pid_t w;
  while ((w = wait(&st)) > 0) {
    if (WIFSIGNALED(st)) {
      killed++;
      result("child_signal=%s", sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
    }
  }
  result("children_killed=%d", killed);
  return killed ? 1 : 0;
}
