/* Namespaces. The sandbox init is cloned into new mount, pid, ipc and uts
 * namespaces (proc.c picks the flags); cgroup is unshared by the init once it
 * sits in the job's cgroup. The network namespace is the exception: creating
 * one per job costs 0.4 ms (idle) to 2.7 ms (load average 14) on the caller
 * plus ~1 ms of kernel teardown charged to nobody (PERF-NOTES.md), against
 * 22-32 us for the check below, so the runtime creates empty ones up
 * front, one per worker slot, and each job enters its slot's with setns().
 * That stays safe because a job has no capabilities: it cannot bring lo up,
 * add routes or interfaces, or change sysctls; seccomp lets it create only
 * AF_UNIX sockets. Jobs that run at the same time use different slots.
 *
 * Consecutive jobs of a slot: a job's sockets die with its processes, except
 * those parked in flight (an SCM_RIGHTS cycle), which the kernel's unix
 * garbage collector frees some milliseconds later, and which keep their
 * abstract names, their /proc/net/unix lines and every file they carry open
 * (with its locks) meanwhile. So each slot's namespace comes with a probe
 * (its /proc/net/protocols, opened from inside it): once no job runs in the
 * slot, a count of its AF_UNIX sockets above zero means the previous job
 * left something in flight, and the slot gets a fresh namespace
 * (sb_netns_slot_release, called by proc.c). An in-flight descriptor can only ride
 * in an AF_UNIX socket, and the job's sockets are all in its slot's
 * namespace: a count of zero means nothing of it is left at all. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

typedef struct {
  int fd, probe, err;
} netns_made;

/* On a thread of its own, which then ends: unshare(CLONE_NEWNET) acts on
 * the calling thread only, and going back by setns() is not always allowed
 * (a daemon that is root of a user namespace may not enter the namespace
 * it started in, owned by the parent one). No fork of a large daemon. */
static void *make_netns(void *arg) {
  netns_made *m = arg;
  if (unshare(CLONE_NEWNET) < 0) {
    m->err = errno;
    return NULL;
  }
  m->fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  /* /proc/net files show the namespace of the thread that opened them */
  m->probe = m->fd < 0 ? -1 : open("/proc/thread-self/net/protocols", O_RDONLY | O_CLOEXEC);
  if (m->probe < 0) m->err = errno;
  return NULL;
}

int sb_netns_create(int *probe, char err[SB_ERR_MAX]) {
  netns_made m = {-1, -1, 0};
  pthread_t t;
  int rc = pthread_create(&t, NULL, make_netns, &m);
  if (rc) {
    sb_err(err, "netns: pthread_create: %s", strerror(rc));
    return -rc;
  }
  pthread_join(t, NULL);
  *probe = m.probe;
  if (m.probe < 0) {
    if (m.fd >= 0) close(m.fd);
    sb_err(err, "netns: a new network namespace and its /proc/net/protocols: %s", strerror(m.err));
    return -(m.err ? m.err : EIO);
  }
  return m.fd;
}

/* The "UNIX" and "UNIX-STREAM" lines whole in buf: their counts summed into
 * *total; returns how many were found, *end just past the later one. */
static int unix_lines(const char *buf, long *total, size_t *end) {
  int lines = 0;
  *total = 0;
  for (const char *l = buf, *nl; (nl = strchr(l, '\n')) != NULL; l = nl + 1) {
    if (strncmp(l, "UNIX ", 5) != 0 && strncmp(l, "UNIX-STREAM ", 12) != 0) continue;
    long size, count;
    if (sscanf(l, "%*s %ld %ld", &size, &count) != 2) return -EPROTO;
    *total += count;
    *end = (size_t)(nl + 1 - buf);
    lines++;
  }
  return lines;
}

/* The kernel renders /proc/net/protocols a line at a time and stops once a
 * read is filled; the lines' order is the kernel's one list of protocols
 * (the same in every namespace). So, once a full read showed where the two
 * UNIX lines end, a read of that much (plus room for wider counts) renders
 * only the lines up to them: a third less work on the loop thread per job
 * here. Both lines not whole in that prefix: the full read, as before. */
static _Atomic size_t unix_prefix;
#define SB_UNIX_PREFIX_SLACK 128

int sb_netns_unix_sockets(int probe) {
  /* /proc/net/protocols: "UNIX" (datagram, seqpacket) and "UNIX-STREAM"
   * lines, the third column counting the sockets alive in that namespace
   * (in flight included: they are freed only when collected). */
  char buf[16384];
  long total = 0;
  size_t end = 0, prefix = atomic_load(&unix_prefix);
  if (prefix > 0) {
    ssize_t n = pread(probe, buf, prefix, 0);
    if (n < 0) return -errno;
    buf[n] = '\0';
    int lines = unix_lines(buf, &total, &end);
    if (lines < 0) return lines;
    if (lines == 2) return (int)total;
  }
  ssize_t n = pread(probe, buf, sizeof buf - 1, 0);
  if (n < 0) return -errno;
  buf[n] = '\0';
  int lines = unix_lines(buf, &total, &end);
  if (lines != 2) return -EPROTO;
  if (end + SB_UNIX_PREFIX_SLACK < sizeof buf) atomic_store(&unix_prefix, end + SB_UNIX_PREFIX_SLACK);
  return (int)total;
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

int sb_netns_slot_take(sb_runtime *rt, int slot) {
  if (rt->userns || slot < 0 || !rt->n_netns) return -1;
  int i = slot % rt->n_netns;
  rt->netns_users[i]++;
  return rt->netns_fds[i];
}

int sb_netns_slot_release(sb_runtime *rt, int slot, uid_t uid, char err[SB_ERR_MAX]) {
  if (rt->userns || slot < 0 || !rt->n_netns) return 0;
  int i = slot % rt->n_netns;
  if (rt->netns_users[i] > 0) rt->netns_users[i]--;
  if (rt->netns_users[i] > 0) return 0; /* runs sharing a slot (the CLI) see each other anyway */
  int left = sb_netns_unix_sockets(rt->netns_probes[i]);
  if (left == 0) return 0;
  int probe, fd = sb_netns_create(&probe, err);
  if (fd < 0) return -1; /* cannot happen short of ENOMEM; the slot keeps its namespace */
  rt->netns_rebuilds++;
  close(rt->netns_fds[i]); /* lives on while its sockets do */
  if (left > 0) {
    sb_uid_hold(rt, uid, rt->netns_probes[i], sb_netns_unix_sockets, 0, false);
  } else { /* the probe could not be read: judged by time */
    close(rt->netns_probes[i]);
    sb_uid_hold(rt, uid, -1, NULL, 200, false);
  }
  rt->netns_fds[i] = fd;
  rt->netns_probes[i] = probe;
  return 0;
}

int sb_ns_of_job(int pidfd, pid_t pid, unsigned long pidfd_ioctl, const char *name) {
  int fd = ioctl(pidfd, pidfd_ioctl, 0);
  if (fd >= 0) {
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
  }
  char ns[64]; /* older kernels: by pid, which the init keeps until we reap it */
  snprintf(ns, sizeof ns, "/proc/%d/ns/%s", (int)pid, name);
  return open(ns, O_RDONLY | O_CLOEXEC);
}
