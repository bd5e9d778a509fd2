/* The spawner process (HACKING.md, "The spawner"): surgebox-spawner, a
 * static program (spawner_main.c) that clones sandbox inits on request. It holds its socket, an
 * empty cap_t and, during one request, that request's descriptors and
 * payload; nothing of the daemon (no heap, no client buffers, no libuv, no
 * other descriptor). The payload is mapped for the clone and unmapped
 * before the answer, so the next init copies no page of it: an init starts
 * as a copy of this small process, whatever the daemon holds.
 *
 * Inits are cloned with CLONE_PARENT, so they are the daemon's children,
 * not ours: the kernel gives them our exit signal (SIGCHLD: the daemon
 * started us with it); we wait only for our own children, the warm zygotes
 * (warm.c), and what a dead zygote left to us, its subreaper. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#define SB_CLONE_INTO_CGROUP 0x200000000ULL

/* clone3's argument block (linux/sched.h's struct clone_args). */
struct clone3_args {
  uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};

/* One request's memory: the payload, mapped private and writable
 * (sb_plan_unmarshal writes the plan's pointer arrays into it). */
typedef struct {
  void *payload;
  size_t payload_len;
} req_mem;

static void req_mem_free(req_mem *m) {
  if (m->payload) munmap(m->payload, m->payload_len);
  memset(m, 0, sizeof *m);
}

/* The plan from the request's payload: its pointers point into the mapping. */
static int rebuild(const sb_spawn_req *r, int payload_fd, req_mem *m, sb_plan *a) {
  if (r->payload_len == 0 || r->payload_len > SIZE_MAX) return -EINVAL;
  int rc = sb_plan_map(payload_fd, (size_t)r->payload_len, a, &m->payload, &m->payload_len);
  if (!rc && (r->kind == SB_SPAWN_INIT || r->kind == SB_SPAWN_ZYGOTE) && !a->argv[0]) rc = -EINVAL;
  return rc;
}

/* pool.c's template builder (SB_SPAWN_TEMPLATE_BUILDER; no malloc): builds
 * plan's root in its new mount namespace, says 'y' (or 'n' and why) on
 * st_fd and waits to be killed. Here, with the other clone entries, so
 * that the spawner calls nothing of the pool, its user. */
static __attribute__((noreturn)) void template_builder_main(const sb_mount_plan *plan, int st_fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  char what[SB_ERR_MAX]; /* 'y', or 'n' and why */
  what[0] = 'n';
  what[1] = '\0';
  int rc = sb_mounts_build_root(plan, what + 1, sizeof what - 1);
  if (rc >= 0) what[0] = 'y';
  if (write(st_fd, what, rc < 0 ? strlen(what) + 1 : 1) < 0) _exit(1);
  pause();
  _exit(0);
}

/* The init, the daemon's child (exit signal 0 = ours, SIGCHLD). */
static void clone_init(int sock, const sb_spawn_req *r, int cgroup_fd, const sb_plan *a, sb_spawn_reply *rep,
                       int *pidfd) {
  unsigned long flags = ((unsigned long)r->clone_flags & ~0xffUL) | CLONE_PARENT | CLONE_PIDFD;
  long pid = -1;
  bool into = r->into_cgroup && cgroup_fd >= 0;
  if (into) {
    struct clone3_args ca;
    memset(&ca, 0, sizeof ca);
    ca.flags = flags | SB_CLONE_INTO_CGROUP;
    ca.pidfd = (uint64_t)(uintptr_t)pidfd;
    ca.cgroup = (uint64_t)cgroup_fd;
    pid = syscall(SYS_clone3, &ca, sizeof ca);
    if (pid < 0 && (errno == ENOSYS || errno == E2BIG || errno == EINVAL || errno == EPERM)) {
      rep->into_refused = true; /* the daemon attaches this one at READY; later inits join themselves (child.c) */
      into = false;
    }
  }
  if (!into) pid = syscall(SYS_clone, flags, 0, pidfd, 0, 0);
  if (pid == 0 && r->kind == SB_SPAWN_TEMPLATE_BUILDER) {
    close(sock);
    template_builder_main(&a->mounts, a->ctl_fd);
  }
  if (pid == 0) {
    prctl(PR_SET_NAME, "surgebox-init", 0, 0, 0); /* from its first instruction: per-process figures (bench/) */
    sb_child_main(a);
  }
  if (pid < 0) {
    rep->err = errno;
    snprintf(rep->msg, sizeof rep->msg, "clone: %s", strerror(errno));
    return;
  }
  rep->pid = (int32_t)pid;
  rep->born_inside = into;
}

