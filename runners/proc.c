/* One sandboxed run, parent side: start it, react to its fds, enforce the
 * time limits, and turn what happened into an sb_result. Nothing here blocks,
 * so a libuv loop can drive it (sb_run() drives it with poll()). */
#include "thread.h"
#include "proc_internal.h"
#include "strv.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>



static const char *const default_env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", NULL};

void sb_spec_init(sb_spec *s) {
  memset(s, 0, sizeof *s);
  sb_limits_default(&s->limits);
  s->cwd = "/app";
  s->netns_slot = 0;
}

static int memfd_with(const void *data, size_t len) {
  SBU_AUTOCLOSE int fd = memfd_create("surgebox-stdin", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -errno;
  const unsigned char *p = data;
  size_t left = len;
  while (left) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    p += n;
    left -= (size_t)n;
  }
  lseek(fd, 0, SEEK_SET);
  /* The program reads a regular (seekable) file, as with SURGE's "< input". */
  fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  return sbu_take_fd(&fd);
}

static int open_stdin(const sb_spec *spec) {
  if (spec->stdin_data) return memfd_with(spec->stdin_data, spec->stdin_len);
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

/* Everything the child reads, copied: the caller's strings may live in the
 * supervisor's argv area, which the sandbox init overwrites. */
static int copy_spec_strings(sb_proc *p, const sb_spec *spec) {
  p->argv = sbu_strv_copy(spec->argv);
  p->envp = sbu_strv_copy(spec->envp ? spec->envp : default_env);
  p->cwd = strdup(spec->cwd);
  if (spec->root && !(p->root = strdup(spec->root))) return -ENOMEM;
  p->mounts = calloc(spec->n_extra_mounts + 1, sizeof *p->mounts);
  if (!p->argv || !p->envp || !p->cwd || !p->mounts) return -ENOMEM;
  for (size_t i = 0; i < spec->n_extra_mounts; i++) {
    p->mounts[i].source = strdup(spec->extra_mounts[i].source);
    p->mounts[i].target = strdup(spec->extra_mounts[i].target);
    p->mounts[i].writable = spec->extra_mounts[i].writable;
    p->n_mounts++;
    if (!p->mounts[i].source || !p->mounts[i].target) return -ENOMEM;
  }
  return 0;
}

void sb_proc_free(sb_proc *p) {
  /* its tmpfs pages are charged to the slot until the namespace goes */
  sb_cg_slot_fence(p->rt, p->cg.slot_index, p->job_ns_fd);
  sbu_closep(&p->pidfd);
  sbu_closep(&p->ctl_fd);
  sbu_closep(&p->out_fd);
  sbu_closep(&p->err_fd);
  sbu_closep(&p->trace_fd);
  sb_stall_close(p);
  sb_seccomp_free(&p->own_filter);
  sbu_strv_free(p->argv);
  sbu_strv_free(p->envp);
  free(p->cwd);
  free(p->root);
  for (size_t i = 0; p->mounts && i < p->n_mounts; i++) {
    free((char *)p->mounts[i].source);
    free((char *)p->mounts[i].target);
  }
  free(p->mounts);
  sb_submounts_free(p->submounts);
  /* Before the uid can go to another job: its budgets back (ipcns.c, uids.c) */
  if (p->ipc_ns_fd >= 0) sb_ipc_drain_later(p->rt, sbu_take_fd(&p->ipc_ns_fd), p->uid);
  else if (p->t_go) sb_uid_hold(p->rt, p->uid, -1, NULL, 200, false); /* the kernel frees it a grace period or so later */
  char err[SB_ERR_MAX];
  if (sb_netns_slot_release(p->rt, p->netns_slot, p->uid, err) < 0) sb_runtime_add_warning(p->rt, err);
  sb_uid_release(p->own_lease);
  free(p->out.data);
  free(p->err.data);
  free(p->trace.data);
  free(p);
}

static bool spec_valid(const sb_spec *s, char err[SB_ERR_MAX]) {
  if (!s->argv || !s->argv[0] || !s->argv[0][0]) {
    sb_err(err, "empty argv");
    return false;
  }
  if (!s->cwd || s->cwd[0] != '/') {
    sb_err(err, "cwd must be an absolute path inside the sandbox");
    return false;
  }
  const sb_limits *l = &s->limits;
  if (!(l->wall_time_s > 0) || !(l->cpu_time_s > 0) || !l->memory_mib || !l->pids || !l->output_bytes ||
      !l->file_size_mib || !l->tmp_mib || !l->open_files || l->wall_time_s > 86400 || l->cpu_time_s > 86400) {
    sb_err(err, "limits must be positive (and times at most a day)");
    return false;
  }
  for (size_t i = 0; i < s->n_extra_mounts; i++)
    if (!s->extra_mounts[i].target || s->extra_mounts[i].target[0] != '/' || !s->extra_mounts[i].source) {
      sb_err(err, "extra mount %zu needs a source and an absolute target", i);
      return false;
    }
  return true;
}

/* The run's uid: the spec's lease, the workspace's (one per job), or one of
 * its own; and the /etc/passwd and /etc/group the sandbox sees (mounts.c),
 * written here because the child may not use stdio. */
static int choose_uid(sb_proc *p, const sb_spec *spec, char err[SB_ERR_MAX]) {
  const sb_uid_lease *l = spec->uid_lease;
  if (!l && spec->workspace) l = sb_workspace_lease(spec->workspace);
  if (!l) {
    int rc = sb_uid_acquire(p->rt, &p->own_lease, err);
    if (rc < 0) return rc;
    l = p->own_lease;
  }
  p->uid = sb_uid_lease_uid(l);
  p->gid = sb_uid_lease_gid(l);
  unsigned u = (unsigned)p->uid, g = (unsigned)p->gid;
  /* surgebox first: with the user-namespace default (65534) it shadows
   * nobody for getpwuid, and id -un prints surgebox either way. */
  snprintf(p->etc_passwd, sizeof p->etc_passwd,
           "root:x:0:0:root:/root:/bin/sh\nsurgebox:x:%u:%u:surgebox:/tmp:/bin/sh\n"
           "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", u, g);
  snprintf(p->etc_group, sizeof p->etc_group, "root:x:0:\nsurgebox:x:%u:\nnogroup:x:65534:\n", g);
  return 0;
}

/* When a job's memory sits in tmpfs pages the OOM killer could pick the
 * init and the run would look like a sandbox failure. -1000 exempts it (the program
 * resets its own to 0, child.c). Needs CAP_SYS_RESOURCE: impossible in
 * user-namespace mode and in containers that drop it (runtime.c's enforced
 * document says which). Done before the init says READY, so before the
 * program exists. */
static void protect_init_from_oom(const sb_runtime *rt, pid_t pid) {
  if (!rt->oom_adj_lowerable) return; /* the write would fail (EACCES): an open, write and close saved per job */
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/oom_score_adj", (int)pid);
  sb_write_file(path, "-1000"); /* best effort: the verdict also reads the cgroup's OOM count */
}

/* a then b, NULL-terminated (the strings borrowed), or NULL (out of memory). */
static const char **strv_concat(const char *const *a, const char *const *b) {
  size_t na = 0, nb = 0;
  while (a && a[na]) na++;
  while (b && b[nb]) nb++;
  const char **v = calloc(na + nb + 1, sizeof *v);
  if (!v) return NULL;
  for (size_t i = 0; i < na; i++) v[i] = a[i];
  for (size_t i = 0; i < nb; i++) v[na + i] = b[i];
  return v;
}

/* A sealed trace's descriptor: a socket pair whose program side first
 * reads a fresh key (the tracer takes it before the program runs), then
 * EOF; the supervisor's side then only reads. The key stays in the scan. */
static int trace_key_socket(int sv[2], sb_trace_scan *sc) {
  unsigned char key[SB_TRACE_KEY_BYTES];
  if (getrandom(key, sizeof key, 0) != (ssize_t)sizeof key) return errno ? -errno : -EIO;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) return -errno;
  if (write(sv[0], key, sizeof key) != (ssize_t)sizeof key || shutdown(sv[0], SHUT_WR) < 0) {
    int e = errno ? -errno : -EIO;
    close(sv[0]);
    close(sv[1]);
    sv[0] = sv[1] = -1;
    return e;
  }
  sb_trace_scan_seal(sc, key);
  explicit_bzero(key, sizeof key);
  return 0;
}

