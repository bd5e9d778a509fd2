/* Mount and namespace escapes: mount family, chroot, pivot_root, unshare and
 * setns, clone()/clone3() with namespace flags. Any child that does get
 * created exits at once. */
#include "hostile.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static void try_clone(const char *name, unsigned long flags) {
  long pid = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
  if (pid == 0) _exit(0);
  result("clone.%s=%s", name, outcome(pid));
  if (pid > 0) waitpid((pid_t)pid, NULL, 0);
}

static void try_clone3(const char *name, uint64_t flags) {
#ifdef SYS_clone3
  struct clone_args ca;
  memset(&ca, 0, sizeof ca);
  ca.flags = flags;
  ca.exit_signal = SIGCHLD;
  long pid = syscall(SYS_clone3, &ca, sizeof ca);
  if (pid == 0) _exit(0);
  result("clone3.%s=%s", name, outcome(pid));
  if (pid > 0) waitpid((pid_t)pid, NULL, 0);
#else
  result("clone3.%s=NOTDEFINED", name);
#endif
}

int main(void) {
  result("mount_tmpfs=%s", outcome(mount("none", "/tmp", "tmpfs", 0, "size=1m")));
  result("mount_proc=%s", outcome(mount("proc", "/tmp", "proc", 0, NULL)));
  result("remount_usr_rw=%s", outcome(mount(NULL, "/usr", NULL, MS_REMOUNT | MS_BIND, NULL)));
  result("bind_root=%s", outcome(mount("/", "/tmp", NULL, MS_BIND | MS_REC, NULL)));
  result("umount_app=%s", outcome(umount2("/app", MNT_DETACH)));
  result("umount_proc=%s", outcome(umount2("/proc", MNT_DETACH)));
  result("chroot=%s", outcome(chroot("/tmp")));
  result("pivot_root=%s", outcome(syscall(SYS_pivot_root, "/tmp", "/tmp")));
#ifdef SYS_fsopen
  long fd = syscall(SYS_fsopen, "tmpfs", 0);
  result("fsopen=%s", outcome(fd));
  if (fd >= 0) close((int)fd);
#endif
#ifdef SYS_open_tree
  fd = syscall(SYS_open_tree, AT_FDCWD, "/usr", 1 /* OPEN_TREE_CLONE */);
  result("open_tree=%s", outcome(fd));
  if (fd >= 0) close((int)fd);
#endif
#ifdef SYS_move_mount
  result("move_mount=%s", outcome(syscall(SYS_move_mount, -1, "", AT_FDCWD, "/tmp", 0)));
#endif
#ifdef SYS_fsmount
  result("fsmount=%s", outcome(syscall(SYS_fsmount, -1, 0, 0)));
#endif
#ifdef SYS_mount_setattr
  result("mount_setattr=%s", outcome(syscall(SYS_mount_setattr, -1, "", 0, NULL, 0)));
#endif

  result("unshare.user=%s", outcome(unshare(CLONE_NEWUSER)));
  result("unshare.mnt=%s", outcome(unshare(CLONE_NEWNS)));
  result("unshare.net=%s", outcome(unshare(CLONE_NEWNET)));
  result("unshare.pid=%s", outcome(unshare(CLONE_NEWPID)));
  result("unshare.uts=%s", outcome(unshare(CLONE_NEWUTS)));
  result("unshare.ipc=%s", outcome(unshare(CLONE_NEWIPC)));
  result("unshare.cgroup=%s", outcome(unshare(CLONE_NEWCGROUP)));
  result("unshare.time=%s", outcome(unshare(CLONE_NEWTIME)));

  try_clone("user", CLONE_NEWUSER);
  try_clone("mnt", CLONE_NEWNS);
  try_clone("net", CLONE_NEWNET);
  try_clone("pid", CLONE_NEWPID);
  try_clone("user_mnt", CLONE_NEWUSER | CLONE_NEWNS);
  try_clone3("user", CLONE_NEWUSER);
  try_clone3("mnt", CLONE_NEWNS);

  result("setns.badfd=%s", outcome(setns(-1, 0)));
  int nsfd = open("/proc/self/ns/net", O_RDONLY);
  result("open_ns=%s", outcome(nsfd));
  if (nsfd >= 0) {
    result("setns.self_net=%s", outcome(setns(nsfd, CLONE_NEWNET)));
    close(nsfd);
  }

  /* Control: a plain fork must still work. */
  pid_t p = fork();
  if (p == 0) _exit(0);
  result("plain_fork=%s", outcome(p));
  if (p > 0) waitpid(p, NULL, 0);
  return 0;
}
