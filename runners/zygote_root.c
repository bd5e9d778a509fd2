/* A warm zygote's read-only directories (issue 35, finding 6): /usr, /etc,
 * /lib* ... served by read-only overlays of the zygote's own, so that its
 * executable (a warm program's /proc/self/exe) and the libraries it maps are
 * the overlays' inodes, never the host's. Without them a warm program's
 * flock on /proc/self/exe locked the host's interpreter (the host and the
 * other slot blocked: a covert channel, a denial of service) and its
 * inotify watch saw the host's every read of it. A cold job's directories
 * are overlays too (mounts.c, ro_dir); these are private to one zygote,
 * shared by the consecutive jobs of its slot that it serves, as a prepared
 * root is by the slot's cold jobs.
 *
 * Two halves, so that what can fail with a reason fails before the
 * spawner answers (warm.c then runs the job cold, saying why) and the slow
 * part (the zygote's unshare(CLONE_NEWNS), 15-30 ms) stays off the
 * daemon's loop:
 *   the spawner, before the clone: each directory's overlay made detached
 *     (fsopen/fsmount: no mount namespace needed), and the interpreter
 *     checked to be a file of one of them (not beneath a mount under it,
 *     not outside them);
 *   the zygote, in its new mount namespace: the mounts beneath those
 *     directories cloned (open_tree), each overlay moved onto its directory,
 *     the clones moved back on top (as ro_dir binds them), then the exec.
 * The overlay's second lower layer (overlayfs wants two without an upper)
 * is the runtime's empty new-root directory, which stays empty in the
 * runtime's mount namespace (jobs mount their roots on it in their own);
 * overlayfs before 6.15 takes no detached layer. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

/* what = "OP PATH: error"; -e */
static int fail(char *what, size_t len, int e, const char *op, const char *path) {
  snprintf(what, len, "%s %s: %s", op, path, strerror(e));
  return -e;
}

static bool under(const char *path, const char *dir) {
  size_t n = strlen(dir);
  return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* A read-only overlay of dir over the empty directory, detached: its fd. */
static int overlay_of(const char *dir, const char *empty, char *what, size_t len) {
  char lower[2 * PATH_MAX + 2];
  if ((size_t)snprintf(lower, sizeof lower, "%s:%s", dir, empty) >= sizeof lower || strpbrk(lower, ",\\") ||
      strchr(dir, ':') || strchr(empty, ':')) {
    snprintf(what, len, "overlay of %s over %s: a path holding ',', ':' or '\\'", dir, empty);
    return -EINVAL;
  }
  int fs = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
  if (fs < 0) return fail(what, len, errno, "fsopen(\"overlay\") for", dir);
  int rc = 0;
  if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "source", "surgebox-zygote", 0) < 0 ||
      syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "lowerdir", lower, 0) < 0 ||
      syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    rc = fail(what, len, errno, "overlay of", dir);
  int mnt = rc ? -1
               : (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                              MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (!rc && mnt < 0) rc = fail(what, len, errno, "fsmount of the overlay of", dir);
  close(fs);
  return rc ? rc : mnt;
}

/* The interpreter a file of the overlay of the directory it lies in: not
 * outside them, not beneath a mount under one (bound as the host's), not
 * in a directory whose overlay the kernel refused. */
