/* surgebox-spawner's file (spawner_main.c), found and vetted at a
 * runtime's start: every sandbox init is a copy of that process, root's
 * where the daemon is root, so it must be a regular executable file that
 * only root can change, in a directory only root can change. It lies
 * beside our own binary's tree: <prefix>/lib/surgebox/surgebox-spawner for
 * <prefix>/bin/surgeboxd, installed or in the build tree (CMake puts it in
 * build/lib/surgebox); else (a test binary elsewhere in the build tree)
 * the one CMake built (SURGEBOX_SPAWNER_BUILT). No environment variable
 * names it: the daemon's environment is not a place to choose what root
 * runs. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#ifndef SURGEBOX_SPAWNER_BUILT
#define SURGEBOX_SPAWNER_BUILT "/usr/lib/surgebox/surgebox-spawner"
#endif
#define SPAWNER_BESIDE "/lib/surgebox/surgebox-spawner"

/* Owners are checked where the runtime is root (owners): an unprivileged
 * one (uid 0 of a user namespace of its own, where root's files show as
 * the overflow uid) runs it with no power it does not have itself, as
 * interp_vet.c's walk. */
static bool owned_safely(const struct stat *st, bool owners) {
  return !owners || (st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH)));
}

/* <prefix>/lib/surgebox/surgebox-spawner for <prefix>/bin/NAME, or "". Our
 * binary: /proc/self/exe, else the absolute path we were executed by (a
 * chroot without /proc). */
static void beside_us(char out[PATH_MAX]) {
  char self[PATH_MAX];
  out[0] = '\0';
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
  } else {
    const char *fn = (const char *)getauxval(AT_EXECFN);
    if (!fn || fn[0] != '/') return;
    snprintf(self, sizeof self, "%s", fn);
  }
  char *slash = strrchr(self, '/'); /* <prefix>/bin/NAME: cut twice */
  if (slash) *slash = '\0';
  slash = strrchr(self, '/');
  if (!slash || (size_t)(slash - self) + sizeof SPAWNER_BESIDE > PATH_MAX) return;
  snprintf(out, PATH_MAX, "%.*s%s", (int)(slash - self), self, SPAWNER_BESIDE);
}

static const char *vet(int fd, const char *path, bool owners) {
  struct stat st, dst;
  char parent[PATH_MAX];
  snprintf(parent, sizeof parent, "%s", path);
  char *slash = strrchr(parent, '/');
  if (slash) *slash = '\0';
  if (fstat(fd, &st) < 0) return "cannot be examined";
  if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR)) return "is not an executable file";
  if (!owned_safely(&st, owners)) return "may be changed by a user other than root";
  if (stat(parent[0] ? parent : "/", &dst) < 0) return "is in a directory that cannot be examined";
  if (!owned_safely(&dst, owners)) return "is in a directory a user other than root may change";
  return NULL;
}

int sb_spawner_exe_open(bool owners, char err[SB_ERR_MAX]) {
  char path[PATH_MAX];
  beside_us(path);
  int fd = path[0] ? open(path, O_RDONLY | O_CLOEXEC) : -1;
  if (fd < 0) {
    snprintf(path, sizeof path, "%s", SURGEBOX_SPAWNER_BUILT);
    fd = open(path, O_RDONLY | O_CLOEXEC);
  }
  if (fd < 0) {
    int e = errno;
    sb_err(err, "spawner: %s cannot be opened (%s): build surgebox (cmake --build) or install it again", path,
           strerror(e));
    return -e;
  }
  const char *bad = vet(fd, path, owners);
  if (bad) {
    close(fd);
    sb_err(err, "spawner: %s %s: refused (every sandbox starts as a copy of it); install surgebox again", path, bad);
    return -EPERM;
  }
  return fd;
}
