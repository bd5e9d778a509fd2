/* What a sandbox init costs to start and end, by what it is a copy of
 * (stop 43: the static spawner). Built twice: bench_fork_copy_static
 * (-static: a copy of surgebox-spawner's kind) and bench_fork_copy,
 * linked against the libraries surgeboxd links (a copy of the old
 * spawner, an exec of our own binary). bench/fork_copy.py runs both and
 * the third way interleaved and prints ratios.
 *
 *   bench_fork_copy[_static] fork N PAGES     N x (fork; the child writes
 *                                             PAGES data pages and exits; wait)
 *   bench_fork_copy[_static] exec N PROGRAM   N x (vfork; exec PROGRAM; wait)
 *
 * Prints one JSON line: wall and CPU (ours + the children's) per iteration. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char data[256 * 4096];

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double tv(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[1], "fork") != 0 && strcmp(argv[1], "exec") != 0)) {
    fprintf(stderr, "usage: %s fork N PAGES | exec N PROGRAM\n", argv[0]);
    return 2;
  }
  bool fork_mode = strcmp(argv[1], "fork") == 0;
  int n = atoi(argv[2]);
  int pages = fork_mode ? atoi(argv[3]) : 0;
  if (n <= 0 || pages < 0 || pages > (int)(sizeof data / 4096)) return 2;
  memset(data, 1, sizeof data); /* our pages are written: the child's writes fault */
  char *const av[] = {argv[3], NULL}, *const ev[] = {NULL};
  double t0 = now();
  for (int i = 0; i < n; i++) {
    pid_t p = fork_mode ? fork() : vfork();
    if (p == 0) {
      if (!fork_mode) execve(argv[3], av, ev);
      for (int k = 0; k < pages; k++) data[(size_t)k * 4096] = 2;
      _exit(fork_mode ? 0 : 127);
    }
    int st;
    if (p < 0 || waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "%s: iteration %d failed\n", argv[0], i);
      return 1;
    }
  }
  double wall = now() - t0;
  struct rusage s, c;
  getrusage(RUSAGE_SELF, &s);
  getrusage(RUSAGE_CHILDREN, &c);
  double cpu = tv(s.ru_utime) + tv(s.ru_stime) + tv(c.ru_utime) + tv(c.ru_stime);
  printf("{\"mode\": \"%s\", \"n\": %d, \"wall_ms\": %.4f, \"cpu_ms\": %.4f}\n", argv[1], n, wall / n * 1e3,
         cpu / n * 1e3);
  return 0;
}