/* The run's own descriptors until the init holds its ends: [0] ours, [1]
 * the init's (closed once it is cloned); in: the program's stdin. */
typedef struct {
  int ctl[2], out[2], err[2], trace[2], in;
} proc_pipes;

static sb_proc *proc_new(sb_runtime *rt, const sb_spec *spec) {
  sb_proc *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->rt = rt;
  p->limits = spec->limits;
  p->pidfd = p->ctl_fd = p->out_fd = p->err_fd = p->trace_fd = p->job_ns_fd = p->ipc_ns_fd = p->netns_slot = p->stall_fd = p->stall_dir = -1;
  p->stall_init.fd = p->stall_zygote.fd = -1;
  p->cg.slot_index = -1;
  p->warm.pair[0] = p->warm.pair[1] = -1;
  p->t_start = sbu_now_ns();
  snprintf(p->argv0, sizeof p->argv0, "%s", spec->argv[0]);
  p->output_base64 = spec->output_base64;
  return p;
}

/* The runtime's filter, or one of the run's own where the spec adds rules. */
static int seccomp_phase(sb_proc *p, const sb_spec *spec, const sb_bpf **filter, char err[SB_ERR_MAX]) {
  const sb_runtime *rt = p->rt;
  *filter = &rt->filter;
  bool own_deny = spec->seccomp_extra_deny && spec->seccomp_extra_deny[0];
  bool own_allow = spec->seccomp_extra_allow && spec->seccomp_extra_allow[0];
  if (!own_deny && !own_allow) return 0;
  const char **allow = own_allow ? strv_concat(rt->opts.seccomp_extra_allow, spec->seccomp_extra_allow) : NULL;
  int rc;
  if (own_allow && !allow) {
    rc = -ENOMEM;
    sb_err(err, "out of memory");
  } else {
    rc = sb_seccomp_build(rt->opts.seccomp_extra_deny, own_allow ? allow : rt->opts.seccomp_extra_allow,
                          spec->seccomp_extra_deny, &p->own_filter, err);
    *filter = &p->own_filter;
  }
  free(allow);
  return rc;
}

