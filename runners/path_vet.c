/* A path root is about to execute, walked as the kernel will walk it, one
 * component at a time from "/" (openat O_PATH|O_NOFOLLOW): the shared walk
 * of interp_vet.c (a warm zygote's interpreter) and spawner_exe.c
 * (surgebox-spawner). realpath() is not a vetting: it reads
 * /proc/PID/root as "/" where the kernel's exec walks into that process's
 * root. The rules (owners: where the runtime is root):
 *  - every directory root's and writable by root only;
 *  - a symbolic link followed only from such a directory (only root can
 *    change or replace it), its target walked the same way;
 *  - no component on procfs (magic links, other processes' roots) or FUSE
 *    (its owner decides the owners and modes it shows); with
 *    SB_PATH_NO_NOSUID none on a nosuid mount either (a user's removable
 *    media: its file system names the owners);
 *  - the end a directory (SB_PATH_WANT_DIR) or a regular file root's and
 *    writable by root only.
 * Given an anchor, a relative path is walked from that directory, which is
 * trusted as it is (surgebox-spawner's: the prefix our own binary lies
 * in, as open to change as that binary); what lies beneath it, links'
 * targets and ".." above it are vetted as above. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif
#define SB_VET_MAX_LINKS 40 /* the kernel's own bound on links in one walk */

static bool root_only(const struct stat *st) {
  return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* What is wrong with the object fd names (a directory when dir). */
static sb_path_fault vet_object(int fd, bool owners, unsigned flags, bool dir) {
  struct statfs fs;
  struct stat st;
  if (fstatfs(fd, &fs) < 0 || fstat(fd, &st) < 0) return SB_PATH_UNEXAMINABLE;
  if (fs.f_type == PROC_SUPER_MAGIC) return SB_PATH_PROC;
  if (fs.f_type == FUSE_SUPER_MAGIC) return SB_PATH_FUSE;
  if (owners && (flags & SB_PATH_NO_NOSUID) && (fs.f_flags & ST_NOSUID)) return SB_PATH_NOSUID;
  if (dir && !S_ISDIR(st.st_mode)) return SB_PATH_NOT_DIR;
  if (!owners || root_only(&st)) return SB_PATH_OK;
  return dir ? SB_PATH_OPEN_DIR : SB_PATH_NOT_ROOTS;
}

/* A directory others may write is not the end of the walk: the file's own
 * fault, when it has one, is the one said (its owner, its kind); a link
 * held by such a directory is never followed. */
static sb_path_fault open_root(int *dir, bool owners, unsigned flags, bool *open_dir) {
  *dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (*dir < 0) return SB_PATH_UNEXAMINABLE;
  sb_path_fault why = vet_object(*dir, owners, flags, true);
  if (why == SB_PATH_OPEN_DIR) *open_dir = true, why = SB_PATH_OK;
  return why;
}

/* One component of rest (from *p) into name; false when over NAME_MAX. */
static bool next_name(char **p, char name[NAME_MAX + 1]) {
  char *end = strchrnul(*p, '/');
  if ((size_t)(end - *p) > NAME_MAX) return false;
  memcpy(name, *p, (size_t)(end - *p));
  name[end - *p] = 0;
  *p = end;
  return true;
}

sb_path_fault sb_path_walk(const char *anchor, const char *path, bool owners, unsigned flags, char canon[PATH_MAX],
                           int *fd_out) {
  char rest[2 * PATH_MAX], target[PATH_MAX];
  size_t clen = 0;
  int links = 0, dir = -1;
  bool want_dir = flags & SB_PATH_WANT_DIR, open_dir = false; /* a directory on the way others may write */
  canon[0] = 0;
  if ((anchor ? anchor[0] != '/' || path[0] == '/' : path[0] != '/') ||
      snprintf(rest, sizeof rest, "%s", path) >= (int)sizeof rest)
    return SB_PATH_NOT_ABSOLUTE;
  sb_path_fault why = SB_PATH_OK;
  if (anchor) { /* trusted as it is: not vetted */
    if ((clen = (size_t)snprintf(canon, PATH_MAX, "%s", anchor)) >= PATH_MAX) return SB_PATH_TOO_LONG;
    while (clen > 0 && canon[clen - 1] == '/') canon[--clen] = 0;
    if ((dir = open(anchor, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) return SB_PATH_UNRESOLVED;
  } else {
    why = open_root(&dir, owners, flags, &open_dir);
  }
  for (char *p = rest; !why;) {
    while (*p == '/') p++;
    if (!*p) break;
    char name[NAME_MAX + 1];
    if (!next_name(&p, name)) {
      why = SB_PATH_NAME_MAX;
      break;
    }
    bool last = !*p;
    if (strcmp(name, ".") == 0) continue;
    int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
      why = SB_PATH_UNRESOLVED;
      if (fd >= 0) close(fd);
      break;
    }
    if (strcmp(name, "..") == 0) { /* the parent, physically, as the kernel's walk */
      char *slash = strrchr(canon, '/');
      clen = slash ? (size_t)(slash - canon) : 0;
      canon[clen] = 0;
    }
    if (S_ISLNK(st.st_mode)) {
      if (open_dir) { /* held by a directory others may write: never followed */
        close(fd);
        why = SB_PATH_OPEN_DIR;
        break;
      }
      /* dir, which holds the link, passed vet_object: only root can change it */
      ssize_t n = readlinkat(fd, "", target, sizeof target);
      close(fd);
      if (n <= 0 || (size_t)n >= sizeof target || ++links > SB_VET_MAX_LINKS) {
        why = SB_PATH_LINKS;
        break;
      }
      target[n] = 0;
      char joined[2 * PATH_MAX];
      if (snprintf(joined, sizeof joined, "%s%s", target, p) >= (int)sizeof joined) { /* p: "" or "/..." */
        why = SB_PATH_TOO_LONG;
        break;
      }
      memcpy(rest, joined, sizeof rest);
      p = rest;
      if (target[0] == '/') {
        close(dir);
        clen = 0;
        canon[0] = 0;
        why = open_root(&dir, owners, flags, &open_dir);
      }
      continue;
    }
    bool is_dir = S_ISDIR(st.st_mode);
    if (!is_dir && (!last || want_dir)) {
      close(fd);
      why = SB_PATH_NOT_DIR;
      break;
    }
    if (!is_dir && !S_ISREG(st.st_mode)) {
      close(fd);
      why = SB_PATH_NOT_REGULAR;
      break;
    }
    why = vet_object(fd, owners, flags, is_dir);
    if (why == SB_PATH_OPEN_DIR) open_dir = true, why = SB_PATH_OK;
    if (why) {
      close(fd);
      break;
    }
    if (strcmp(name, "..") != 0) {
      if (clen + 1 + strlen(name) >= PATH_MAX) {
        close(fd);
        why = SB_PATH_TOO_LONG;
        break;
      }
      clen += (size_t)snprintf(canon + clen, PATH_MAX - clen, "/%s", name);
    }
    close(dir);
    dir = fd;
    if (!is_dir) break; /* the file: the walk is over */
  }
  if (!why && open_dir) why = SB_PATH_OPEN_DIR;
  if (!why && !clen) snprintf(canon, PATH_MAX, "/");
  struct stat st;
  if (!why && (fstat(dir, &st) < 0 || (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))))
    why = want_dir ? SB_PATH_NOT_ENDING_DIR : SB_PATH_NOT_REGULAR;
  if (why || !fd_out) {
    if (dir >= 0) close(dir);
  } else {
    *fd_out = dir;
  }
  return why;
}