static int check_interpreter(const sb_zygote_root *zr, const char *argv0, const char *const *submounts, char *what,
                             size_t len) {
  char real[PATH_MAX];
  if (!realpath(argv0, real)) return fail(what, len, errno, "the interpreter", argv0);
  for (const char *const *m = submounts; m && *m; m++)
    if (under(real, *m)) {
      snprintf(what, len, "the interpreter %s lies beneath the mount %s, which the zygote's overlays do not serve",
               real, *m);
      return -EXDEV;
    }
  for (int i = 0; i < zr->n; i++) {
    if (!under(real, zr->dir[i])) continue;
    if (zr->ovl[i] < 0) {
      snprintf(what, len, "overlay of %s, which holds the interpreter %s: %s", zr->dir[i], real, strerror(zr->err[i]));
      return -zr->err[i];
    }
    struct stat st;
    int fd = openat(zr->ovl[i], real + strlen(zr->dir[i]) + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    int e = fd < 0 ? errno : (fstat(fd, &st) < 0 ? errno : (S_ISREG(st.st_mode) ? 0 : EINVAL));
    if (fd >= 0) close(fd);
    return e ? fail(what, len, e, "the zygote's overlay: the interpreter", real) : 0;
  }
  snprintf(what, len, "the interpreter %s lies outside the read-only directories (/usr, /etc, /lib*) the zygote serves "
           "from overlays of its own", real);
  return -EXDEV;
}

/* Where the kernel refuses a directory's overlay (no overlayfs; in a user
 * namespace, a directory with mounts beneath it that the kernel locked)
 * that directory stays as it is, as ro_dir binds it for a cold job; but the
 * interpreter's must be an overlay. */
int sb_zygote_root_make(sb_zygote_root *zr, const char *argv0, const char *empty, const char *const *submounts,
                        char *what, size_t len) {
  memset(zr, 0, sizeof *zr);
  for (const char *const *d = sb_host_binds; *d && zr->n < SB_ZYGOTE_ROOT_MAX; d++) {
    struct stat st;
    if (lstat(*d, &st) < 0 || !S_ISDIR(st.st_mode)) continue; /* absent, or a merged-/usr symlink into /usr */
    char ignored[256];
    int fd = overlay_of(*d, empty, ignored, sizeof ignored);
    zr->dir[zr->n] = *d;
    zr->ovl[zr->n] = fd < 0 ? -1 : fd;
    zr->err[zr->n++] = fd < 0 ? -fd : 0;
  }
  int rc = check_interpreter(zr, argv0, submounts, what, len);
  if (rc) sb_zygote_root_close(zr);
  return rc;
}

void sb_zygote_root_close(sb_zygote_root *zr) {
  for (int i = 0; i < zr->n; i++)
    if (zr->ovl[i] >= 0) close(zr->ovl[i]);
  zr->n = 0;
}

static bool served_by_overlay(const sb_zygote_root *zr, const char *path) {
  for (int d = 0; d < zr->n; d++)
    if (zr->ovl[d] >= 0 && under(path, zr->dir[d])) return true;
  return false;
}

int sb_zygote_root_enter(sb_zygote_root *zr, const char *const *submounts) {
  size_t n_sub = 0;
  for (const char *const *m = submounts; m && *m; m++) n_sub++;
  int *trees = n_sub ? malloc(n_sub * sizeof *trees) : NULL; /* the zygote: a plain copy of the spawner */
  if (n_sub && !trees) return -ENOMEM;
  int rc = 0;
  size_t k = 0;
  /* before the overlays hide them: each mount beneath a served directory */
  for (size_t i = 0; !rc && i < n_sub; i++) {
    if (!served_by_overlay(zr, submounts[i])) continue;
    int t = (int)syscall(SYS_open_tree, AT_FDCWD, submounts[i], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (t < 0) rc = -errno;
    else trees[k++] = t;
  }
  for (int d = 0; !rc && d < zr->n; d++)
    if (zr->ovl[d] >= 0 && syscall(SYS_move_mount, zr->ovl[d], "", AT_FDCWD, zr->dir[d], MOVE_MOUNT_F_EMPTY_PATH) < 0)
      rc = -errno;
  for (size_t i = 0, j = 0; i < n_sub && j < k; i++) {
    if (!served_by_overlay(zr, submounts[i])) continue;
    if (!rc && syscall(SYS_move_mount, trees[j], "", AT_FDCWD, submounts[i], MOVE_MOUNT_F_EMPTY_PATH) < 0) rc = -errno;
    close(trees[j++]);
  }
  free(trees);
  sb_zygote_root_close(zr);
  return rc;
}