/* A zygote (warm.c): our own child (reaped in sb_spawner_serve's loop), dying with us,
 * the subreaper of what its forks leave (a warm program, once the fork that
 * entered the job's namespaces exits); its socket on descriptor 3, nothing
 * else open; a mount namespace of its own with an empty /tmp, so that the
 * host's /tmp (the job's HOME) does not shape its start-up: a user site
 * there (~/.local/lib/pythonX.Y/site-packages, its .pth files) would run as
 * root in the zygote, and a cold job's /tmp is empty; and with /usr, /etc,
 * /lib* served by read-only overlays of its own (zygote_root.c), so that
 * its executable, a warm program's /proc/self/exe, is no inode of the
 * host's (issue 35). Where the overlays cannot be made nothing is cloned
 * and the answer says why (warm.c runs the job cold, saying it); where a
 * later mount fails the zygote does not start (an early death, warm.c). */
#define SB_ZYGOTE_FD 3
#define SB_ZYGOTE_KEPT "/tmp/.surgebox-zygote"
#define SB_ZYGOTE_LIB_VAR "SURGEBOX_ZYGOTE_LIB="

/* The zygote's own files (its script's directory, libsbwarm.so's) may lie
 * under /tmp: a build tree there (a CI clone). Such a directory is opened
 * before the empty /tmp hides it, then bound read-only at
 * SB_ZYGOTE_KEPT/NAME inside that empty /tmp, and the path rewritten to
 * it; nothing else of the host's /tmp. The script's is the directory UP
 * levels above it: the zygote compiles the tracer's _strip_hook from
 * ../../tracers/python beside warm/python (toolchains/ in the tree,
 * share/surgebox/ installed), so their common root is kept. */
static const char *kept_cut(const char *path, int up) {
  const char *cut = path + strlen(path);
  for (int i = 0; i < up; i++) {
    while (cut > path && *--cut != '/') {
    }
  }
  return cut - path > 5 ? cut : NULL; /* still a directory beneath /tmp/ */
}

static int keep_open(const char *path, int up) {
  if (strncmp(path, "/tmp/", 5) != 0) return -1;
  const char *cut = kept_cut(path, up);
  if (!cut) cut = kept_cut(path, 1);
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%.*s", cut ? (int)(cut - path) : 0, path);
  int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) _exit(127);
  return fd;
}

static void keep_bind(int dfd, const char *name, const char *path, int up, char out[PATH_MAX]) {
  char src[64], dst[PATH_MAX];
  const char *cut = kept_cut(path, up);
  if (!cut) cut = kept_cut(path, 1);
  snprintf(src, sizeof src, "/proc/self/fd/%d", dfd);
  snprintf(dst, sizeof dst, "%s/%s", SB_ZYGOTE_KEPT, name);
  /* read-only by mount_setattr where there is one: it only adds flags, so
   * a flag the kernel locked on the source (user-namespace mode: a host
   * mount's noexec) is never asked to be cleared, as a remount would */
  struct mount_attr ma = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
  if ((mkdir(SB_ZYGOTE_KEPT, 0755) < 0 && errno != EEXIST) || mkdir(dst, 0755) < 0 ||
      mount(src, dst, NULL, MS_BIND, NULL) < 0 ||
      (syscall(SYS_mount_setattr, AT_FDCWD, dst, 0, &ma, sizeof ma) < 0 &&
       (errno != ENOSYS || mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)))
    _exit(127);
  close(dfd);
  snprintf(out, PATH_MAX, "%s%s", dst, cut ? cut : "");
}