static int pipes_phase(sb_proc *p, const sb_spec *spec, proc_pipes *pp, char err[SB_ERR_MAX]) {
  int rc = 0;
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pp->ctl) < 0) rc = -errno;
  if (!rc && pipe2(pp->out, O_CLOEXEC) < 0) rc = -errno;
  if (!rc && !spec->merge_output && pipe2(pp->err, O_CLOEXEC) < 0) rc = -errno;
  if (!rc && (pp->in = open_stdin(spec)) < 0) rc = pp->in;
  if (!rc && spec->trace && !spec->trace_seal && pipe2(pp->trace, O_CLOEXEC) < 0) rc = -errno;
  if (!rc && spec->trace && spec->trace_seal) rc = trace_key_socket(pp->trace, &p->trace_scan);
  if (rc && !err[0]) sb_err(err, "cannot set up pipes: %s", strerror(-rc));
  return rc;
}

/* The slot's cgroup, else one of the job's own. */
static int cgroup_phase(sb_proc *p, const sb_spec *spec, char err[SB_ERR_MAX]) {
  sb_runtime *rt = p->rt;
  char name[64];
  snprintf(name, sizeof name, "job%llu", (unsigned long long)++rt->counter);
  if (sb_cg_slot_take(rt, spec->netns_slot, &spec->limits, &p->cg) < 0) {
    int rc = sb_cg_job_create(&rt->cg, name, &spec->limits, &p->cg, err);
    if (rc) return rc;
  }
  if (rt->cg.kind == SB_CGROUP_V1) sb_attach_warm_poke(&rt->warm); /* its attach comes just before READY */
  return 0;
}

