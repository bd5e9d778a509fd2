/* What isolation alone costs a run, before any of surgebox's own work
 * (issue 38's arithmetic, stop 48). Each run starts PROG with "3 4\n" on
 * its stdin and its stdout on /dev/null, N times a way, the ways
 * interleaved round by round:
 *
 *   bare    fork + exec of PROG, then wait4
 *   floor   what a case's sandbox cannot do without: a clone into fresh
 *           pid, ipc and mount namespaces, whose child (pid 1 there)
 *           mounts a fresh tmpfs on /tmp and /dev/shm and a fresh /proc,
 *           then starts PROG as a vfork-style child and reaps it
 *   full    the floor plus the rest of what the brief asks of every
 *           sandbox, each at its cheapest: a fresh uts namespace, a
 *           network namespace made once and entered, the job's cgroups
 *           joined (v1 memory, pids and cpuacct, or one v2 cgroup; made
 *           once), and in the program before its exec rlimits, the
 *           capability bounding set dropped, another uid and a seccomp
 *           filter (one instruction: a lower bound of a real filter's load)
 *
 * No daemon, no /app, no result: only what keeps one case's processes,
 * SysV objects and files from the next and the program from the host.
 * Prints one JSON object: ms a run per way, and which cgroups "full" used.
 * Must run as root inside a private mount namespace (the unshare wrapper:
 * the mounts land in each child's own copy of it); PROG must not live
 * under /tmp, which the floor's child covers. Runs only the program it is
 * given, which bench/case_floor.py builds from its own source. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *prog;
static int in_fd = -1, out_fd = -1;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int full, net_fd = -1, procs_fd[3] = {-1, -1, -1}, n_procs;
static char cg_dirs[3][128];

/* The program's own steps before its exec in the full way (as child.c's
 * program does them): rlimits, the bounding set, groups and uid, then a
 * filter that allows everything. */
static int identity_and_filter(void) {
  struct rlimit cpu = {10, 11}, core = {0, 0}, fsize = {1 << 26, 1 << 26}, nofile = {1024, 1024};
  if (setrlimit(RLIMIT_CPU, &cpu) || setrlimit(RLIMIT_CORE, &core) || setrlimit(RLIMIT_FSIZE, &fsize) ||
      setrlimit(RLIMIT_NOFILE, &nofile))
    return -1;
  for (int c = 0; prctl(PR_CAPBSET_READ, c) >= 0; c++)
    if (prctl(PR_CAPBSET_DROP, c) < 0) return -1;
  if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534)) return -1;
  struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog filter = {1, &allow};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter)) return -1;
  return 0;
}

static __attribute__((noreturn)) void exec_prog(void) {
  if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0) _exit(126);
  if (full && identity_and_filter() < 0) _exit(123);
  char *argv[] = {(char *)prog, NULL};
  char *envp[] = {NULL};
  execve(prog, argv, envp);
  _exit(127);
}

/* What a run's exit status says (the _exit codes above), or the program's own. */
static const char *why(int rc) {
  switch (rc) {
  case 121: return "joining the cgroups failed";
  case 122: return "entering the network namespace or naming the host failed";
  case 123: return "rlimits, the bounding set, uid 65534 or the filter failed";
  case 124: return "the init could not fork";
  case 125: return "mounting /tmp, /dev/shm or /proc failed: not root, or no private mount namespace";
  case 126: return "stdin or stdout could not be set";
  case 127: return "PROG could not be executed: missing, or not readable and executable by uid 65534";
  default: return rc < 0 ? "the stdin memfd, /dev/null, the clone or the wait failed (not root?)" : "the program's own exit status";
  }
}

