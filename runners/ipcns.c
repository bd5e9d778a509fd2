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
 * setns(CLONE_NEWIPC) acts on the calling thread only and is allowed in a
 * threaded process; we go back to our own namespace before returning. */
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
  int fd = ioctl(pidfd, PIDFD_GET_IPC_NAMESPACE, 0);
  if (fd >= 0) {
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
  }
  char ns[64]; /* older kernels: by pid, which the init keeps until we reap it */
  snprintf(ns, sizeof ns, "/proc/%d/ns/ipc", (int)pid);
  fd = open(ns, O_RDONLY | O_CLOEXEC);
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

int sb_ipc_drain(sb_runtime *rt, int ipc_ns) {
  if (ipc_ns < 0 || rt->own_ipc_fd < 0) return -EBADF;
  if (setns(ipc_ns, CLONE_NEWIPC) < 0) return -errno;
  int n = drain_sysv();
  int q = drain_mqueue();
  if (setns(rt->own_ipc_fd, CLONE_NEWIPC) < 0) abort(); /* never go on in the job's namespace */
  return q < 0 ? q : n + q;
}
