/* The runtime: what every run of one process shares, set up once. */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>

void sb_runtime_options_default(sb_runtime_options *o) {
  memset(o, 0, sizeof *o);
  o->cgroup = SB_CGROUP_AUTO;
  o->netns_slots = 1;
  o->sandbox_uid = 65534;
  o->sandbox_gid = 65534;
  /* Unused by every allocation scheme we know of: above systemd's container
   * range (524288-1879048191, where useradd's subordinate ids also fall),
   * below its foreign-uid range and 2^31 (systemd's UIDS-GIDS document;
   * Debian policy leaves 65536-4294967293 to local dynamic allocation). */
  o->uid_first = 1879048192;
  o->uid_count = 4096;
  o->pool = 8;
  o->stall_grace_s = 5;
  const char *pool = getenv("SURGEBOX_POOL");
  char *end;
  long v = pool && *pool ? strtol(pool, &end, 10) : -1;
  if (v >= 0 && v <= 1024 && *end == '\0') o->pool = (int)v;
}

static void default_state_dir(char out[PATH_MAX]) {
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  if (geteuid() == 0)
    snprintf(out, PATH_MAX, "/run/surgebox/state");
  else if (xdg && *xdg)
    snprintf(out, PATH_MAX, "%s/surgebox/state", xdg);
  else
    snprintf(out, PATH_MAX, "/tmp/surgebox-%u/state", (unsigned)geteuid());
}

/* State of runtimes that died without cleaning up (caller holds the state
 * directory's flock). Their mounts lived in their private mount namespace
 * and are gone already; their cgroups were removed by sb_cg_open, which
 * must run first (older instances' cgroups are judged by the lock files). */
static void remove_stale_instances(const char *state_dir) {
  DIR *d = opendir(state_dir);
  if (!d) return;
  struct dirent *e;
  size_t pl = strlen(SB_INSTANCE_PREFIX);
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, SB_INSTANCE_PREFIX, pl) != 0) continue;
    char name[256], path[PATH_MAX];
    size_t n = strlen(e->d_name);
    bool lockfile = n > 5 && strcmp(e->d_name + n - 5, ".lock") == 0;
    snprintf(name, sizeof name, "%.*s", (int)(lockfile ? n - 5 : n), e->d_name);
    if (lockfile == sb_instance_locks_itself(name)) continue; /* a new-style name's dir, or an old one's lock file */
    if (!sb_instance_is_stale(state_dir, name, state_dir)) continue;
    snprintf(path, sizeof path, "%s/%s", state_dir, name);
    sb_rm_rf(path);
    if (lockfile) {
      snprintf(path, sizeof path, "%s/%s", state_dir, e->d_name);
      unlink(path);
    }
  }
  closedir(d);
}

/* Take a name unique to this start and create its directory, locked, under
 * the state directory's flock (so no one judges it between the two). */
static int lock_instance(sb_runtime *rt, char err[SB_ERR_MAX]) {
  int rc = sb_mkdir_p(rt->state_dir, 0700);
  if (rc < 0) {
    sb_err(err, "cannot create state dir %s: %s", rt->state_dir, strerror(-rc));
    return rc;
  }
  uint64_t rnd = 0;
  if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
    sb_err(err, "getrandom: %s", strerror(errno));
    return -EIO;
  }
  struct stat ns; /* kept in the name for people and test harnesses: whose pid namespace */
  if (stat("/proc/self/ns/pid", &ns) < 0) ns.st_ino = 0;
  snprintf(rt->name, sizeof rt->name, SB_INSTANCE_PREFIX "%d-%llu-x%016llx", (int)getpid(),
           (unsigned long long)ns.st_ino, (unsigned long long)rnd);
  snprintf(rt->instance, sizeof rt->instance, "%s/%s", rt->state_dir, rt->name);
  SBU_AUTOCLOSE int parent = sb_lock_dir(rt->state_dir, true); /* held until we return */
  if (parent < 0) {
    sb_err(err, "cannot lock %s: %s", rt->state_dir, strerror(-parent));
    return parent;
  }
  rc = mkdir(rt->instance, 0755) < 0 ? -errno : sb_lock_dir(rt->instance, false);
  if (rc < 0 && rc != -EEXIST) rmdir(rt->instance);
  if (rc < 0) {
    sb_err(err, "cannot create and lock %s: %s", rt->instance, strerror(-rc));
    rt->instance[0] = '\0';
    return rc;
  }
  rt->lock_fd = rc;
  return 0;
}