static void clone_zygote(int sock, const sb_plan *a, sb_spawn_reply *rep, int *pidfd) {
  /* Its read-only directories as overlays of its own (zygote_root.c), made
   * here: where they cannot be, the answer says why and warm.c runs the
   * job cold; nothing is cloned. */
  sb_zygote_root zr;
  char why[sizeof rep->msg - 64];
  int zrc = sb_zygote_root_make(&zr, a->argv[0], a->mounts.newroot, a->mounts.submounts, why, sizeof why);
  if (zrc < 0) {
    rep->err = -zrc;
    snprintf(rep->msg, sizeof rep->msg, "no overlays of its own for the zygote: %s", why);
    return;
  }
  long pid = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, pidfd, 0, 0);
  if (pid == 0) {
    close(sock);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) _exit(127);
    if (a->ctl_fd == SB_ZYGOTE_FD ? fcntl(SB_ZYGOTE_FD, F_SETFD, 0) < 0 : dup2(a->ctl_fd, SB_ZYGOTE_FD) < 0) _exit(127);
    syscall(SYS_close_range, SB_ZYGOTE_FD + 1, ~0u, CLOSE_RANGE_CLOEXEC);
    size_t n_env = 0, lib_at = (size_t)-1;
    for (; a->envp[n_env]; n_env++)
      if (strncmp(a->envp[n_env], SB_ZYGOTE_LIB_VAR, strlen(SB_ZYGOTE_LIB_VAR)) == 0) lib_at = n_env;
    const char *lib = lib_at != (size_t)-1 ? a->envp[lib_at] + strlen(SB_ZYGOTE_LIB_VAR) : "";
    /* our own copies of argv and envp (this is a clone without CLONE_VM) */
    const char *argv[3] = {a->argv[0], a->argv[1], NULL};
    const char *envp[n_env + 1];
    memcpy(envp, a->envp, (n_env + 1) * sizeof *envp);
    /* in user-namespace mode too: the spawner is root of the runtime's
     * own user namespace, which owns its mount namespace (runtime.c) */
    if (unshare(CLONE_NEWNS) < 0) _exit(127);
    /* a chroot's "/" may be no mount point (EINVAL): then from the namespace's root (runtime.c) */
    if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0 && (errno != EINVAL || sb_mount_ns_propagation(MS_SLAVE) < 0))
      _exit(127);
    /* opened in the new mount namespace (a bind's source must be a mount of ours), before /tmp is hidden */
    int script_dfd = a->argv[1] ? keep_open(a->argv[1], 3) : -1, lib_dfd = keep_open(lib, 1);
    if (sb_zygote_root_enter(&zr, a->mounts.submounts) < 0) _exit(127);
    if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=1777") < 0) _exit(127);
    static char script_kept[PATH_MAX], lib_kept[PATH_MAX], lib_var[PATH_MAX + 32];
    if (script_dfd >= 0) {
      keep_bind(script_dfd, "script", a->argv[1], 3, script_kept);
      argv[1] = script_kept;
    }
    if (lib_dfd >= 0) {
      keep_bind(lib_dfd, "lib", lib, 1, lib_kept);
      snprintf(lib_var, sizeof lib_var, "%s%s", SB_ZYGOTE_LIB_VAR, lib_kept);
      envp[lib_at] = lib_var;
    }
    if (chdir("/") < 0) _exit(127);
    signal(SIGPIPE, SIG_DFL); /* every disposition at its default, as for a cold python3 (warm_lib.c) */
    signal(SIGCHLD, SIG_DFL);
    sb_write_file("/proc/self/oom_score_adj", "-1000"); /* as an init's: its children set theirs as a program does */
    execve(argv[0], (char *const *)argv, (char *const *)envp);
    _exit(127);
  }
  int e = errno;
  sb_zygote_root_close(&zr); /* the zygote holds its own copies */
  if (pid < 0) {
    rep->err = e;
    snprintf(rep->msg, sizeof rep->msg, "clone (zygote): %s", strerror(e));
    return;
  }
  rep->pid = (int32_t)pid;
}

static void reply(int sock, const sb_spawn_reply *rep, int pidfd) {
  sb_sendmsg_fds(sock, rep, sizeof *rep, &pidfd, pidfd >= 0 ? 1 : 0, MSG_NOSIGNAL);
}