static int reap(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* pid 1 of the fresh namespaces: the mounts a case needs, then the program. */
static int floor_init(void *unused) {
  (void)unused;
  if (full) {
    if (setns(net_fd, CLONE_NEWNET) < 0 || sethostname("sandbox", 7) < 0) _exit(122);
    for (int i = 0; i < n_procs; i++)
      if (pwrite(procs_fd[i], "0", 1, 0) < 0) _exit(121);
  }
  if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m") < 0 ||
      mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m") < 0 ||
      mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    _exit(125);
  pid_t p = vfork();
  if (p == 0) exec_prog();
  _exit(p < 0 ? 124 : reap(p));
}

static char init_stack[1 << 16];

/* The full way's once-only parts: a network namespace (an fd of it), and
 * the cgroups its runs join, under the hierarchies surgebox would use. */
static const char *full_setup(void) {
  int here = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (here < 0 || unshare(CLONE_NEWNET) < 0) return NULL;
  net_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (net_fd < 0 || setns(here, CLONE_NEWNET) < 0) return NULL;
  close(here);
  static const char *const v1[] = {"memory", "pids", "cpuacct"};
  const char *kind = "v1";
  for (int i = 0; i < 3; i++) {
    char root[64];
    struct stat st;
    snprintf(root, sizeof root, "/sys/fs/cgroup/%s", v1[i]);
    if (stat(root, &st) < 0) {
      kind = "none";
      break;
    }
    snprintf(cg_dirs[n_procs], sizeof cg_dirs[n_procs], "%s/sb-floor-%.0f", root, now_ms() * 1e3);
    n_procs++;
  }
  if (strcmp(kind, "none") == 0) {
    struct stat st;
    n_procs = 0;
    if (stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0) {
      snprintf(cg_dirs[0], sizeof cg_dirs[0], "/sys/fs/cgroup/sb-floor-%.0f", now_ms() * 1e3);
      n_procs = 1;
      kind = "v2";
    }
  }
  for (int i = 0; i < n_procs; i++) {
    char procs[160];
    snprintf(procs, sizeof procs, "%s/cgroup.procs", cg_dirs[i]);
    if (mkdir(cg_dirs[i], 0755) < 0 || (procs_fd[i] = open(procs, O_WRONLY | O_CLOEXEC)) < 0) {
      fprintf(stderr, "sandbox_floor: cannot make %s: %s (runs without cgroups)\n", cg_dirs[i], strerror(errno));
      for (int k = 0; k <= i; k++) {
        if (procs_fd[k] >= 0) close(procs_fd[k]);
        rmdir(cg_dirs[k]);
      }
      n_procs = 0;
      return "none";
    }
  }
  return kind;
}

static int one_run(int way) {
  in_fd = memfd_create("stdin", MFD_CLOEXEC);
  out_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (in_fd < 0 || out_fd < 0 || write(in_fd, "3 4\n", 4) != 4 || lseek(in_fd, 0, SEEK_SET) < 0) return -1;
  full = way == 2;
  int ns = CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNS | (full ? CLONE_NEWUTS : 0);
  pid_t p = way ? clone(floor_init, init_stack + sizeof init_stack, ns | SIGCHLD, NULL) : fork();
  if (p == 0) exec_prog();
  int rc = p < 0 ? -1 : reap(p);
  close(in_fd);
  close(out_fd);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s PROG N ROUNDS (as root, in a private mount namespace)\n", argv[0]);
    return 2;
  }
  prog = argv[1];
  int n = atoi(argv[2]), rounds = atoi(argv[3]);
  if (strncmp(prog, "/tmp/", 5) == 0 || n < 1 || rounds < 1) {
    fprintf(stderr, "sandbox_floor: PROG must not be under /tmp, N and ROUNDS at least 1\n");
    return 2;
  }
  const char *cgroups = full_setup();
  if (!cgroups) {
    fprintf(stderr, "sandbox_floor: cannot make a network namespace: %s\n", strerror(errno));
    return 1;
  }
  static const char *const names[] = {"bare", "floor", "full"};
  double ms[3] = {0, 0, 0};
  int rc = 0;
  for (int r = 0; r < rounds && !rc; r++)
    for (int k = 0; k < 3 && !rc; k++) {
      int way = r % 2 ? 2 - k : k; /* the order reversed every other round: drift cancels */
      double t0 = now_ms();
      for (int i = 0; i < n && !rc; i++)
        if ((rc = one_run(way)) != 0)
          fprintf(stderr, "sandbox_floor: %s run %d ended %d (%s)\n", names[way], i, rc, why(rc));
      ms[way] += now_ms() - t0;
    }
  for (int i = 0; i < n_procs; i++) { /* on every path: no sb-floor-* left behind */
    close(procs_fd[i]);
    /* EBUSY while the last run's tasks finish leaving */
    for (int tries = 0; rmdir(cg_dirs[i]) < 0 && errno == EBUSY && tries < 1000; tries++) usleep(1000);
  }
  if (rc) return 1;
  printf("{\"runs_per_way\": %d, \"bare_ms\": %.3f, \"floor_ms\": %.3f, \"full_ms\": %.3f, \"cgroups\": \"%s\"}\n",
         n * rounds, ms[0] / (n * rounds), ms[1] / (n * rounds), ms[2] / (n * rounds), cgroups);
  return 0;
}
