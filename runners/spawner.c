/* The spawner, parent side: start it, send it one request per sandbox init,
 * restart it when it died. The process itself is spawner_serve.c; the wire
 * format and why it exists are in internal.h ("spawner.c") and HACKING.md
 * ("The spawner").
 *
 * It is an exec of surgebox-spawner, a static program (spawner_main.c; the
 * file found and vetted by spawner_exe.c and opened at the first start, so
 * an upgrade on disk does not mix binaries), marked by its argv[0] and
 * given its socket and our pid by SB_SPAWNER_ENV. Any binary that opens a
 * runtime starts one: surgeboxd, surgebox, surgebox-run and the tests. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* vfork + execveat: no copy of our page tables, and nothing of ours runs in
 * the child but the few calls below (signals blocked around it, handlers
 * back to default before they are unblocked, so none of ours runs on our
 * stack in the child). */
static int spawn(sb_spawner *sp, char err[SB_ERR_MAX]) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
    sb_err(err, "spawner: socketpair: %s", strerror(errno));
    return -errno;
  }
  int target = 3;
  while (target == sp->exe_fd) target++;
  char env[64];
  snprintf(env, sizeof env, SB_SPAWNER_ENV "=%d:%d", target, (int)getpid());
  char *argv[] = {SB_SPAWNER_ARGV0, NULL};
  char *envp[] = {env, NULL};
  sigset_t all, old, none;
  sigfillset(&all);
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  volatile int child_errno = 0;
  pid_t pid = vfork();
  if (pid == 0) {
    for (int s = 1; s < NSIG; s++) {
      struct sigaction sa;
      if (s != SIGPIPE && sigaction(s, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL) signal(s, SIG_DFL);
    }
    int ok = sv[1] == target ? fcntl(target, F_SETFD, 0) : dup2(sv[1], target);
    if (ok >= 0) {
      sigprocmask(SIG_SETMASK, &none, NULL);
      syscall(SYS_execveat, sp->exe_fd, "", argv, envp, AT_EMPTY_PATH);
    }
    child_errno = errno;
    _exit(127);
  }
  int e = pid < 0 ? errno : child_errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close(sv[1]);
  if (pid > 0 && e) waitpid(pid, NULL, 0);
  if (pid < 0 || e) {
    close(sv[0]);
    sb_err(err, "spawner: cannot start it (%s): %s", pid < 0 ? "vfork" : "execveat of surgebox-spawner", strerror(e));
    return -e;
  }
  sp->sock = sv[0];
  sp->pid = pid;
  return 0;
}

int sb_spawner_start(sb_runtime *rt, char err[SB_ERR_MAX]) {
  sb_spawner *sp = &rt->spawner;
  sp->sock = -1;
  sp->exe_fd = -1;
  pthread_mutex_init(&sp->mu, NULL);
  sp->mu_init = true;
  if ((sp->exe_fd = sb_spawner_exe_open(!rt->userns, err)) < 0) return sp->exe_fd;
  return spawn(sp, err);
}

static void reap(sb_spawner *sp) {
  if (sp->pid > 0) {
    kill(sp->pid, SIGKILL);
    while (waitpid(sp->pid, NULL, 0) < 0 && errno == EINTR) {
    }
  }
  sp->pid = 0;
  sbu_closep(&sp->sock);
}

void sb_spawner_stop(sb_runtime *rt) {
  sb_spawner *sp = &rt->spawner;
  if (!sp->mu_init) return;
  reap(sp);
  sbu_closep(&sp->exe_fd);
  pthread_mutex_destroy(&sp->mu);
  sp->mu_init = false;
}

/* A spawner gone (or wedged) is replaced at once by a fresh one; counted,
 * and said in status and the daemon's log (sb_runtime_spawner). */
static int restart(sb_spawner *sp, const char *why, char err[SB_ERR_MAX]) {
  reap(sp);
  sp->restarts++;
  snprintf(sp->last_restart, sizeof sp->last_restart, "%s", why);
  return spawn(sp, err);
}

uint64_t sb_runtime_spawner(const sb_runtime *rt, pid_t *pid, const char **last_restart) {
  if (pid) *pid = rt->spawner.pid;
  if (last_restart) *last_restart = rt->spawner.last_restart;
  return rt->spawner.restarts;
}

/* The request's header and its payload memfd: the plan, marshalled (plan.c). */
static int build_request(int kind, const sb_plan *a, unsigned long ns_flags, bool into, sb_spawn_req *r) {
  memset(r, 0, sizeof *r);
  r->magic = SB_SPAWN_MAGIC;
  r->kind = (uint32_t)kind;
  r->clone_flags = ns_flags;
  r->into_cgroup = into;
  size_t len;
  int fd = sb_plan_memfd(a, "surgebox-spawn", &len);
  r->payload_len = len;
  return fd;
}