/* The init's plan, phase by phase (internal.h, "plan.c"). */
static void plan_fill(sb_proc *p, const sb_spec *spec, const proc_pipes *pp, const sb_bpf *filter, sb_plan *a) {
  sb_runtime *rt = p->rt;
  sb_plan_init(a);
  /* namespaces */
  a->userns = rt->userns;
  a->netns_fd = sb_netns_slot_take(rt, spec->netns_slot);
  if (a->netns_fd >= 0) p->netns_slot = spec->netns_slot;
  /* descriptors */
  a->ctl_fd = pp->ctl[1];
  a->stdin_fd = pp->in;
  a->stdout_fd = pp->out[1];
  a->stderr_fd = spec->merge_output ? pp->out[1] : pp->err[1];
  a->trace_fd = pp->trace[1];
  /* mounts */
  a->mounts.root = p->root ? p->root : "";
  a->mounts.newroot = rt->newroot;
  a->mounts.empty_file = rt->empty_file;
  a->mounts.workspace = spec->workspace ? sb_workspace_path(spec->workspace) : NULL;
  a->mounts.tmp_mib = spec->limits.tmp_mib;
  a->mounts.app_mib = spec->limits.tmp_mib;
  a->mounts.uid = p->uid;
  a->mounts.gid = p->gid;
  a->mounts.etc_passwd = p->etc_passwd;
  a->mounts.etc_group = p->etc_group;
  a->mounts.extra = p->mounts;
  a->mounts.n_extra = p->n_mounts;
  /* identity */
  a->uid = p->uid;
  a->gid = p->gid;
  a->empty_caps = rt->empty_caps;
  /* limits */
  a->limits = &p->limits;
  a->rlimits.memory_by_rlimit = !sb_cg_limits_memory(&rt->cg);
  a->rlimits.pids_by_rlimit = !sb_cg_limits_pids(&rt->cg);
  a->rlimits.cpu_backstop_only = true; /* the cgroup's counter or the tree poll (mempoll.c) kills at the limit */
  /* seccomp */
  a->filter = filter;
  /* program */
  a->argv = (const char *const *)p->argv;
  a->envp = (const char *const *)p->envp;
  a->cwd = p->cwd;
}

/* A pooled root (pool.c) or the mounts beneath the read-only directories
 * for one built here; a warm start where the zygote takes it (warm.c). */
static void pool_and_warm_phase(sb_proc *p, const sb_spec *spec, sb_plan *a) {
  sb_runtime *rt = p->rt;
  sb_pool_prepare(rt, spec->netns_slot, spec->workspace, &a->mounts, &a->tmpl_fd, &a->app_tree_fd, p->pool_note);
  /* A pooled job enters its template, which has the submounts (read then,
   * pool.c). A read of the daemon's mountinfo per job was ~40 µs on the
   * loop thread. */
  if (a->tmpl_fd < 0) {
    p->submounts = sb_submounts_list(p->root, p->mounts, p->n_mounts); /* NULL: none known */
    a->mounts.submounts = (const char *const *)p->submounts;
  }
  sb_warm_prepare(rt, spec, &p->cg, a->envp, &p->warm, p->start_note);
  if (spec->warm_refused)
    snprintf(p->start_note, sizeof p->start_note, "cold (warm refused: %.*s)", SB_ERR_MAX / 2, spec->warm_refused);
  if (p->warm.on) a->warm_fd = p->warm.pair[0]; /* the init's end; the zygote gets pair[1] */
}

static void kill_init(sb_proc *p) {
  kill(p->pid, SIGKILL);
  waitpid(p->pid, NULL, 0);
}

