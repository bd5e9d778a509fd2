/* Prepared sandboxes (parent side). Building a sandbox's root costs ~35
 * mounts and a pivot_root per job (bench/FINDINGS.md); none of it depends
 * on the job. The pool builds it once per distinct (profile root, extra
 * mounts) and keeps the result as a mount namespace (a "template", pinned by
 * an fd; the process that built it is gone). A job's init enters a private
 * copy of it and mounts only what is the job's own (mounts.c:
 * sb_mounts_enter_template): /app, /tmp, /dev/shm, /proc and its identity
 * files. Its pid, ipc and uts namespaces, session, uid and cgroup are new
 * per job as without the pool. HACKING.md ("Prepared sandboxes") says why
 * nothing flows from one job to the next.
 *
 * Templates are per worker slot (the spec's netns_slot, like the shared
 * network namespaces): jobs running at the same time never share one, so
 * not even a lock on the template's own directories (/, /dev) is seen by a
 * concurrent job; consecutive jobs of a slot share it only after every
 * process of the earlier one is gone.
 *
 * The template is never changed after it is built: its root and every bind
 * are read-only mounts, a job's copy is private (no propagation), and jobs
 * hold no capability to remount anything. Its own files (the root tmpfs,
 * /dev's, the masks over secret directories: the same inodes in every copy)
 * can be locked by a job, though (flock, OFD locks: read locks need only
 * read access), and a lock outlives the job when its descriptor was left in
 * flight. So the daemon keeps a descriptor of each of those files (found at
 * build time: the file systems of the builder's mountinfo that our own
 * namespace does not have, walked) and, before handing the template to the
 * slot's next run, tests each for a lock held by anyone; a template with one
 * is dropped and built again (rt->pool_rebuilds). ~10 files, 2 syscalls
 * each.
 *
 * Also here: the pool's teardown queue (teardown.c). A job's mount namespace
 * (~40 mounts) is torn down when its last reference goes; without a
 * reference of ours that happens in the exiting init, before the exit is
 * visible to us, i.e. on the job's critical path. We hold one from READY and
 * close it on a teardown thread: the slot's own when the job ran in the
 * slot's cgroup (its cleaning follows, cgroup_slot.c), else the pool's. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define SB_POOL_PROBES 48 /* files of a template tested for locks; more are not looked at */

struct sb_pool_tmpl {
  char *key;
  int fd;
  uint64_t used;
  int probes[SB_POOL_PROBES]; /* its own files (see the top) */
  int n_probes;
};

/* Devices of the file systems mounted in a mountinfo, at most cap. */
static int mount_devs(const char *path, dev_t *devs, int cap) {
  SBU_AUTOFCLOSE FILE *f = fopen(path, "re");
  int n = 0;
  char line[4096];
  unsigned maj, min;
  while (f && n < cap && fgets(line, sizeof line, f))
    if (sscanf(line, "%*d %*d %u:%u", &maj, &min) == 2) devs[n++] = makedev(maj, min);
  return n;
}

static void add_probes(int dir, dev_t dev, int depth, int *out, int *n) {
  if (*n >= SB_POOL_PROBES) {
    close(dir);
    return;
  }
  out[(*n)++] = dir;
  int again = depth > 0 ? dup(dir) : -1;
  DIR *d = again >= 0 ? fdopendir(again) : NULL;
  if (again >= 0 && !d) close(again);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    struct stat st;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != dev) continue; /* a mount on it */
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) continue;
    int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    if (S_ISDIR(st.st_mode)) add_probes(fd, dev, depth - 1, out, n);
    else if (*n < SB_POOL_PROBES) out[(*n)++] = fd;
    else close(fd);
  }
  if (d) closedir(d);
}

/* The template's own files, through its builder (alive, in it): every file
 * system its mountinfo lists that ours does not (a bind of a host path
 * shares the host's device), walked from its mount point. */
static void find_probes(pid_t pid, int *out, int *n) {
  dev_t ours[1024], dev;
  int n_ours = mount_devs("/proc/self/mountinfo", ours, 1024);
  char path[PATH_MAX], mp[PATH_MAX], line[4096];
  snprintf(path, sizeof path, "/proc/%d/mountinfo", (int)pid);
  SBU_AUTOFCLOSE FILE *f = fopen(path, "re");
  unsigned maj, min;
  while (f && fgets(line, sizeof line, f)) {
    if (sscanf(line, "%*d %*d %u:%u %*s %4095s", &maj, &min, mp) != 3 || strchr(mp, '\\')) continue;
    dev = makedev(maj, min);
    bool host = false;
    for (int i = 0; i < n_ours && !host; i++) host = ours[i] == dev;
    if (host) continue;
    snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, mp);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) add_probes(fd, dev, 3, out, n);
  }
}

bool sb_file_locked(int fd) {
  if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
    if (errno == EWOULDBLOCK) return true;
  } else {
    flock(fd, LOCK_UN);
  }
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK; /* OFD or POSIX */
}

/* A lock on any of the template's own files, by anyone (no run of the slot
 * is alive when we ask: what is there was left in flight). */