static int send_request(int sock, const sb_spawn_req *r, const int *fds, int nfds) {
  ssize_t n = sb_sendmsg_fds(sock, r, sizeof *r, fds, nfds, MSG_NOSIGNAL);
  if (n < 0) return -errno;
  return n == (ssize_t)sizeof *r ? 0 : -EIO;
}

/* The answer, within the timeout: 0, -ETIMEDOUT, or -EPIPE (the spawner died). */
static int await_reply(int sock, sb_spawn_reply *rep, int *pidfd) {
  *pidfd = -1;
  uint64_t deadline = sbu_now_ns() + (uint64_t)SB_SPAWN_TIMEOUT_MS * 1000000ull;
  for (;;) {
    uint64_t now = sbu_now_ns();
    if (now >= deadline) return -ETIMEDOUT;
    struct pollfd pf = {.fd = sock, .events = POLLIN};
    int r = poll(&pf, 1, (int)((deadline - now) / 1000000) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -errno;
    if (r == 0) continue;
    union {
      char buf[CMSG_SPACE(sizeof(int))];
      struct cmsghdr align;
    } u;
    struct iovec iov = {.iov_base = rep, .iov_len = sizeof *rep};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return -EPIPE;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(pidfd, CMSG_DATA(c), sizeof(int));
    if (n != (ssize_t)sizeof *rep) {
      sbu_closep(pidfd);
      return -EPROTO;
    }
    rep->msg[sizeof rep->msg - 1] = '\0';
    return 0;
  }
}

/* Dead while idle (killed, OOM): its end reads EOF or hangs up. */
static bool idle_dead(int sock) {
  struct pollfd pf = {.fd = sock, .events = POLLIN};
  return sock < 0 || (poll(&pf, 1, 0) > 0 && (pf.revents & (POLLHUP | POLLERR | POLLIN)));
}

int sb_spawner_clone(sb_runtime *rt, int kind, const sb_plan *a, unsigned long ns_flags, int cgroup_fd,
                     sb_spawned *out, char err[SB_ERR_MAX]) {
  memset(out, 0, sizeof *out);
  out->pidfd = -1;
  sb_spawn_req r;
  int payload = build_request(kind, a, ns_flags, cgroup_fd >= 0, &r);
  if (payload < 0) {
    sb_err(err, "spawner: request: %s", strerror(-payload));
    return payload;
  }
  int slots[SB_SPAWN_NFD];
  memcpy(slots, a->fds, sizeof a->fds); /* every descriptor of the plan, in its order */
  slots[SB_SPAWN_FD_CGROUP] = cgroup_fd;
  slots[SB_SPAWN_FD_PAYLOAD] = payload;
  int fds[SB_SPAWN_NFD], nfds = 0;
  for (int i = 0; i < SB_SPAWN_NFD; i++)
    if (slots[i] >= 0) {
      r.fd_mask |= 1u << i;
      fds[nfds++] = slots[i];
    }
  sb_spawner *sp = &rt->spawner;
  pthread_mutex_lock(&sp->mu);
  int rc = 0;
  if (idle_dead(sp->sock)) rc = restart(sp, "found dead before a request", err);
  if (!rc) rc = send_request(sp->sock, &r, fds, nfds);
  if (rc == -EPIPE || rc == -ECONNRESET || rc == -ENOTCONN) { /* died before it saw the request: once more */
    rc = restart(sp, "died before a request reached it", err);
    if (!rc) rc = send_request(sp->sock, &r, fds, nfds);
  }
  sb_spawn_reply rep;
  if (!rc) {
    int pidfd;
    rc = await_reply(sp->sock, &rep, &pidfd);
    if (rc == 0) {
      out->pidfd = pidfd;
    } else {
      /* It may have cloned the init already: not retried (a second init
       * would share this one's descriptors); the job fails, saying so. */
      char why[SB_ERR_MAX];
      snprintf(why, sizeof why, "%s during a request", rc == -ETIMEDOUT ? "no answer in 10 s" : "died");
      pid_t old = sp->pid;
      char rerr[SB_ERR_MAX] = "";
      restart(sp, why, rerr);
      sb_err(err, "spawner (pid %d): %s; restarted%s%s", (int)old, why, rerr[0] ? ": " : "", rerr);
      rc = rc == -ETIMEDOUT ? rc : -EPIPE;
    }
  }
  pthread_mutex_unlock(&sp->mu);
  close(payload);
  if (rc) {
    if (!err[0]) sb_err(err, "spawner: %s", strerror(-rc));
    return rc;
  }
  if (rep.err || rep.pid <= 0 || out->pidfd < 0) {
    sbu_closep(&out->pidfd);
    sb_err(err, "%s", rep.msg[0] ? rep.msg : "spawner: nothing cloned");
    return rep.err ? -rep.err : -EIO;
  }
  out->pid = rep.pid;
  out->born_inside = rep.born_inside;
  out->into_refused = rep.into_refused;
  return 0;
}