/* Cloned by the spawner (spawner.c), never from us: the init would be a
 * copy of the daemon, and so would the program's max_rss_kb, the init's
 * exit and what mempoll counts before the program's exec. We stay its
 * parent (CLONE_PARENT). On cgroup v2, born straight into the job's
 * cgroup (see cgroup_v2.c), clone + attach where clone3 or
 * CLONE_INTO_CGROUP is missing. */
static int clone_phase(sb_proc *p, sb_plan *a, char err[SB_ERR_MAX]) {
  sb_runtime *rt = p->rt;
  unsigned long flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
  if (rt->userns) flags |= CLONE_NEWUSER;
  if (a->netns_fd < 0) flags |= CLONE_NEWNET;
  if (a->tmpl_fd >= 0) flags &= ~(unsigned long)CLONE_NEWNS; /* the init enters a copy of the template */
  bool into = rt->cg.kind == SB_CGROUP_V2 && p->cg.created && p->cg.v2_fd >= 0 && !rt->no_clone_into_cgroup;
  /* Not born inside: the init joins its cgroup itself before READY, so
   * that the attach's wait is the init's, not the loop thread's. */
  int n_procs = 0;
  if (!into && rt->cg.kind != SB_CGROUP_NONE) {
    n_procs = sb_cg_job_open_procs(&rt->cg, &p->cg, a->procs_fd);
    if (n_procs < 0) n_procs = 0; /* the daemon attaches it at READY, as before */
    for (int i = n_procs; i < SB_PLAN_PROCS; i++) a->procs_fd[i] = -1;
  }
  p->init_joins = n_procs > 0;
  sb_spawned sp;
  int rc = sb_spawner_clone(rt, SB_SPAWN_INIT, a, flags, into ? p->cg.v2_fd : -1, &sp, err);
  for (int i = 0; i < n_procs; i++) close(a->procs_fd[i]);
  if (rc) return rc;
  if (sp.into_refused) rt->no_clone_into_cgroup = true; /* once per runtime: the kernel will not change */
  p->cg.born_inside = sp.born_inside;
  p->pid = sp.pid;
  p->pidfd = sp.pidfd;
  protect_init_from_oom(rt, p->pid);
  /* the zygote waits for the init's GO on the job's socket */
  if (p->warm.on) {
    rc = sb_warm_send(&p->warm, a, p->pidfd, err);
    /* the zygote is gone already: the init's GO finds that out and the
     * daemon runs the step again, cold (child.c zygote_gone) */
    if (rc == -EPIPE || rc == -ECONNREFUSED || rc == -ECONNRESET) {
      rc = 0;
      err[0] = '\0';
    }
  }
  if (rc) kill_init(p);
  return rc;
}

/* The init and the zygote hold their ends now: ours are the run's. */
static void take_our_ends(sb_proc *p, const sb_spec *spec, proc_pipes *pp, sb_plan *a) {
  sb_warm_run_close(&p->warm);
  const int theirs[] = {pp->ctl[1], pp->out[1], pp->err[1], pp->trace[1], pp->in, a->app_tree_fd};
  for (size_t i = 0; i < sizeof theirs / sizeof *theirs; i++)
    if (theirs[i] >= 0) close(theirs[i]);
  p->pooled = a->tmpl_fd >= 0;
  p->ctl_fd = pp->ctl[0];
  p->out_fd = pp->out[0];
  p->err_fd = pp->err[0];
  p->trace_fd = pp->trace[0];
  p->traced = spec->trace;
  p->trace_cap = spec->trace_bytes ? spec->trace_bytes : SB_TRACE_BYTES_DEFAULT;
  if (p->trace_cap > SB_TRACE_BYTES_MAX) p->trace_cap = SB_TRACE_BYTES_MAX;
}

