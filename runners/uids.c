/* One uid (and a private gid of the same number) per concurrent job, as
 * isolate gives each box its own: per-uid kernel resources (inotify
 * instances, POSIX mqueue bytes, pending signals, RLIMIT_NPROC) and signal
 * permission checks then separate jobs from each other.
 *
 * Allocation holds across processes (several daemons, surgebox-run): a uid
 * is taken by an flock(LOCK_EX) on <lock dir>/<uid>.lock, held as long as
 * the lease lives; the kernel drops it if the process dies. The holder
 * unlinks its file before releasing, so nothing accumulates; a taker that
 * opened the old file meanwhile sees that the path no longer names the inode
 * it locked and moves on (the usual lock-file-unlink protocol).
 *
 * A lease given back is not always free for the next job at once: its last
 * job may have left per-uid budgets taken (descriptors in flight: a POSIX
 * queue's bytes, pipes, inotify instances; namespaces.c sees them, and
 * ipcns.c empties the ipc namespace). sb_uid_hold marks such a uid; its
 * release then keeps the lock (so no process takes the uid) on a list that
 * every acquire sweeps, and the lock goes only once the probe reads no
 * socket left (the kernel's collector freed what was in flight; we poke it
 * by closing a unix socket of our own) or the time is over. When every uid
 * is leased or held, sb_uid_acquire says -EBUSY and sb_uids_waiting tells a
 * scheduler to try again later instead of failing the job.
 *
 * User-namespace mode (not root): only one id can be mapped without a
 * setuid helper, so every lease is the configured sandbox uid, unlocked.
 * Parent side only. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>

struct sb_uid_lease {
  sb_runtime *rt;
  uid_t uid;
  int fd; /* the lock; -1 in user-namespace mode */
};

/* A uid whose budgets may still be taken: marked (lease NULL) while a job
 * holds it, then holding the released lease's lock. */
struct sb_uid_hold {
  struct sb_uid_hold *next;
  uid_t uid;
  int probe;         /* a namespace's probe: held while it counts sockets; -1 none */
  int (*in_flight)(int probe); /* the caller's count of what is left there (<= 0: nothing) */
  uint64_t until_ns; /* held until then; 0 none */
  uint64_t since_ns;
  atomic_bool busy;  /* held until another thread says done (sb_uid_hold_done) */
  sb_uid_lease *lease;
};

static void unlock(sb_uid_lease *l) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%u.lock", l->rt->uid_dir, (unsigned)l->uid);
  unlink(path); /* still holding the lock: see the top of this file */
  sbu_closep(&l->fd); /* drops the flock */
  free(l);
}

struct sb_uid_hold *sb_uid_hold(sb_runtime *rt, uid_t uid, int probe, int (*in_flight)(int probe), unsigned ms,
                                bool busy) {
  struct sb_uid_hold *h = rt->userns ? NULL : calloc(1, sizeof *h); /* user-namespace mode: no leases */
  if (!h) { /* the uid is leased again as before */
    if (probe >= 0) close(probe);
    return NULL;
  }
  h->uid = uid;
  h->probe = in_flight ? probe : -1;
  h->in_flight = in_flight;
  if (probe >= 0 && !in_flight) close(probe);
  h->since_ns = sbu_now_ns();
  h->until_ns = ms ? h->since_ns + (uint64_t)ms * 1000000u : 0;
  atomic_init(&h->busy, busy);
  h->next = rt->uid_holds;
  rt->uid_holds = h;
  return h;
}

void sb_uid_hold_done(struct sb_uid_hold *h) {
  if (h) atomic_store(&h->busy, false);
}

/* Past this, a uid goes back even if its probe still counts sockets: the
 * collector frees a dead cycle within milliseconds, and a range as small as
 * the number of workers must not stall on something it never frees. */
#define SB_UID_HOLD_MAX_NS (10ull * 1000000000ull)

static bool hold_over(struct sb_uid_hold *h, uint64_t now) {
  if (atomic_load(&h->busy)) return false;
  if (h->until_ns && now < h->until_ns) return false;
  if (now - h->since_ns > SB_UID_HOLD_MAX_NS) return true;
  return h->probe < 0 || h->in_flight(h->probe) <= 0; /* 0, or unreadable: nothing to wait for */
}