static bool template_locked(const sb_pool_tmpl *t) {
  for (int i = 0; i < t->n_probes; i++)
    if (sb_file_locked(t->probes[i])) return true;
  return false;
}

static void drop(sb_runtime *rt, sb_pool_tmpl *t) { /* running jobs entered it already: their copies do not need it */
  free(t->key);
  t->key = NULL;
  sb_pool_defer_close(rt, t->fd);
  for (int i = 0; i < t->n_probes; i++) sb_pool_defer_close(rt, t->probes[i]);
  t->n_probes = 0;
}

/* Paths a job mounts itself: an extra mount at or under them would be
 * covered, so such a spec takes the fresh path. */
static bool under_job_paths(const char *t) {
  static const char *const own[] = {"/app", "/tmp", "/dev", "/proc", "/etc/passwd", "/etc/group", NULL};
  for (const char *const *o = own; *o; o++) {
    size_t n = strlen(*o);
    if (strncmp(t, *o, n) == 0 && (t[n] == '\0' || t[n] == '/')) return true;
  }
  return strcmp(t, "/") == 0 || strstr(t, "/..") != NULL;
}

static char *make_key(int slot, const char *root, const sb_mount *m, size_t n) {
  size_t len = strlen(root) + 16;
  for (size_t i = 0; i < n; i++) len += strlen(m[i].source) + strlen(m[i].target) + 4;
  char *k = malloc(len);
  if (!k) return NULL;
  char *p = k + sprintf(k, "%d\n%s\n", slot, root);
  for (size_t i = 0; i < n; i++) p += sprintf(p, "%s\t%s\t%c\n", m[i].source, m[i].target, m[i].writable ? 'w' : 'r');
  return k;
}

/* A short-lived process builds the root in a mount namespace of its own and
 * waits; we open its namespace and kill it. Cloned by the spawner (our
 * child, CLONE_PARENT): it holds nothing of the daemon's. */
static int build_template(sb_runtime *rt, const sb_mount_plan *plan, int *probes, int *n_probes,
                          char err[SB_ERR_MAX]) {
  int st[2];
  if (pipe2(st, O_CLOEXEC) < 0) {
    sb_err(err, "pool: pipe: %s", strerror(errno));
    return -errno;
  }
  sb_plan a;
  sb_plan_init(&a);
  a.mounts = *plan;
  a.cwd = "/";
  a.ctl_fd = st[1];
  sb_spawned sp;
  char serr[SB_ERR_MAX] = "";
  long pid = sb_spawner_clone(rt, SB_SPAWN_TEMPLATE_BUILDER, &a, CLONE_NEWNS, -1, &sp, serr) < 0 ? -1 : sp.pid;
  if (pid > 0) close(sp.pidfd);
  close(st[1]);
  if (pid < 0) {
    close(st[0]);
    sb_err(err, "pool: template builder: %s", serr);
    return -EIO;
  }
  char what[SB_ERR_MAX];
  ssize_t n;
  while ((n = read(st[0], what, sizeof what - 1)) < 0 && errno == EINTR) {
  }
  close(st[0]);
  int fd = -EIO;
  if (n == 1 && what[0] == 'y') {
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/ns/mnt", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      fd = -errno;
      sb_err(err, "pool: open %s: %s", path, strerror(errno));
    } else {
      find_probes((pid_t)pid, probes, n_probes);
    }
  } else {
    what[n > 0 ? n : 0] = '\0';
    sb_err(err, "pool: template: %s", n > 1 ? what + 1 : "builder died");
  }
  kill((pid_t)pid, SIGKILL);
  while (waitpid((pid_t)pid, NULL, 0) < 0 && errno == EINTR) {
  }
  return fd;
}

int sb_pool_template(sb_runtime *rt, int slot, const sb_mount_plan *plan, char err[SB_ERR_MAX]) {
  if (sb_runtime_pool_off(rt)) return -ENOTSUP;
  for (size_t i = 0; i < plan->n_extra; i++)
    if (under_job_paths(plan->extra[i].target)) return -ENOTSUP;
  char *key = make_key(slot, plan->root, plan->extra, plan->n_extra);
  int cap = rt->opts.pool * (rt->n_netns > 0 ? rt->n_netns : 1);
  if (!key) return -ENOMEM;
  rt->pool_clock++;
  sb_pool_tmpl *lru = NULL;
  for (int i = 0; i < rt->n_pool; i++) {
    sb_pool_tmpl *t = &rt->pool[i];
    if (t->key && strcmp(t->key, key) == 0) {
      if (template_locked(t)) { /* built again below, in its place */
        drop(rt, t);
        rt->pool_rebuilds++;
        lru = t;
        break;
      }
      free(key);
      t->used = rt->pool_clock;
      return t->fd;
    }
    if (!t->key || !lru || (lru->key && t->used < lru->used)) lru = t;
  }
  int probes[SB_POOL_PROBES], n_probes = 0;
  /* the mounts beneath its read-only directories, now (a job that enters
   * the template does not list them: proc.c) */
  char **submounts = plan->submounts ? NULL : sb_submounts_list(plan->root, plan->extra, plan->n_extra);
  sb_mount_plan with = *plan;
  if (submounts) with.submounts = (const char *const *)submounts;
  int fd = build_template(rt, &with, probes, &n_probes, err);
  sb_submounts_free(submounts);
  if (fd < 0) {
    free(key);
    return fd;
  }
  if (!rt->pool) rt->pool = calloc((size_t)cap, sizeof *rt->pool);
  if (!rt->pool) {
    close(fd);
    free(key);
    return -ENOMEM;
  }
  sb_pool_tmpl *t = (lru && !lru->key) || rt->n_pool >= cap ? lru : &rt->pool[rt->n_pool++];
  if (t->key) drop(rt, t);
  t->key = key;
  t->fd = fd;
  t->used = rt->pool_clock;
  memcpy(t->probes, probes, (size_t)n_probes * sizeof *probes);
  t->n_probes = n_probes;
  return fd;
}

