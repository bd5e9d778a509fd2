/* A job's ipc namespace after the job (parent side). Its SysV objects and
 * POSIX message queues outlive its processes until the kernel frees the
 * namespace, which happens on a work queue after an RCU grace period: a
 * job starting at once with the same uid (a uid range as small as the
 * number of workers) would find that uid's RLIMIT_MSGQUEUE bytes and
 * SHM_LOCK'd memory (RLIMIT_MEMLOCK, per uid) still charged. So the daemon
 * empties the namespace itself once the job's processes are gone: every
 * SysV object removed (a SHM_LOCK'd segment with no attach is destroyed and
 * uncharged at IPC_RMID), every queue unlinked (freed and uncharged at
 * once unless an fd of it is still open: in flight, which namespaces.c's
 * probe sees, and then the uid is held, uids.c). The namespace that is left
 * holds nothing charged to the uid.
 *
 * It runs on a thread of its own (0.1-0.3 ms a job, up to a few ms under
 * load: the detached mqueue mount's release waits for RCU), the uid held
 * (uids.c) until it is done. setns(CLONE_NEWIPC) acts on the calling thread
 * only and is allowed in a threaded process. */
#include "thread.h"
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>

#ifndef PIDFD_GET_IPC_NAMESPACE
#define PIDFD_GET_IPC_NAMESPACE _IO(0xFF, 2) /* linux/pidfd.h, 6.11+ */
#endif

int sb_ipc_job_ns(int pidfd, pid_t pid) {
  int fd = sb_ns_of_job(pidfd, pid, PIDFD_GET_IPC_NAMESPACE, "ipc");
  return fd < 0 ? -errno : fd;
}

/* SysV: every index up to the highest in use (the *_INFO call's result),
 * by *_STAT_ANY (4.17+), which needs no read permission. */
static int drain_sysv(void) {
  int n = 0;
  struct shm_info si;
  int max = shmctl(0, SHM_INFO, (struct shmid_ds *)&si);
  for (int i = 0; i <= max; i++) {
    struct shmid_ds ds;
    int id = shmctl(i, SHM_STAT_ANY, &ds);
    if (id >= 0 && shmctl(id, IPC_RMID, NULL) == 0) n++;
  }
  struct msginfo mi;
  max = msgctl(0, MSG_INFO, (struct msqid_ds *)&mi);
  for (int i = 0; i <= max; i++) {
    struct msqid_ds ds;
    int id = msgctl(i, MSG_STAT_ANY, &ds);
    if (id >= 0 && msgctl(id, IPC_RMID, NULL) == 0) n++;
  }
  struct seminfo sm;
  max = semctl(0, 0, SEM_INFO, &sm);
  for (int i = 0; i <= max; i++) {
    struct semid_ds ds;
    int id = semctl(i, 0, SEM_STAT_ANY, &ds);
    if (id >= 0 && semctl(id, 0, IPC_RMID) == 0) n++;
  }
  return n;
}

/* POSIX queues: the namespace's mqueue file system, mounted detached (the
 * new mount API takes the calling thread's ipc namespace), listed and
 * emptied. */
static int drain_mqueue(void) {
  int fs = (int)syscall(SYS_fsopen, "mqueue", FSOPEN_CLOEXEC);
  if (fs < 0) return -errno;
  int mnt = -1;
  if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
    mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
  int e = mnt < 0 ? errno : 0;
  close(fs);
  if (mnt < 0) return -e;
  int dfd = openat(mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  close(mnt);
  if (dfd < 0) return -errno;
  DIR *d = fdopendir(dfd);
  if (!d) {
    close(dfd);
    return -ENOMEM;
  }
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)))
    if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 && unlinkat(dirfd(d), de->d_name, 0) == 0) n++;
  closedir(d);
  return n;
}

/* On the ipc thread, which stays in the namespace it drained last: going
 * back is not always allowed (a daemon that is root of a user namespace may
 * not enter the one it started in), and nothing else runs there. */
static int drain(int ipc_ns) {
  if (setns(ipc_ns, CLONE_NEWIPC) < 0) return -errno;
  int n = drain_sysv();
  int q = drain_mqueue();
  return q == -ENODEV ? n : q < 0 ? q : n + q; /* ENODEV: no POSIX queues in this kernel */
}

typedef struct {
  int ipc_ns;
  struct sb_uid_hold *hold;
} drain_msg;

/* Not emptied (cannot happen short of ENOMEM): the kernel frees the
 * namespace a grace period or so later; the uid waits that long. */
static void drained(int rc, struct sb_uid_hold *h) {
  if (rc < 0) usleep(200 * 1000);
  sb_uid_hold_done(h);
}

static void *ipc_main(void *arg) {
  sb_runtime *rt = arg;
  drain_msg m;
  for (;;) {
    ssize_t n = read(rt->ipc_pipe[0], &m, sizeof m);
    if (n < 0 && errno == EINTR) continue;
    if (n != (ssize_t)sizeof m) break; /* EOF: sb_ipc_fini */
    int rc = drain(m.ipc_ns);
    close(m.ipc_ns);
    drained(rc, m.hold);
  }
  return NULL;
}

void sb_ipc_init(sb_runtime *rt) {
  rt->ipc_pipe[0] = rt->ipc_pipe[1] = -1;
  if (pipe2(rt->ipc_pipe, O_CLOEXEC) < 0) return;
  if (sbu_thread_start(&rt->ipc_thread, ipc_main, rt) != 0) {
    sbu_closep(&rt->ipc_pipe[0]);
    sbu_closep(&rt->ipc_pipe[1]);
    return;
  }
  rt->ipc_started = true;
}

void sb_ipc_drain_later(sb_runtime *rt, int ipc_ns, uid_t uid) {
  drain_msg m = {ipc_ns, sb_uid_hold(rt, uid, -1, NULL, 0, true)};
  /* a pipe write this small is atomic; a full pipe only means the thread is behind */
  if (rt->ipc_started && write(rt->ipc_pipe[1], &m, sizeof m) == (ssize_t)sizeof m) return;
  close(ipc_ns); /* no thread: not emptied, the kernel frees it a grace period or so later */
  sb_uid_hold_done(m.hold);
  sb_uid_hold(rt, uid, -1, NULL, 200, false);
}

void sb_ipc_fini(sb_runtime *rt) {
  if (!rt->ipc_started) return;
  sbu_closep(&rt->ipc_pipe[1]);
  pthread_join(rt->ipc_thread, NULL);
  sbu_closep(&rt->ipc_pipe[0]);
  rt->ipc_started = false;
}