/* Holds whose uid's lease is released and whose wait is over go. */
static void sweep(sb_runtime *rt) {
  uint64_t now = sbu_now_ns();
  bool waiting = false;
  for (struct sb_uid_hold **pp = &rt->uid_holds; *pp;) {
    struct sb_uid_hold *h = *pp;
    if (!h->lease || !hold_over(h, now)) {
      waiting = waiting || (h->lease && h->probe >= 0);
      pp = &h->next;
      continue;
    }
    *pp = h->next;
    bool last = true; /* another hold of the same lease keeps the lock */
    for (struct sb_uid_hold *o = rt->uid_holds; o; o = o->next) last = last && o->lease != h->lease;
    if (last) unlock(h->lease);
    if (h->probe >= 0) close(h->probe);
    free(h);
  }
  if (waiting) { /* the unix collector runs when a unix socket is released: release one */
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0) {
      close(sp[0]);
      close(sp[1]);
    }
  }
}

bool sb_uids_waiting(sb_runtime *rt) {
  if (!rt->uid_holds) return false;
  sweep(rt);
  uint32_t held = 0; /* distinct leases */
  for (struct sb_uid_hold *h = rt->uid_holds; h; h = h->next) {
    bool first = h->lease != NULL;
    for (struct sb_uid_hold *o = rt->uid_holds; first && o != h; o = o->next) first = o->lease != h->lease;
    held += first;
  }
  return held && rt->uids_in_use + held >= rt->opts.uid_count;
}

void sb_runtime_slot_rebuilds(sb_runtime *rt, uint64_t *netns, uint64_t *templates, uint32_t *uids_held) {
  sweep(rt);
  *netns = rt->netns_rebuilds;
  *templates = rt->pool_rebuilds;
  *uids_held = 0;
  for (const struct sb_uid_hold *h = rt->uid_holds; h; h = h->next) *uids_held += h->lease != NULL;
}

void sb_uid_holds_close(sb_runtime *rt) {
  while (rt->uid_holds) {
    struct sb_uid_hold *h = rt->uid_holds;
    rt->uid_holds = h->next;
    bool last = h->lease != NULL;
    for (struct sb_uid_hold *o = rt->uid_holds; last && o; o = o->next)
      if (o->lease == h->lease) last = false;
    if (last) unlock(h->lease);
    if (h->probe >= 0) close(h->probe);
    free(h);
  }
}

/* "name:x:ID:..." (passwd, group) or "name:FIRST:COUNT" (subuid, subgid):
 * the first line whose ids meet [first, first+count), described in what. */
static bool file_collides(const char *path, bool sub, uint64_t first, uint64_t count, char *what, size_t cap) {
  SBU_AUTOFCLOSE FILE *f = fopen(path, "re");
  if (!f) return false; /* absent: nothing allocated there */
  char line[1024];
  bool hit = false;
  while (!hit && fgets(line, sizeof line, f)) {
    char *fields[4] = {0};
    int n = 0;
    for (char *s = line, *tok; n < 4 && (tok = strsep(&s, ":")); n++) fields[n] = tok;
    const char *id = sub ? fields[1] : fields[2];
    if (!id || !*id || (sub && !fields[2])) continue;
    char *end;
    unsigned long long lo = strtoull(id, &end, 10), len = 1;
    if (end == id) continue;
    if (sub) {
      len = strtoull(fields[2], &end, 10);
      if (end == fields[2]) continue;
    }
    if (lo < first + count && first < lo + len) {
      hit = true;
      if (sub)
        snprintf(what, cap, "%s: %s owns %llu-%llu", path, fields[0], lo, lo + len - 1);
      else
        snprintf(what, cap, "%s: %s has id %llu", path, fields[0], lo);
    }
  }
  return hit;
}

int sb_uid_range_parse(const char *s, uid_t *first, uint32_t *count) {
  char *end;
  errno = 0;
  if (!s || *s < '0' || *s > '9') return -EINVAL;
  unsigned long long a = strtoull(s, &end, 10);
  if (errno || *end != '-' || end[1] < '0' || end[1] > '9') return -EINVAL;
  const char *b_s = end + 1;
  unsigned long long b = strtoull(b_s, &end, 10);
  if (errno || *end || b < a || b >= 0xFFFFFFFFull) return -EINVAL;
  *first = (uid_t)a;
  *count = (uint32_t)(b - a + 1);
  return 0;
}

