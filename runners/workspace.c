/* The job's /app (parent side): a directory under the runtime instance,
 * backed by its own size-capped tmpfs when we are root (the mount lives in
 * the runtime's private mount namespace). Several runs (compile, then run)
 * of one job share it. Files belong to the sandbox uid so that programs can
 * rewrite them, as SURGE's containers (running as root) could. Every
 * access goes through wsfs.c, which never follows what a program planted. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>

int sb_workspace_create(sb_runtime *rt, uint64_t size_mib, sb_workspace **out, char err[SB_ERR_MAX]) {
  *out = NULL;
  sb_workspace *ws = calloc(1, sizeof *ws);
  if (!ws) {
    sb_err(err, "out of memory");
    return -ENOMEM;
  }
  ws->rt = rt;
  ws->dirfd = -1;
  int lrc = sb_uid_acquire(rt, &ws->lease, err);
  if (lrc < 0) {
    free(ws);
    return lrc;
  }
  /* Owner of what we put into /app: the job's own uid as root; in user mode
   * our 0 (what the sandbox's one mapped uid is, seen from here). */
  ws->uid = rt->userns ? rt->files_uid : sb_uid_lease_uid(ws->lease);
  ws->gid = rt->userns ? rt->files_gid : sb_uid_lease_gid(ws->lease);
  snprintf(ws->path, sizeof ws->path, "%s/jobs/w%llu", rt->instance, (unsigned long long)++rt->counter);
  if (mkdir(ws->path, 0755) < 0) {
    int e = errno;
    sb_err(err, "mkdir %s: %s", ws->path, strerror(e));
    sb_uid_release(ws->lease);
    free(ws);
    return -e;
  }
  if (rt->can_mount) {
    char opts[128];
    snprintf(opts, sizeof opts, "size=%llum,nr_inodes=%llu,mode=0755,uid=%u,gid=%u", (unsigned long long)size_mib,
             sb_tmpfs_inodes(size_mib), (unsigned)ws->uid, (unsigned)ws->gid);
    if (mount("tmpfs", ws->path, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
      int e = errno;
      sb_err(err, "mount tmpfs on %s: %s", ws->path, strerror(e));
      rmdir(ws->path);
      sb_uid_release(ws->lease);
      free(ws);
      return -e;
    }
    ws->mounted = true;
  }
  ws->dirfd = open(ws->path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (ws->dirfd < 0) {
    int e = errno;
    sb_err(err, "open %s: %s", ws->path, strerror(e));
    sb_workspace_destroy(ws);
    return -e;
  }
  *out = ws;
  return 0;
}

const char *sb_workspace_path(const sb_workspace *ws) { return ws->path; }

static bool safe_rel_path(const char *p) {
  if (!p || !*p || p[0] == '/') return false;
  for (const char *s = p; *s;) {
    const char *e = strchrnul(s, '/');
    size_t n = (size_t)(e - s);
    if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) return false;
    s = *e ? e + 1 : e;
  }
  return true;
}

int sb_workspace_write(sb_workspace *ws, const char *rel_path, const void *data, size_t len, mode_t mode,
                       char err[SB_ERR_MAX]) {
  if (!safe_rel_path(rel_path)) {
    sb_err(err, "unsafe path %s: must be relative, without '.' or '..' components", rel_path ? rel_path : "(null)");
    return -EINVAL;
  }
  return sb_wsfs_write(ws, rel_path, data, len, mode, err);
}

/* Copying a host tree: nftw has no user pointer, hence the file statics
 * (parent side, one copy at a time). */
static const char *copy_src;
static sb_workspace *copy_ws;
static char *copy_err;

static int copy_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)ftw;
  const char *rel = path + strlen(copy_src);
  while (*rel == '/') rel++;
  if (!*rel) return 0;
  if (flag == FTW_D) return sb_wsfs_mkdir(copy_ws, rel, st->st_mode & 0777, copy_err) < 0 ? -1 : 0;
  if (flag == FTW_SL) {
    char target[PATH_MAX];
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n < 0) return 0;
    target[n] = '\0';
    return sb_wsfs_symlink(copy_ws, rel, target, copy_err) < 0 ? -1 : 0;
  }
  if (flag != FTW_F || !S_ISREG(st->st_mode)) return 0; /* sockets, fifos, devices: skipped */
  SBU_AUTOCLOSE int in = open(path, O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    sb_err(copy_err, "open %s: %s", path, strerror(errno));
    return -1;
  }
  SBU_AUTOCLOSE int outfd = sb_wsfs_create(copy_ws, rel, copy_err);
  if (outfd < 0) return -1;
  off_t left = st->st_size;
  while (left > 0) {
    ssize_t n = sendfile(outfd, in, NULL, (size_t)left); /* copy_file_range refuses cross-fs copies */
    if (n <= 0) {
      if (n < 0) sb_err(copy_err, "copy %s: %s", path, strerror(errno));
      else sb_err(copy_err, "copy %s: file shrank", path);
      return -1;
    }
    left -= n;
  }
  sb_wsfs_own(copy_ws, outfd, st->st_mode);
  return 0;
}

int sb_workspace_copy_in(sb_workspace *ws, const char *src_dir, char err[SB_ERR_MAX]) {
  struct stat st;
  if (stat(src_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
    sb_err(err, "%s is not a directory", src_dir);
    return -ENOTDIR;
  }
  copy_src = src_dir;
  copy_ws = ws;
  copy_err = err;
  int rc = nftw(src_dir, copy_entry, 32, FTW_PHYS);
  copy_src = NULL;
  copy_ws = NULL;
  copy_err = NULL;
  return rc == 0 ? 0 : -EIO;
}

void sb_workspace_destroy(sb_workspace *ws) { sb_workspace_destroy_in_slot(ws, -1); }

void sb_workspace_destroy_in_slot(sb_workspace *ws, int slot) {
  if (!ws) return;
  sbu_closep(&ws->dirfd);
  /* An unmount waits for an RCU grace period (up to a second on a loaded
   * machine): on a teardown thread, not the caller's (the daemon's loop).
   * The path is unique to this workspace (the runtime's counter). */
  if (ws->mounted && sb_teardown_push_umount(sb_cg_slot_queue(ws->rt, slot), -1, SB_TEARDOWN_NONE, ws->path)) {
    sb_uid_release(ws->lease);
    free(ws);
    return;
  }
  if (ws->mounted) umount2(ws->path, MNT_DETACH);
  /* Unmounted, the mountpoint is an empty directory of ours: one rmdir
   * (it never follows a symlink). Anything else left there (no tmpfs, or
   * the unmount failed) goes through the link-safe walker. */
  if (rmdir(ws->path) < 0 && errno != ENOENT) sb_rm_rf(ws->path);
  sb_uid_release(ws->lease);
  free(ws);
}

const sb_uid_lease *sb_workspace_lease(const sb_workspace *ws) { return ws->lease; }