/* User-namespace mode: the init waits for its id maps (MAPPED). */
static int id_map_phase(sb_proc *p, char err[SB_ERR_MAX]) {
  const sb_runtime *rt = p->rt;
  if (!rt->userns) return 0;
  int rc = sb_ns_write_id_maps(p->pid, p->uid, rt->outer_uid, p->gid, rt->outer_gid, err);
  sb_msg m = {.type = SB_MSG_MAPPED};
  if (!rc && send(p->ctl_fd, &m, sizeof m, MSG_NOSIGNAL) < 0) rc = -errno;
  if (rc) kill_init(p);
  return rc;
}

int sb_proc_start(sb_runtime *rt, const sb_spec *spec, sb_proc **out, char err[SB_ERR_MAX]) {
  *out = NULL;
  if (!spec_valid(spec, err)) return -EINVAL;
  sb_proc *p = proc_new(rt, spec);
  if (!p) {
    sb_err(err, "out of memory");
    return -ENOMEM;
  }
  int rc = copy_spec_strings(p, spec);
  if (rc) sb_err(err, "out of memory");
  if (!rc) rc = choose_uid(p, spec, err);
  const sb_bpf *filter = &rt->filter;
  if (!rc) rc = seccomp_phase(p, spec, &filter, err);
  proc_pipes pp = {.ctl = {-1, -1}, .out = {-1, -1}, .err = {-1, -1}, .trace = {-1, -1}, .in = -1};
  sbu_fork_guard_enter(); /* the init's ends exist here only until take_our_ends (common/thread.h) */
  if (!rc) rc = pipes_phase(p, spec, &pp, err);
  if (!rc) rc = cgroup_phase(p, spec, err);
  sb_plan a;
  plan_fill(p, spec, &pp, filter, &a);
  if (!rc) pool_and_warm_phase(p, spec, &a);
  if (!rc) rc = clone_phase(p, &a, err);
  take_our_ends(p, spec, &pp, &a);
  sbu_fork_guard_leave();
  if (!rc) rc = id_map_phase(p, err);
  if (rc) {
    sb_cg_job_destroy(&rt->cg, &p->cg);
    sb_proc_free(p);
    return rc;
  }
  for (int *fd = &p->ctl_fd; fd <= &p->trace_fd; fd++)
    if (*fd >= 0) fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) | O_NONBLOCK);
  p->phase = PHASE_SETUP;
  p->setup_deadline = p->t_start + (uint64_t)SB_SETUP_TIMEOUT_MS * 1000000ull;
  *out = p;
  return 0;
}

int sb_proc_pidfd(const sb_proc *p) { return p->reaped ? -1 : p->pidfd; }
int sb_proc_control_fd(const sb_proc *p) { return p->ctl_fd; }
int sb_proc_stdout_fd(const sb_proc *p) { return p->out_fd; }
int sb_proc_stderr_fd(const sb_proc *p) { return p->err_fd; }
int sb_proc_trace_fd(const sb_proc *p) { return p->trace_fd; }

void sb_proc_kill(sb_proc *p, const char *why) {
  if (p->reaped) return;
  if (!p->killed) {
    p->killed = true;
    p->kill_reason = why;
  }
  /* Killing a pid namespace's init kills every task in it. */
  syscall(SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0);
  sb_cg_job_kill(&p->rt->cg, &p->cg);
}

static void internal_error(sb_proc *p, const char *msg) {
  if (!p->internal_error) snprintf(p->error, sizeof p->error, "%s", msg);
  p->internal_error = true;
  sb_proc_kill(p, NULL);
}