int sb_uid_range_check(uid_t first, uint32_t count, const char *etc, char err[SB_ERR_MAX]) {
  if (count == 0 || (uint64_t)first + count > 0x80000000ull || first == 0) {
    sb_err(err, "uid range %u+%u: must be non-empty, above 0 and below 2^31", (unsigned)first, (unsigned)count);
    return -EINVAL;
  }
  if (first <= 65535 && (uint64_t)first + count > 65534) {
    sb_err(err, "uid range %u-%llu contains nobody (65534) or (uint16_t)-1", (unsigned)first,
           (unsigned long long)first + count - 1);
    return -EINVAL;
  }
  static const char *const files[] = {"passwd", "group", "subuid", "subgid"};
  for (size_t i = 0; i < 4; i++) {
    char path[PATH_MAX], what[1200];
    snprintf(path, sizeof path, "%s/%s", etc, files[i]);
    if (file_collides(path, i >= 2, first, count, what, sizeof what)) {
      sb_err(err, "uid range %u-%llu collides with an existing id (%s)", (unsigned)first,
             (unsigned long long)first + count - 1, what);
      return -EEXIST;
    }
  }
  return 0;
}

int sb_uid_acquire(sb_runtime *rt, sb_uid_lease **out, char err[SB_ERR_MAX]) {
  *out = NULL;
  SBU_AUTOFREE sb_uid_lease *l = calloc(1, sizeof *l);
  if (!l) {
    sb_err(err, "out of memory");
    return -ENOMEM;
  }
  l->rt = rt;
  l->fd = -1;
  if (rt->userns) {
    l->uid = rt->opts.sandbox_uid;
    rt->uids_in_use++;
    *out = sbu_take_ptr(&l);
    return 0;
  }
  sweep(rt);
  uint32_t count = rt->opts.uid_count;
  for (uint32_t tried = 0; tried < count; tried++) {
    /* Round-robin from where this process stopped: a freed uid is not
     * reused at once, and processes do not all contend on the first one. */
    uid_t uid = rt->opts.uid_first + (rt->uid_next++ % count);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%u.lock", rt->uid_dir, (unsigned)uid);
    SBU_AUTOCLOSE int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600); /* closed unless kept */
    if (fd < 0) {
      int e = errno;
      sb_err(err, "cannot open %s: %s", path, strerror(e));
      return -e;
    }
    struct stat by_fd, by_path;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &by_fd) == 0 && stat(path, &by_path) == 0 &&
        by_fd.st_ino == by_path.st_ino && by_fd.st_dev == by_path.st_dev) {
      l->uid = uid;
      l->fd = sbu_take_fd(&fd);
      rt->uids_in_use++;
      *out = sbu_take_ptr(&l);
      return 0;
    }
  }
  bool held = false;
  for (struct sb_uid_hold *h = rt->uid_holds; h; h = h->next) held = held || h->lease;
  sb_err(err, "all %u sandbox uids (%u-%u) are in use%s", (unsigned)count, (unsigned)rt->opts.uid_first,
         (unsigned)(rt->opts.uid_first + count - 1),
         held ? " or held until what their last job left in flight is freed" : "");
  return held ? -EBUSY : -EAGAIN;
}

uid_t sb_uid_lease_uid(const sb_uid_lease *l) { return l->uid; }
gid_t sb_uid_lease_gid(const sb_uid_lease *l) { return (gid_t)l->uid; }

void sb_uid_release(sb_uid_lease *l) {
  if (!l) return;
  sb_runtime *rt = l->rt;
  rt->uids_in_use--;
  if (l->fd < 0) {
    free(l);
    return;
  }
  bool kept = false;
  for (struct sb_uid_hold *h = rt->uid_holds; h; h = h->next)
    if (h->uid == l->uid && !h->lease) h->lease = l, kept = true;
  if (!kept) unlock(l);
  else sweep(rt); /* perhaps over already */
}

int sb_uids_open(sb_runtime *rt, char err[SB_ERR_MAX]) {
  if (rt->userns) return 0;
  int rc = sb_uid_range_check(rt->opts.uid_first, rt->opts.uid_count, "/etc", err);
  if (rc < 0) return rc;
  snprintf(rt->uid_dir, sizeof rt->uid_dir, "%s", rt->opts.uid_lock_dir ? rt->opts.uid_lock_dir : "/run/surgebox/uids");
  if ((rc = sb_mkdir_p(rt->uid_dir, 0700)) < 0) {
    sb_err(err, "cannot create %s: %s", rt->uid_dir, strerror(-rc));
    return rc;
  }
  return 0;
}

bool sb_runtime_uid_range(const sb_runtime *rt, uid_t *first, uint32_t *count, uint32_t *in_use) {
  *first = rt->opts.uid_first;
  *count = rt->opts.uid_count;
  *in_use = rt->uids_in_use;
  return !rt->userns;
}