/* One request: 0, or -1 when the daemon is gone. */
static int serve_one(int sock, cap_t empty_caps) {
  sb_spawn_req r;
  union {
    char buf[CMSG_SPACE(SB_SPAWN_NFD * sizeof(int))];
    struct cmsghdr align;
  } u;
  struct iovec iov = {.iov_base = &r, .iov_len = sizeof r};
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
  ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  if (n < 0 && errno == EINTR) return 0;
  if (n <= 0) return -1;
  int got[SB_SPAWN_NFD], ngot = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      for (int i = 0; i < k; i++) {
        int fd;
        memcpy(&fd, CMSG_DATA(c) + (size_t)i * sizeof(int), sizeof fd);
        if (ngot < SB_SPAWN_NFD) got[ngot++] = fd;
        else close(fd);
      }
    }
  sb_spawn_reply rep;
  memset(&rep, 0, sizeof rep);
  int fd[SB_SPAWN_NFD];
  int want = 0;
  for (int i = 0; i < SB_SPAWN_NFD; i++) want += (n == (ssize_t)sizeof r && (r.fd_mask >> i) & 1) ? 1 : 0;
  bool ok = n == (ssize_t)sizeof r && r.magic == SB_SPAWN_MAGIC && want == ngot && !(mh.msg_flags & MSG_CTRUNC);
  for (int i = 0, k = 0; i < SB_SPAWN_NFD; i++) fd[i] = ok && ((r.fd_mask >> i) & 1) ? got[k++] : -1;
  sb_plan a;
  sb_plan_init(&a);
  req_mem mem = {0};
  int rc = ok ? 0 : -EPROTO;
  bool init = ok && r.kind == SB_SPAWN_INIT;
  if (ok && (fd[SB_PLAN_FD(ctl_fd)] < 0 ||
             (r.kind != SB_SPAWN_INIT && r.kind != SB_SPAWN_TEMPLATE_BUILDER && r.kind != SB_SPAWN_ZYGOTE) ||
             (init && (fd[SB_PLAN_FD(stdin_fd)] < 0 || fd[SB_PLAN_FD(stdout_fd)] < 0 || fd[SB_PLAN_FD(stderr_fd)] < 0))))
    rc = -EPROTO;
  if (!rc) rc = rebuild(&r, fd[SB_SPAWN_FD_PAYLOAD], &mem, &a);
  int pidfd = -1;
  if (rc) {
    rep.err = -rc;
    snprintf(rep.msg, sizeof rep.msg, "spawner: malformed request (%s)", strerror(-rc));
  } else {
    memcpy(a.fds, fd, sizeof a.fds); /* the plan's descriptors come first, in its order */
    a.empty_caps = empty_caps;
    if (r.kind == SB_SPAWN_ZYGOTE) clone_zygote(sock, &a, &rep, &pidfd);
    else clone_init(sock, &r, fd[SB_SPAWN_FD_CGROUP], &a, &rep, &pidfd);
  }
  req_mem_free(&mem); /* before the answer: the next init copies none of it */
  for (int i = 0; i < ngot; i++) close(got[i]);
  reply(sock, &rep, pidfd);
  if (pidfd >= 0) close(pidfd);
  return 0;
}

void sb_spawner_serve(int sock, pid_t ppid) {
  /* Dies with the daemon (a parent gone before the prctl: noticed here). */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != ppid) _exit(0);
  prctl(PR_SET_NAME, "surgebox-spawn", 0, 0, 0);
  signal(SIGPIPE, SIG_IGN); /* a daemon gone mid-answer must not kill us before we read EOF */
  /* Nothing of the daemon's: stdio on /dev/null (or left, where there is
   * none), every other descriptor but the socket closed. */
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int i = 0; null >= 0 && i < 3; i++)
    if (i != sock) dup2(null, i);
  if (sock > 3) syscall(SYS_close_range, 3, (unsigned)sock - 1, 0);
  syscall(SYS_close_range, (unsigned)sock + 1, ~0u, 0);
  cap_t empty = cap_init();
  if (!empty) _exit(1);
  /* Our only children are zygotes (inits are CLONE_PARENT), reaped here.
   * Not SA_NOCLDWAIT: every init, a copy of us, would inherit it and never
   * see its program's wait status. */
  /* The subreaper of the zygotes' forks too: a warm program whose zygote
   * died comes to us (not to the host's init, which may never reap it: its
   * sandbox init's exit waits until it is), and is reaped within 100 ms. */
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  for (;;) {
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    struct pollfd pf = {.fd = sock, .events = POLLIN};
    int r = poll(&pf, 1, 100);
    if (r < 0 && errno != EINTR) break;
    if (r > 0 && serve_one(sock, empty) != 0) break;
  }
  _exit(0);
}
