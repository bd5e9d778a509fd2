/* Namespaces. The sandbox init is cloned into new mount, pid, ipc and uts
 * namespaces (proc.c picks the flags); cgroup is unshared by the init once it
 * sits in the job's cgroup. The network namespace is the exception: creating
 * one per job costs ~0.6 ms plus ~1 ms of kernel teardown charged to nobody
 * (PERF-NOTES.md), so the runtime creates empty ones up front and each job
 * enters one with setns(). That stays safe because a job has no capabilities:
 * it cannot bring lo up, add routes or interfaces, or change sysctls, and
 * what it can create there (abstract AF_UNIX sockets) dies with its processes
 * at the end of the job. Jobs that run at the same time use different slots,
 * so they cannot reach each other through abstract sockets either. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

int sb_netns_create(char err[SB_ERR_MAX]) {
  /* A short-lived child makes the namespace; we keep it alive through an fd. */
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) {
    sb_err(err, "netns: pipe: %s", strerror(errno));
    return -errno;
  }
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(p[0]);
    close(p[1]);
    sb_err(err, "netns: fork: %s", strerror(e));
    return -e;
  }
  if (pid == 0) {
    close(p[0]);
    char ok = unshare(CLONE_NEWNET) == 0 ? 'y' : 'n';
    if (write(p[1], &ok, 1) != 1) _exit(1);
    pause(); /* killed by the parent once it holds the namespace */
    _exit(0);
  }
  close(p[1]);
  char ok = 'n';
  ssize_t n = read(p[0], &ok, 1);
  close(p[0]);
  int fd = -1;
  if (n == 1 && ok == 'y') {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) sb_err(err, "netns: open %s: %s", path, strerror(errno));
  } else {
    sb_err(err, "netns: unshare(CLONE_NEWNET) failed in the helper");
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return fd < 0 ? -EPERM : fd;
}

int sb_ns_uts_setup(void) {
  static const char name[] = "surgebox";
  if (sethostname(name, sizeof name - 1) < 0) return -errno;
  if (setdomainname(name, sizeof name - 1) < 0) return -errno;
  return 0;
}

static int write_map(pid_t pid, const char *file, const char *text, char err[SB_ERR_MAX]) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
  int rc = sb_write_file(path, text);
  if (rc < 0) sb_err(err, "userns: write %s: %s", path, strerror(-rc));
  return rc;
}

int sb_ns_write_id_maps(pid_t pid, uid_t inner_uid, uid_t outer_uid, gid_t inner_gid,
                        gid_t outer_gid, char err[SB_ERR_MAX]) {
  /* One id each, mapped to the daemon's own: no newuidmap helper needed.
   * setgroups must be denied before an unprivileged gid_map write. */
  char map[64];
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)inner_uid, (unsigned)outer_uid);
  int rc = write_map(pid, "uid_map", map, err);
  if (rc == 0) rc = write_map(pid, "setgroups", "deny", err);
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)inner_gid, (unsigned)outer_gid);
  if (rc == 0) rc = write_map(pid, "gid_map", map, err);
  return rc;
}