static void go(sb_proc *p) {
  char err[SB_ERR_MAX] = "";
  /* Attach after set-up: mounts and pivot are not the program's CPU time.
   * Born inside (v2): the counters' baseline instead. The init joined
   * itself, just before READY (child.c): nothing to do here. */
  if (p->cg.born_inside) {
    sb_cg_job_mark_go(&p->rt->cg, &p->cg);
  } else if (!p->init_joins && sb_cg_job_attach(&p->rt->cg, &p->cg, p->pid, err) < 0) {
    internal_error(p, err);
    return;
  }
  if (p->pooled) p->job_ns_fd = sb_pool_job_ns(p->pidfd, p->pid); /* torn down later, on the pool's thread */
  p->ipc_ns_fd = sb_ipc_job_ns(p->pidfd, p->pid);
  sb_mempoll_start(p); /* before GO: /app's baseline must not include the program's writes */
  sb_msg m = {.type = SB_MSG_GO};
  sb_stall_go(p);
  p->t_go = sbu_now_ns(); /* before the send: the program may start at once */
  if (send(p->ctl_fd, &m, sizeof m, MSG_NOSIGNAL) < 0) {
    internal_error(p, "sandbox init vanished before GO");
    return;
  }
  p->phase = PHASE_RUNNING;
  p->wall_deadline = p->t_go + (uint64_t)(p->limits.wall_time_s * 1e9);
  p->next_cpu_check = p->t_go;
}

void sb_proc_on_control(sb_proc *p) {
  for (;;) {
    sb_msg m;
    ssize_t n = recv(p->ctl_fd, &m, sizeof m, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) { /* EOF: the init is gone */
      sbu_closep(&p->ctl_fd);
      return;
    }
    if (n != (ssize_t)sizeof m) continue;
    if (m.type == SB_MSG_READY && p->phase == PHASE_SETUP && !p->killed) go(p);
    else if (m.type == SB_MSG_ERROR) {
      p->warm_lost = p->warm.on && m.warm_lost;
      if (p->zygote_killed) { /* the init's word on what we did: say why first */
        char why[SB_ERR_MAX];
        snprintf(why, sizeof why, "the slot's zygote had not started the program at its wall limit (state %c%s%s) and was killed: %.200s",
                 p->wall_waiting.state, p->wall_waiting.wchan[0] ? ", in " : "", p->wall_waiting.wchan, m.text);
        internal_error(p, why);
      } else {
        internal_error(p, m.text);
      }
    }
    else if (m.type == SB_MSG_DONE) {
      p->done = m;
      p->have_done = true;
    }
  }
}

/* The trace pipe: kept up to its cap, then closed (the program's next
 * write there fails; the supervisor's end says truncated); checked as it
 * comes, and closed at the first line that is not a record (the rest is cut
 * anyway: tampered). Never a kill: a trace's size is not the program's output. */
static void on_trace(sb_proc *p) {
  unsigned char chunk[65536];
  for (int reads = 0; reads < 16; reads++) { /* at most 1 MiB a turn: the loop serves others between */
    ssize_t n = read(p->trace_fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    bool full = n > 0 && sb_buf_append(&p->trace, chunk, (size_t)n, p->trace_cap);
    if (n <= 0 || !sb_trace_scan_more(&p->trace_scan, &p->trace) || full) {
      sbu_closep(&p->trace_fd);
      return;
    }
  }
}

void sb_proc_on_output(sb_proc *p, int fd) {
  if (fd == p->trace_fd) {
    on_trace(p);
    return;
  }
  sb_buf *b = fd == p->out_fd ? &p->out : &p->err;
  int *slot = fd == p->out_fd ? &p->out_fd : &p->err_fd;
  unsigned char chunk[65536];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      sbu_closep(slot);
      return;
    }
    if (sb_buf_append(b, chunk, (size_t)n, p->limits.output_bytes) && !p->killed) sb_proc_kill(p, "output");
  }
}

void sb_proc_on_exit(sb_proc *p) {
  if (p->reaped) return;
  int st;
  struct rusage ru;
  pid_t r = wait4(p->pid, &st, WNOHANG | __WALL, &ru);
  if (r != p->pid) return;
  p->reaped = true;
  p->init_status = st;
  p->init_ru = ru;
  p->phase = PHASE_EXITED;
  /* The DONE message was sent before the init exited: drain it now. */
  if (p->ctl_fd >= 0) sb_proc_on_control(p);
}