/* /app for a pooled job: the workspace's mount, cloned as a detached tree
 * here (the template cannot see host paths) and moved into place by the
 * init. Taken from the workspace's own directory fd, not its path. */
static int app_tree(const sb_workspace *ws) {
  int fd = (int)syscall(SYS_open_tree, ws->dirfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
  if (fd < 0) return -errno;
  struct mount_attr ma = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
  if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &ma, sizeof ma) < 0) {
    int e = errno;
    close(fd);
    return -e;
  }
  return fd;
}

const char *sb_runtime_pool_off(const sb_runtime *rt) {
  if (rt->pool_off[0]) return rt->pool_off;
  if (rt->opts.pool <= 0) return "--pool 0 (or SURGEBOX_POOL=0)";
  if (rt->userns || !rt->can_mount) return "user-namespace mode (not run as root): each job builds its own root";
  return NULL;
}

void sb_runtime_pool_disable(sb_runtime *rt, const char *why) {
  snprintf(rt->pool_off, sizeof rt->pool_off, "%s", why);
  for (int i = 0; i < rt->n_pool; i++) /* running jobs hold their own copies */
    if (rt->pool[i].key) drop(rt, &rt->pool[i]);
  rt->n_pool = 0;
}

void sb_pool_prepare(sb_runtime *rt, int slot, const sb_workspace *ws, const sb_mount_plan *plan, int *tmpl_fd,
                     int *app_tree_fd, char note[SB_ERR_MAX]) {
  *tmpl_fd = *app_tree_fd = -1;
  const char *off = sb_runtime_pool_off(rt);
  if (off) {
    snprintf(note, SB_ERR_MAX, "off: %s", off);
    return;
  }
  sb_mount_plan tp = *plan;
  tp.template = true;
  char err[SB_ERR_MAX] = "";
  int t = sb_pool_template(rt, slot, &tp, err);
  if (t == -ENOTSUP) {
    snprintf(note, SB_ERR_MAX, "not used: an extra mount at or under a path each job mounts itself");
    return;
  }
  if (t < 0) { /* cannot be built: the fresh path (which reports real errors) */
    rt->pool_fallbacks++;
    snprintf(note, SB_ERR_MAX, "not used: %.*s", SB_ERR_MAX - 16, err[0] ? err : strerror(-t));
    return;
  }
  if (ws) {
    int a = app_tree(ws);
    if (a < 0) {
      rt->pool_fallbacks++;
      snprintf(note, SB_ERR_MAX, "not used: open_tree of the workspace: %s", strerror(-a));
      return;
    }
    *app_tree_fd = a;
  }
  *tmpl_fd = t;
  snprintf(note, SB_ERR_MAX, "used");
}

#ifndef PIDFD_GET_MNT_NAMESPACE
#define PIDFD_GET_MNT_NAMESPACE _IO(0xFF, 3) /* linux/pidfd.h, 6.11+ */
#endif

int sb_pool_job_ns(int pidfd, pid_t pid) { return sb_ns_of_job(pidfd, pid, PIDFD_GET_MNT_NAMESPACE, "mnt"); }

void sb_pool_init(sb_runtime *rt) {
  if (rt->opts.pool <= 0) return;
  /* Slots wait on their own queues (cgroup_slot.c) and say so here; without
   * it no slot cgroup is used. */
  rt->slot_ready_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  sb_teardown_start(&rt->teardown); /* else closed on the caller's thread */
}

void sb_pool_defer_close(sb_runtime *rt, int fd) {
  if (fd >= 0 && !sb_teardown_push(&rt->teardown, fd, SB_TEARDOWN_NONE)) close(fd);
}

void sb_pool_fini(sb_runtime *rt) {
  for (int i = 0; i < rt->n_pool; i++) {
    if (!rt->pool[i].key) continue;
    free(rt->pool[i].key);
    close(rt->pool[i].fd);
    for (int k = 0; k < rt->pool[i].n_probes; k++) close(rt->pool[i].probes[k]);
  }
  free(rt->pool);
  rt->pool = NULL;
  rt->n_pool = 0;
  sb_teardown_stop(&rt->teardown);
}
