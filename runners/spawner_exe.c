/* surgebox-spawner's file (spawner_main.c), found and vetted at a
 * runtime's start: every sandbox init is a copy of that process, root's
 * where the daemon is root, so it must be a regular executable file that
 * only root can change. It lies beneath our own binary's prefix:
 * <prefix>/lib/surgebox/surgebox-spawner for <prefix>/bin/surgeboxd,
 * installed or in the build tree (CMake puts it in build/lib/surgebox).
 * The prefix is trusted as our binary is (whoever may change it may
 * change the binary root chose to run); lib, lib/surgebox, the file and
 * any link on the way are walked by path_vet.c and must be root's and
 * writable by root only. Only a binary that itself lies in the build tree
 * (a test program in a subdirectory) falls back to the build tree's
 * (SURGEBOX_BUILD_TREE): an installed daemon without its spawner is an
 * error, never quietly the build's. No environment variable names it: the
 * daemon's environment is not a place to choose what root runs. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime_paths.h"

#ifndef SURGEBOX_BUILD_TREE
#define SURGEBOX_BUILD_TREE "/nonexistent"
#endif
#define SPAWNER_REL "lib/surgebox/surgebox-spawner" /* beneath the prefix, or the build tree */

/* path_vet.c's faults, as the refusal says them (after the file's path) */
static const char *const spawner_why[SB_PATH_N_FAULTS] = {
    [SB_PATH_NOT_ABSOLUTE] = "is not an absolute path",
    [SB_PATH_UNEXAMINABLE] = "cannot be examined",
    [SB_PATH_PROC] = "passes through /proc",
    [SB_PATH_FUSE] = "passes through a FUSE file system (its owner decides the owners it shows)",
    [SB_PATH_NOSUID] = "passes through a file system mounted nosuid",
    [SB_PATH_NOT_DIR] = "has a component that is not a directory",
    [SB_PATH_OPEN_DIR] = "is in a directory a user other than root may change",
    [SB_PATH_NOT_ROOTS] = "may be changed by a user other than root",
    [SB_PATH_NAME_MAX] = "has a component over NAME_MAX",
    [SB_PATH_UNRESOLVED] = "cannot be resolved",
    [SB_PATH_LINKS] = "has an unreadable link or too many links",
    [SB_PATH_TOO_LONG] = "is too long",
    [SB_PATH_NOT_REGULAR] = "is not a regular file",
    [SB_PATH_NOT_ENDING_DIR] = "is not a regular file",
};

/* Our own binary's prefix lies inside the build tree (tree: the build
 * tree, resolved). */
static bool in_build_tree(const char *prefix, char tree[PATH_MAX]) {
  char ours[PATH_MAX];
  if (!realpath(SURGEBOX_BUILD_TREE, tree) || !realpath(prefix, ours)) return false;
  size_t n = strlen(tree);
  return strncmp(ours, tree, n) == 0 && (ours[n] == '/' || ours[n] == '\0');
}

/* Where it lies (anchor: the directory the file lies beneath, as
 * SPAWNER_REL; path: the whole path): beneath our own prefix; else, for a
 * binary in the build tree, beneath the build tree. 0, or -errno where it
 * is not (path: where it was looked for). */
static int locate(char anchor[PATH_MAX], char path[PATH_MAX]) {
  if (!sbu_own_prefix(anchor, PATH_MAX)) {
    snprintf(path, PATH_MAX, "<prefix>/%s (our own binary's path cannot be read)", SPAWNER_REL);
    return -ENOENT;
  }
  if (snprintf(path, PATH_MAX, "%s/%s", anchor, SPAWNER_REL) >= PATH_MAX) return -ENAMETOOLONG;
  char tree[PATH_MAX];
  if (access(path, F_OK) == 0) return 0;
  int e = errno; /* (in_build_tree's realpath sets its own) */
  if (e != ENOENT || !in_build_tree(anchor, tree)) return -e;
  memcpy(anchor, tree, PATH_MAX);
  if (snprintf(path, PATH_MAX, "%s/%s", anchor, SPAWNER_REL) >= PATH_MAX) return -ENAMETOOLONG;
  return access(path, F_OK) == 0 ? 0 : -errno;
}

/* The vetted file opened for exec: SPAWNER_REL walked from anchor (our
 * binary's own prefix, trusted as that binary is: root chose to run it);
 * the walk's O_PATH descriptor names the inode vetted, and the path it
 * resolved to (no link, every directory beneath the anchor root's) is
 * opened and must be that inode. */
static int open_vetted(const char *anchor, const char *path, bool owners, const char **why) {
  char canon[PATH_MAX];
  int pfd = -1;
  /* unprivileged (no owners), it runs with no power the user lacks: the
   * path as it is (a rootless container's root may well be FUSE) */
  sb_path_fault f = SB_PATH_OK;
  if (owners) {
    f = sb_path_walk(anchor, SPAWNER_REL, owners, 0, canon, &pfd);
  } else {
    snprintf(canon, sizeof canon, "%s", path);
    if ((pfd = open(path, O_PATH | O_CLOEXEC)) < 0) f = SB_PATH_UNRESOLVED;
  }
  if (f) {
    *why = spawner_why[f];
    return -EPERM;
  }
  struct stat vetted, opened;
  int fd = open(canon, O_RDONLY | (owners ? O_NOFOLLOW : 0) | O_CLOEXEC);
  int e = errno;
  if (fstat(pfd, &vetted) < 0 || fd < 0 || fstat(fd, &opened) < 0 || vetted.st_dev != opened.st_dev ||
      vetted.st_ino != opened.st_ino) {
    *why = "changed while it was examined";
    e = fd < 0 ? e : EPERM;
  } else if (!S_ISREG(vetted.st_mode) || !(vetted.st_mode & S_IXUSR)) {
    *why = "is not an executable file";
    e = EPERM;
  } else {
    close(pfd);
    return fd;
  }
  close(pfd);
  if (fd >= 0) close(fd);
  return -e;
}

int sb_spawner_exe_open(bool owners, char err[SB_ERR_MAX]) {
  char anchor[PATH_MAX], path[PATH_MAX];
  int rc = locate(anchor, path);
  if (rc < 0) {
    sb_err(err, "spawner: %s cannot be opened (%s): build surgebox (cmake --build) or install it again", path,
           strerror(-rc));
    return rc;
  }
  const char *why = NULL;
  int fd = open_vetted(anchor, path, owners, &why);
  if (fd < 0)
    sb_err(err, "spawner: %s %s: refused (every sandbox starts as a copy of it); install surgebox again", path, why);
  return fd;
}