/* A warm run whose zygote has not started the program in the whole wall
 * limit (no program in the job: wall_waiting names the zygote, just read):
 * the zygote is wedged (stopped, stuck in the kernel), the program never
 * ran. Killed, its slot starts a new one; the init then reports it gone
 * with no process of the job ever born (child.c zygote_gone), so the
 * daemon runs the step again, cold (warm_lost), instead of a timeout the
 * program never had. Without that report within the grace, the wall kill
 * goes ahead. Seen: a SIGSTOPped zygote held the job's pipes open and the
 * job past its limit until the daemon stopped. */
#define WEDGED_ZYGOTE_GRACE_NS (2 * 1000000000ull)
static bool wedged_zygote(sb_proc *p, uint64_t now) {
  if (!p->warm.on || p->zygote_killed || !p->wall_waiting.process || strcmp(p->wall_waiting.process, "zygote"))
    return false;
  p->zygote_killed = true;
  if (!sb_warm_zygote_kill(&p->warm)) return false;
  p->wall_deadline = now + WEDGED_ZYGOTE_GRACE_NS;
  return true;
}

/* The wall deadline passed: move it by the time the program waited for a
 * CPU (stall.c), if that is more than it was moved already. */
static bool stall_excused(sb_proc *p, uint64_t now) {
  uint64_t cpu = 0, at = now;
  if (!sb_cg_job_cpu_ns(&p->rt->cg, &p->cg, &cpu)) {
    if (!sb_mempoll_cpu_ns(p, &cpu)) return false;
    at = p->mem.cpu_at_ns; /* the poll's figure: the wall up to that poll, not now */
  }
  uint64_t e = sb_stall_excuse_ns(p, at > p->t_go + cpu ? at - p->t_go - cpu : 0);
  if (e <= p->wall_excused_ns) return false;
  p->wall_excused_ns = e;
  p->wall_deadline = p->t_go + (uint64_t)(p->limits.wall_time_s * 1e9) + e;
  return p->wall_deadline > now;
}

int sb_proc_tick(sb_proc *p) {
  if (p->reaped) return -1;
  uint64_t now = sbu_now_ns();
  if (p->phase == PHASE_SETUP) {
    if (now >= p->setup_deadline) {
      internal_error(p, "sandbox set-up timed out");
      return -1;
    }
    return (int)((p->setup_deadline - now) / 1000000) + 1;
  }
  if (p->killed) return 100; /* waiting for the kernel to finish the kill */
  if (now >= p->wall_deadline && !stall_excused(p, now)) {
    sb_stall_waiting(p, &p->wall_waiting);
    if (wedged_zygote(p, now)) return (int)(WEDGED_ZYGOTE_GRACE_NS / 1000000);
    sb_proc_kill(p, "wall_time");
    return 100;
  }
  if (now >= p->next_cpu_check) {
    uint64_t cpu;
    /* not at GO's own check: the program is not born yet */
    if (now - p->t_go >= (uint64_t)SB_TICK_MS * 1000000ull) sb_stall_find(p);
    if (sb_mempoll_over(p, now)) {
      sb_proc_kill(p, "memory");
      return 100;
    }
    /* the cgroup's counter, else the tree's from the poll above (mempoll.c) */
    if ((sb_cg_job_cpu_ns(&p->rt->cg, &p->cg, &cpu) || sb_mempoll_cpu_ns(p, &cpu)) &&
        cpu > (uint64_t)(p->limits.cpu_time_s * 1e9)) {
      sb_proc_kill(p, "cpu_time");
      return 100;
    }
    p->next_cpu_check = now + (uint64_t)SB_TICK_MS * 1000000ull;
  }
  uint64_t next = p->wall_deadline < p->next_cpu_check ? p->wall_deadline : p->next_cpu_check;
  return (int)((next - now + 999999) / 1000000);
}

bool sb_proc_done(const sb_proc *p) { return p->reaped && p->out_fd < 0 && p->err_fd < 0 && p->trace_fd < 0; }