/* The effective uid this process had before sb_runtime_open put it in a
 * user namespace of its own (where it is 0). */
static uid_t host_euid_value = (uid_t)-1;
uid_t sb_host_euid(void) { return host_euid_value != (uid_t)-1 ? host_euid_value : geteuid(); }

/* Lowering an oom_score_adj (proc.c: the sandbox init's) needs
 * CAP_SYS_RESOURCE, which containers often drop even for root. */
static bool may_lower_oom_adj(void) {
  cap_t c = cap_get_proc();
  cap_flag_value_t v = CAP_CLEAR;
  if (c) cap_get_flag(c, CAP_SYS_RESOURCE, CAP_EFFECTIVE, &v);
  cap_free(c);
  return v == CAP_SET;
}

/* Not root: a user namespace of our own in which the outer uid/gid are 0
 * (and the only ids mapped), created with the mount namespace so that the
 * jobs directory and the workspaces can be size-capped tmpfs as for root.
 * Sandboxes still nest a user namespace mapping the sandbox uid to our 0
 * (= the outer user). Where user namespaces are unavailable nothing
 * changes (own_userns stays false) and /app stays a plain directory. */
static int enter_own_userns(sb_runtime *rt, char err[SB_ERR_MAX]) {
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) return 0;
  host_euid_value = rt->outer_uid;
  char map[64];
  snprintf(map, sizeof map, "0 %u 1\n", (unsigned)rt->outer_uid);
  int rc = sb_write_file("/proc/self/setgroups", "deny"); /* before an unprivileged gid_map */
  if (!rc) rc = sb_write_file("/proc/self/uid_map", map);
  snprintf(map, sizeof map, "0 %u 1\n", (unsigned)rt->outer_gid);
  if (!rc) rc = sb_write_file("/proc/self/gid_map", map);
  if (rc < 0) { /* only our own ids: should not happen, and nothing would work without them */
    sb_err(err, "user namespace of the runtime: writing its id maps: %s", strerror(-rc));
    return rc;
  }
  rt->outer_uid = 0; /* what the sandbox uid maps to from now on */
  rt->outer_gid = 0;
  rt->own_userns = true;
  return 0;
}

bool sb_runtime_host_uid(const sb_runtime *rt, uid_t seen, uid_t *host) {
  if (!rt->own_userns) *host = seen;
  else if (seen == 0) *host = rt->host_uid;
  else return false; /* the kernel shows every other uid as the overflow uid */
  return true;
}

bool sb_runtime_host_gid(const sb_runtime *rt, gid_t seen, gid_t *host) {
  if (!rt->own_userns) *host = seen;
  else if (seen == 0) *host = rt->host_gid;
  else return false;
  return true;
}

static int make_private_mount_ns(bool done, char err[SB_ERR_MAX]) {
  /* Job workspaces are tmpfs mounts: keep them in a mount namespace of our
   * own so they never show up in (or leak into) the host's mount table, and
   * vanish with this process whatever happens. Must run before threads. */
  if (!done && unshare(CLONE_NEWNS) < 0) {
    sb_err(err, "unshare(CLONE_NEWNS): %s (call sb_runtime_open before creating threads)", strerror(errno));
    return -errno;
  }
  /* Slave: host mounts still propagate in (a toolchain mounted later is
   * seen), ours never propagate out. */
  /* A chroot's "/" may be no mount point (EINVAL): then from the namespace's root. */
  int rc = mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == 0 ? 0 : -errno;
  if (rc == -EINVAL) rc = sb_mount_ns_propagation(MS_SLAVE);
  if (rc < 0) {
    sb_err(err, "make the mount namespace rslave: %s", strerror(-rc));
    return rc;
  }
  return 0;
}

