/* The job's /app (parent side): a directory under the runtime instance,
 * backed by its own size-capped tmpfs when we are root (the mount lives in
 * the runtime's private mount namespace). Several runs (compile, then run)
 * of one job share it. Files belong to the sandbox uid so that programs can
 * rewrite them, as SURGE's containers (running as root) could. */
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

struct sb_workspace {
  sb_runtime *rt;
  char path[PATH_MAX];
  bool mounted;
};

int sb_workspace_create(sb_runtime *rt, uint64_t size_mib, sb_workspace **out, char err[SB_ERR_MAX]) {
  *out = NULL;
  sb_workspace *ws = calloc(1, sizeof *ws);
  if (!ws) {
    sb_err(err, "out of memory");
    return -ENOMEM;
  }
  ws->rt = rt;
  snprintf(ws->path, sizeof ws->path, "%s/jobs/w%llu", rt->instance, (unsigned long long)++rt->counter);
  if (mkdir(ws->path, 0755) < 0) {
    sb_err(err, "mkdir %s: %s", ws->path, strerror(errno));
    free(ws);
    return -errno;
  }
  if (!rt->userns) {
    char opts[128];
    snprintf(opts, sizeof opts, "size=%llum,nr_inodes=%llu,mode=0755,uid=%u,gid=%u", (unsigned long long)size_mib,
             sb_tmpfs_inodes(size_mib), (unsigned)rt->opts.sandbox_uid, (unsigned)rt->opts.sandbox_gid);
    if (mount("tmpfs", ws->path, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
      sb_err(err, "mount tmpfs on %s: %s", ws->path, strerror(errno));
      rmdir(ws->path);
      free(ws);
      return -errno;
    }
    ws->mounted = true;
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

static void own(const sb_workspace *ws, const char *path) {
  if (ws->rt->userns) return;
  if (lchown(path, ws->rt->opts.sandbox_uid, ws->rt->opts.sandbox_gid) < 0) {
    /* best effort: the program can still read the file */
  }
}

static int make_parents(const sb_workspace *ws, const char *full) {
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s", full);
  size_t base = strlen(ws->path);
  for (char *p = tmp + base + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(tmp, 0755) == 0) own(ws, tmp);
    else if (errno != EEXIST) return -errno;
    *p = '/';
  }
  return 0;
}

int sb_workspace_write(sb_workspace *ws, const char *rel_path, const void *data, size_t len, mode_t mode,
                       char err[SB_ERR_MAX]) {
  if (!safe_rel_path(rel_path)) {
    sb_err(err, "unsafe path %s: must be relative, without '.' or '..' components", rel_path ? rel_path : "(null)");
    return -EINVAL;
  }
  char full[PATH_MAX];
  if (snprintf(full, sizeof full, "%s/%s", ws->path, rel_path) >= (int)sizeof full) {
    sb_err(err, "path too long: %s", rel_path);
    return -ENAMETOOLONG;
  }
  int rc = make_parents(ws, full);
  if (rc < 0) {
    sb_err(err, "mkdir for %s: %s", rel_path, strerror(-rc));
    return rc;
  }
  /* O_NOFOLLOW: never write through a symlink. */
  int fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode & 0777);
  if (fd < 0) {
    sb_err(err, "create %s: %s", rel_path, strerror(errno));
    return -errno;
  }
  const unsigned char *p = data;
  while (len) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      sb_err(err, "write %s: %s", rel_path, strerror(e));
      return -e;
    }
    p += n;
    len -= (size_t)n;
  }
  fchmod(fd, mode & 0777);
  close(fd);
  own(ws, full);
  return 0;
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
  char dst[PATH_MAX];
  if (snprintf(dst, sizeof dst, "%s/%s", copy_ws->path, rel) >= (int)sizeof dst) {
    sb_err(copy_err, "path too long: %s", rel);
    return -1;
  }
  if (flag == FTW_D) {
    if (mkdir(dst, st->st_mode & 0777) < 0 && errno != EEXIST) {
      sb_err(copy_err, "mkdir %s: %s", dst, strerror(errno));
      return -1;
    }
    own(copy_ws, dst);
    return 0;
  }
  if (flag == FTW_SL) {
    char target[PATH_MAX];
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n < 0) return 0;
    target[n] = '\0';
    if (symlink(target, dst) < 0) {
      sb_err(copy_err, "symlink %s: %s", dst, strerror(errno));
      return -1;
    }
    own(copy_ws, dst);
    return 0;
  }
  if (flag != FTW_F || !S_ISREG(st->st_mode)) return 0; /* sockets, fifos, devices: skipped */
  int in = open(path, O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    sb_err(copy_err, "open %s: %s", path, strerror(errno));
    return -1;
  }
  int outfd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st->st_mode & 0777);
  if (outfd < 0) {
    sb_err(copy_err, "create %s: %s", dst, strerror(errno));
    close(in);
    return -1;
  }
  off_t left = st->st_size;
  while (left > 0) {
    ssize_t n = sendfile(outfd, in, NULL, (size_t)left); /* copy_file_range refuses cross-fs copies */
    if (n <= 0) {
      if (n < 0) sb_err(copy_err, "copy %s: %s", path, strerror(errno));
      else sb_err(copy_err, "copy %s: file shrank", path);
      close(in);
      close(outfd);
      return -1;
    }
    left -= n;
  }
  fchmod(outfd, st->st_mode & 0777);
  close(in);
  close(outfd);
  own(copy_ws, dst);
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

void sb_workspace_destroy(sb_workspace *ws) {
  if (!ws) return;
  if (ws->mounted) umount2(ws->path, MNT_DETACH);
  sb_rm_rf(ws->path);
  free(ws);
}
