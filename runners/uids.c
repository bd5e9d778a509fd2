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
 * User-namespace mode (not root): only one id can be mapped without a
 * setuid helper, so every lease is the configured sandbox uid, unlocked.
 * Parent side only. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

struct sb_uid_lease {
  sb_runtime *rt;
  uid_t uid;
  int fd; /* the lock; -1 in user-namespace mode */
};

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
  sb_err(err, "all %u sandbox uids (%u-%u) are in use", (unsigned)count, (unsigned)rt->opts.uid_first,
         (unsigned)(rt->opts.uid_first + count - 1));
  return -EAGAIN;
}

uid_t sb_uid_lease_uid(const sb_uid_lease *l) { return l->uid; }
gid_t sb_uid_lease_gid(const sb_uid_lease *l) { return (gid_t)l->uid; }

void sb_uid_release(sb_uid_lease *l) {
  if (!l) return;
  l->rt->uids_in_use--;
  if (l->fd >= 0) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%u.lock", l->rt->uid_dir, (unsigned)l->uid);
    unlink(path); /* still holding the lock: see the top of this file */
    sbu_closep(&l->fd); /* drops the flock */
  }
  free(l);
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