static int create_instance(sb_runtime *rt, char err[SB_ERR_MAX]) {
  int rc;
  {
    SBU_AUTOCLOSE int parent = sb_lock_dir(rt->state_dir, true); /* held while the stale ones go */
    if (parent >= 0) remove_stale_instances(rt->state_dir);
  }
  char jobs[PATH_MAX];
  snprintf(rt->newroot, sizeof rt->newroot, "%s/root", rt->instance);
  snprintf(rt->empty_file, sizeof rt->empty_file, "%s/empty", rt->instance);
  snprintf(jobs, sizeof jobs, "%s/jobs", rt->instance);
  /* 0711: the sandbox uid must traverse to nothing here, but the bind
   * sources are resolved by the (root) init before the identity change. */
  if ((rc = sb_mkdir_p(rt->newroot, 0755)) < 0 || (rc = sb_mkdir_p(jobs, 0711)) < 0) {
    sb_err(err, "cannot create %s: %s", rt->instance, strerror(-rc));
    return rc;
  }
  /* Job directories on a tmpfs of our own (in our private mount namespace):
   * removing them never waits on the disk (an ext4 mounted with discard
   * made every job's rmdir wait for a block discard). */
  if (rt->can_mount && mount("tmpfs", jobs, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0711,size=64m") < 0) {
    sb_err(err, "mount tmpfs on %s: %s", jobs, strerror(errno));
    return -errno;
  }
  SBU_AUTOCLOSE int fd = open(rt->empty_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0000);
  if (fd < 0) {
    sb_err(err, "cannot create %s: %s", rt->empty_file, strerror(errno));
    return -errno;
  }
  return 0;
}

int sb_runtime_open(const sb_runtime_options *opts, sb_runtime **out, char err[SB_ERR_MAX]) {
  *out = NULL;
  sb_runtime *rt = calloc(1, sizeof *rt);
  if (!rt) {
    sb_err(err, "out of memory");
    return -ENOMEM;
  }
  rt->opts = *opts;
  rt->n_netns = 0;
  rt->lock_fd = -1;
  sb_teardown_init(&rt->teardown);
  rt->slot_ready_fd = -1;
  rt->ipc_pipe[0] = rt->ipc_pipe[1] = -1;
  rt->outer_uid = geteuid();
  rt->outer_gid = getegid();
  rt->host_uid = rt->outer_uid;
  rt->host_gid = rt->outer_gid;
  rt->userns = rt->outer_uid != 0;
  if (opts->state_dir) /* before the user namespace: paths are the outer user's */
    snprintf(rt->state_dir, sizeof rt->state_dir, "%s", opts->state_dir);
  else
    default_state_dir(rt->state_dir);
  /* A program whose stdin we still write may exit: never die of SIGPIPE. */
  signal(SIGPIPE, SIG_IGN);
  int rc = 0;
  if (rt->userns) rc = enter_own_userns(rt, err);
  rt->can_mount = !rt->userns || rt->own_userns;
  rt->oom_adj_lowerable = !rt->userns && may_lower_oom_adj(); /* once: a capget per job no more */
  rt->files_uid = rt->own_userns ? 0 : rt->opts.sandbox_uid;
  rt->files_gid = rt->own_userns ? 0 : rt->opts.sandbox_gid;
  if (!rc && rt->can_mount) rc = make_private_mount_ns(rt->own_userns, err);
  if (!rc) rc = lock_instance(rt, err);
  if (!rc) rc = sb_uids_open(rt, err);
  char cgerr[SB_ERR_MAX] = "";
  if (!rc && sb_cg_open(&rt->cg, opts->cgroup, rt->name, rt->state_dir, rt->warning, cgerr) < 0) {
    sb_err(err, "cgroup %s requested but unusable: %s", sb_cgroup_kind_name(opts->cgroup), cgerr);
    rc = -ENOTSUP;
  }
  if (!rc) rc = create_instance(rt, err);
  if (!rc && rt->cg.kind == SB_CGROUP_V1) { /* the pids hierarchy's cgroup we are in: the instance's parent */
    char procs[PATH_MAX + 16];
    snprintf(procs, sizeof procs, "%s", rt->cg.v1_pids);
    char *slash = strrchr(procs, '/');
    if (slash) snprintf(slash, sizeof procs - (size_t)(slash - procs), "/cgroup.procs");
    sb_attach_warm_init(&rt->warm, slash ? procs : NULL);
  } else {
    sb_attach_warm_init(&rt->warm, NULL);
  }
  if (!rc && rt->cg.kind == SB_CGROUP_V2 && !(rt->cg.v2_memory && rt->cg.v2_pids))
    snprintf(rt->warning, sizeof rt->warning,
             "cgroup v2 without memory/pids controllers (%s): memory and processes limited by "
             "rlimits (RLIMIT_DATA per process, RLIMIT_NPROC per uid)",
             rt->cg.describe);
  if (!rc) sb_pool_init(rt);
  if (!rc) sb_ipc_init(rt);
  if (!rc) rc = sb_seccomp_build(opts->seccomp_extra_deny, opts->seccomp_extra_allow, NULL, &rt->filter, err);
  if (!rc) {
    rt->empty_caps = cap_init();
    if (!rt->empty_caps) {
      sb_err(err, "cap_init: %s", strerror(errno));
      rc = -ENOMEM;
    }
  }
  /* Shared empty network namespaces, one per concurrent slot. In user
   * namespace mode each job gets its own: entering a namespace owned by the
   * initial user namespace needs CAP_SYS_ADMIN there. */
  int slots = opts->netns_slots > 0 ? opts->netns_slots : 1;
  if (!rc && !rt->userns) {
    rt->netns_fds = calloc((size_t)slots, sizeof(int));
    rt->netns_probes = calloc((size_t)slots, sizeof(int));
    rt->netns_users = calloc((size_t)slots, sizeof(int));
    if (!rt->netns_fds || !rt->netns_probes || !rt->netns_users) rc = -ENOMEM;
    for (int i = 0; !rc && i < slots; i++) {
      int fd = sb_netns_create(&rt->netns_probes[i], err);
      if (fd < 0) rc = fd;
      else rt->netns_fds[rt->n_netns++] = fd;
    }
  }
  /* Last: a fresh exec in the namespaces, cgroup and credentials set up above. */
  if (!rc) rc = sb_spawner_start(rt, err);
  if (rc) {
    sb_runtime_close(rt);
    return rc;
  }
  *out = rt;
  return 0;
}

void sb_runtime_close(sb_runtime *rt) {
  if (!rt) return;
  sb_warm_fini(rt); /* its zygotes die with the spawner anyway: killed first, by pidfd */
  sb_spawner_stop(rt);
  sb_pool_fini(rt);
  for (int i = 0; i < rt->n_netns; i++) {
    sbu_closep(&rt->netns_fds[i]);
    sbu_closep(&rt->netns_probes[i]);
  }
  free(rt->netns_fds);
  free(rt->netns_probes);
  free(rt->netns_users);
  sb_ipc_fini(rt); /* before the holds it marks done */
  sb_uid_holds_close(rt);
  sb_seccomp_free(&rt->filter);
  if (rt->empty_caps) cap_free(rt->empty_caps);
  sb_attach_warm_fini(&rt->warm);
  sb_cg_close(&rt->cg); /* joins the slots' teardown threads */
  sbu_closep(&rt->slot_ready_fd);
  if (rt->instance[0]) {
    char jobs[PATH_MAX];
    snprintf(jobs, sizeof jobs, "%s/jobs", rt->instance);
    umount2(jobs, MNT_DETACH);
    sb_rm_rf(rt->instance);
  }
  sbu_closep(&rt->lock_fd); /* after the directory is gone */
  free(rt);
}

sb_cgroup_kind sb_runtime_cgroup(const sb_runtime *rt) { return rt->cg.kind; }

const char *sb_runtime_warning(const sb_runtime *rt) { return rt->warning[0] ? rt->warning : NULL; }

void sb_runtime_add_warning(sb_runtime *rt, const char *text) {
  size_t n = strlen(rt->warning);
  snprintf(rt->warning + n, sizeof rt->warning - n, "%s%s", n ? "; " : "", text);
}


/* Without a memory cgroup (mempoll.c). Say what slips through. */
#define SB_MEMPOLL_COUNTS                                                                                      \
  "RLIMIT_DATA per process, and a supervisor poll (every 50 ms or more) of the PSS (anon + swap) of every "   \
  "process in the sandbox, the shared-memory objects (MAP_SHARED anonymous, memfd, attached SysV shm) they "   \
  "hold by fd or mapping (more than 1024 references: killed), and the bytes on its /tmp, /dev/shm and own " \
  "/app tmpfs, killing above the limit; a poll that cost c waits 20c before the next. "                      \
  "Not bounded: growth between two polls (hundreds of MiB for a fast program), SysV shm after shmdt, memfds "  \
  "in flight in a unix socket, kernel memory (pipe and socket buffers, page tables)"
static const char mempoll_root[] = SB_MEMPOLL_COUNTS;
/* Following /proc/<pid>/map_files needs CAP_SYS_ADMIN in the initial user
 * namespace: unprivileged, mapped objects count by their mapped windows. */
static const char mempoll_user[] = SB_MEMPOLL_COUNTS
    ", pages of a shared object left outside every mapped window after a partial munmap or mremap (an "
    "unprivileged supervisor cannot stat the mapped object: it counts the windows, touched or not)";

/* How the read-only directories are served (mounts.c, ro_dir) and what is not. */
#define SB_RO_OVERLAY                                                                                     \
  "the read-only directories (/usr, /etc, /lib*, a profile's root, read-only extra mounts) are served by " \
  "a private read-only overlayfs per root (per job, or per prepared root of a worker slot, reused by its "  \
  "consecutive jobs): "
#define SB_RO_EXCEPT                                                                                      \
  "Not covered (they share the host's inodes): mounts beneath those directories (bound on top as they "    \
  "are), files bound alone, %sand a directory whose overlay the kernel refused (no overlayfs, a root "     \
  "already stacked twice: bound instead)"
/* A warm step's executable (zygote_root.c, issue 35): its zygote's interpreter, never the host's file. */
#define SB_RO_WARM                                                                                          \
  " A warm step's /proc/self/exe (its zygote's interpreter) and the libraries that zygote maps are files of " \
  "read-only overlays of that zygote's own (a library save from a directory whose overlay the kernel refused, " \
  "as above), reached by no other process than the zygote and the consecutive steps of its slot it serves: "
/* /dev's nodes: made by mknod as root (mounts.c, build_dev), the host's bound in a user namespace. */
#define SB_RO_DEV_USERNS "/dev's device nodes (no mknod in a user namespace: the host's, bound), "

/* Which mechanism enforces each limit under this runtime. */
struct json_object *sb_runtime_enforcement(const sb_runtime *rt) {
  const sb_cg_backend *b = &rt->cg;
  bool v1 = b->kind == SB_CGROUP_V1, v2 = b->kind == SB_CGROUP_V2;
  json_object *o = json_object_new_object();
  json_object_object_add(o, "wall_time", json_object_new_string("monotonic timer in the supervisor, SIGKILL of the pid namespace"));
  const char *cpu = v1 ? "cgroup v1 cpuacct.usage polled every 50 ms (whole tree), RLIMIT_CPU backstop per process"
                  : (v2 && b->v2_cpu) ? "cgroup v2 cpu.stat polled every 50 ms (whole tree), RLIMIT_CPU backstop per process"
                                     : "supervisor poll of the process tree's CPU (/proc/<pid>/stat of every process and of "
                                       "those reaped, every 50 ms or more), RLIMIT_CPU backstop per process";
  json_object_object_add(o, "cpu_time", json_object_new_string(cpu));
  const char *mem = v1 ? (b->v1_memsw ? "cgroup v1 memory.limit_in_bytes + memory.memsw.limit_in_bytes"
                                      : "cgroup v1 memory.limit_in_bytes")
                  : (v2 && b->v2_memory) ? "cgroup v2 memory.max (+ memory.swap.max=0)"
                                        : rt->userns ? mempoll_user : mempoll_root;
  json_object_object_add(o, "memory", json_object_new_string(mem));
  const char *pids = v1 ? "cgroup v1 pids.max" : (v2 && b->v2_pids) ? "cgroup v2 pids.max"
                    : rt->userns ? "RLIMIT_NPROC (per uid, shared by concurrent jobs: one mapped uid)"
                                 : "RLIMIT_NPROC (per uid, and each concurrent job has its own uid)";
  json_object_object_add(o, "pids", json_object_new_string(pids));
  json_object_object_add(o, "output", json_object_new_string("supervisor counts bytes per stream, kills at the cap"));
  json_object_object_add(o, "file_size", json_object_new_string("RLIMIT_FSIZE"));
  json_object_object_add(o, "tmp_size", json_object_new_string("tmpfs size= and nr_inodes= (one inode per 4 KiB of size) "
                                                                "on /tmp and /dev/shm"));
  json_object_object_add(o, "app_size", json_object_new_string(!rt->can_mount ? "not enforced (unprivileged without a user namespace of its own: /app is a plain directory)"
                                                                  : rt->own_userns ? "tmpfs size= and nr_inodes= (one inode per 4 KiB of size) on /app (mounted in the runtime's own user namespace)"
                                                                                   : "tmpfs size= and nr_inodes= (one inode per 4 KiB of size) on /app"));
  /* Who the OOM killer may pick, and how the verdict is made (child.c, proc.c, accounting.c). */
  char oom[640];
  const char *init = rt->userns ? "sandbox init not protected (user namespace: oom_score_adj cannot be lowered)"
                     : rt->oom_adj_lowerable ? "sandbox init at oom_score_adj -1000, program at 0"
                                           : "sandbox init not protected (no CAP_SYS_RESOURCE to lower oom_score_adj); "
                                             "program at oom_score_adj 1000 (it may lower that back to 0)";
  const char *verdict = (v2 && b->v2_memory) ? "memory.oom.group=1; memory_limit when memory.events counts oom_kill "
                                               "or oom_group_kill, even if the init was the victim; host_killed when "
                                               "it counts one without its own oom (the host's OOM killer chose the job)"
                        : v1 ? "memory_limit when memory.oom_control counts an oom_kill, even if the init was the "
                               "victim; host_killed when the cgroup never reached its own limit (failcnt 0, peak "
                               "below 15/16 of it: the host's OOM killer chose the job)"
                             : "no memory cgroup, so no OOM verdict (RLIMIT_DATA makes allocations fail instead)";
  snprintf(oom, sizeof oom, "%s; %s", init, verdict);
  json_object_object_add(o, "oom", json_object_new_string(oom));
  json_object_object_add(o, "open_files", json_object_new_string("RLIMIT_NOFILE"));
  json_object_object_add(o, "core_dumps", json_object_new_string("RLIMIT_CORE=0"));
  json_object_object_add(o, "kill", json_object_new_string((v2 && b->v2_kill) ? "cgroup.kill + SIGKILL of the pid namespace's init"
                                                                              : "SIGKILL of the pid namespace's init"));
  /* how a job's processes get into its cgroup (cgroup_v2.c says why it matters) */
  const char *entry = !(v1 || v2) ? "none"
                      : (v2 && !rt->no_clone_into_cgroup) ? "clone3(CLONE_INTO_CGROUP), counters from GO"
                                                          : "the sandbox init writes itself into cgroup.procs after its set-up, before GO";
  json_object_object_add(o, "cgroup_entry", json_object_new_string(entry));
  char uid[400];
  if (rt->userns)
    snprintf(uid, sizeof uid,
             "user namespace: uid %u inside, mapped to the caller's uid %u on the host; only one id can be mapped "
             "without privilege, so concurrent jobs share that host uid and its per-uid limits (inotify instances, "
             "mqueue bytes, pending signals, RLIMIT_NPROC) with each other and with the caller",
             (unsigned)rt->opts.sandbox_uid, (unsigned)rt->outer_uid);
  else
    snprintf(uid, sizeof uid,
             "one uid (and gid) per concurrent job from %u-%u, held by an flock in %s across processes: per-uid "
             "limits and signal permissions separate concurrent jobs",
             (unsigned)rt->opts.uid_first, (unsigned)(rt->opts.uid_first + rt->opts.uid_count - 1), rt->uid_dir);
  json_object_object_add(o, "uid", json_object_new_string(uid));
  /* The shared read-only files (mounts.c's overlays, seccomp.c's advice rules; issue 22). */
  char ro[1536];
  snprintf(ro, sizeof ro, SB_RO_OVERLAY "locks on their files are on the overlay's inodes, seen neither by the host nor "
           "by a concurrent job; /etc/passwd, /etc/group%s are the sandbox's own files. " SB_RO_EXCEPT "." SB_RO_WARM
           "a lock on them is seen by neither the host nor a concurrent job, and a zygote whose executable is found "
           "locked when the next step comes (left in flight) is replaced first. A zygote whose overlays cannot be "
           "made serves no step: it runs cold, enforced.start says why",
           rt->userns ? "" : " and /dev's nodes", rt->userns ? SB_RO_DEV_USERNS : "");
  json_object_object_add(o, "file_locks", json_object_new_string(ro));
  snprintf(ro, sizeof ro, SB_RO_OVERLAY "inotify watches on their files see this job's opens and reads, never the "
           "host's or another job's; fanotify_init refused by seccomp. " SB_RO_EXCEPT "." SB_RO_WARM
           "a watch on them sees none of the host's or a concurrent job's opens and reads. A zygote whose overlays "
           "cannot be made serves no step: it runs cold, enforced.start says why",
           rt->userns ? SB_RO_DEV_USERNS : "");
  json_object_object_add(o, "file_watches", json_object_new_string(ro));
  json_object_object_add(o, "page_cache", json_object_new_string(
                         "seccomp: posix_fadvise(POSIX_FADV_DONTNEED) and madvise(MADV_PAGEOUT, MADV_COLD) return 0 "
                         "without effect (the host's and other jobs' cached pages of the shared files stay), "
                         "cachestat and process_madvise refused; mincore shows the page cache only for files the "
                         "job may write (kernel); reading and readahead still fill the host's page cache"));
  json_object_object_add(o, "native_aio", json_object_new_string(
                         "seccomp: io_setup, io_submit, ... and io_uring refused (io_setup takes from the host-wide "
                         "fs.aio-max-nr budget); POSIX aio (glibc threads) works"));
  return o;
}
