/* A teardown queue: a thread that closes descriptors and runs what it is
 * handed ({fn, arg}: a slot cgroup's cleaning) in the order they were queued, off the caller's thread (the
 * daemon's loop). Closing a job's mount namespace unmounts its ~40 mounts
 * and frees its tmpfs (hundreds of MB, 100k dentries: seconds); cleaning a
 * slot's cgroup (cgroup_slot.c) kills what is left in it and reclaims its
 * page cache; unmounting a workspace's /app waits for an RCU grace period
 * (namespace_unlock: up to a second on a loaded machine, measured with a
 * neighbour's 100k-dentry teardown). The pool has one queue for what no slot waits on (dropped
 * templates, jobs in a cgroup of their own), and each slot one of its own,
 * so that one slot's long teardown never delays another's. */
#include "thread.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

/* Carried whole through the pipe (under PIPE_BUF: one atomic write), so
 * this thread never frees what the loop allocated: glibc's free() of a
 * main-arena chunk takes the arena's lock, and this thread preempted while
 * holding it stalled the loop's next malloc (futex waits of the loop thread
 * sampled at load 30). */
typedef struct {
  int fd;                       /* closed first; -1: none */
  sb_teardown_call then;        /* then called (a slot's cleaning, cgroup_slot.c) */
  char umount[SB_TEARDOWN_PATH]; /* a workspace's mountpoint: unmounted and removed; "": none */
} item;
_Static_assert(sizeof(item) <= PIPE_BUF, "one atomic pipe write per item");

static void *teardown_main(void *arg) {
  sb_teardown *t = arg;
  item it;
  for (;;) {
    ssize_t n = read(t->pipe[0], &it, sizeof it);
    if (n < 0 && errno == EINTR) continue;
    if (n != (ssize_t)sizeof it) break; /* EOF: sb_teardown_stop */
    if (it.fd >= 0) close(it.fd);
    if (it.then.fn) it.then.fn(it.then.arg);
    if (it.umount[0]) {
      umount2(it.umount, MNT_DETACH);
      /* unmounted, an empty directory of ours; anything else (the unmount
       * failed) stays for the instance's removal at exit (runtime.c) */
      rmdir(it.umount);
    }
  }
  return NULL;
}

void sb_teardown_init(sb_teardown *t) {
  memset(t, 0, sizeof *t);
  t->pipe[0] = t->pipe[1] = -1;
}

int sb_teardown_start(sb_teardown *t) {
  sb_teardown_init(t);
  if (pipe2(t->pipe, O_CLOEXEC) < 0) return -errno;
  fcntl(t->pipe[1], F_SETPIPE_SZ, 1 << 20); /* best effort: room for ~900 items before a push waits */
  int rc = sbu_thread_start(&t->thread, teardown_main, t);
  if (rc != 0) {
    sbu_closep(&t->pipe[0]);
    sbu_closep(&t->pipe[1]);
    return -rc;
  }
  t->started = true;
  return 0;
}

bool sb_teardown_push(sb_teardown *t, int fd, sb_teardown_call then) {
  return sb_teardown_push_umount(t, fd, then, NULL);
}

bool sb_teardown_push_umount(sb_teardown *t, int fd, sb_teardown_call then, const char *path) {
  if (!t->started) return false;
  item it;
  memset(&it, 0, sizeof it);
  it.fd = fd;
  it.then = then;
  if (path && snprintf(it.umount, sizeof it.umount, "%s", path) >= (int)sizeof it.umount) return false;
  /* A pipe write of a few bytes is atomic; a full pipe (thousands queued)
   * blocks briefly, which only means the thread is behind. */
  ssize_t n;
  while ((n = write(t->pipe[1], &it, sizeof it)) < 0 && errno == EINTR) {
  }
  return n == (ssize_t)sizeof it;
}

void sb_teardown_stop(sb_teardown *t) {
  if (!t->started) return;
  sbu_closep(&t->pipe[1]); /* the thread finishes what is queued, then reads EOF */
  pthread_join(t->thread, NULL);
  sbu_closep(&t->pipe[0]);
  t->started = false;
}
