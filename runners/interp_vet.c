/* The interpreter a warm zygote runs (warm.c), vetted before root execs it
 * outside any sandbox (issue 35, findings 1 and 2). realpath() is not a
 * vetting: it reads /proc/PID/root as "/" where the kernel's exec walks into
 * that process's root, and a venv's bin/python3 resolves to the system's
 * file while CPython's start-up still reads the venv's pyvenv.cfg and runs
 * its .pth files. So the path is walked here as the kernel will walk it,
 * one component at a time from "/" (openat O_PATH|O_NOFOLLOW):
 *  - every directory root's and writable by root only;
 *  - a symbolic link followed only from such a directory (only root can
 *    change or replace it), its target walked the same way;
 *  - no component on procfs (magic links, other processes' roots), FUSE
 *    (its owner decides the owners and modes it shows) or a nosuid mount
 *    (a user's removable media: its file system names the owners);
 *  - the file itself a regular file root's and writable by root only.
 * Why the spawner then execs the path as given (not the canonical path, nor
 * the vetted descriptor by execveat): CPython's start-up resolves argv[0]
 * itself (its prefix, pyvenv.cfg beside it), and argv[0] must be the path
 * the job gave (sys.executable as a cold start shows it), so the path as
 * given is what start-up reads whatever is exec'd: it is the thing to vet.
 * Walked here, each of its components, links and their targets is one only
 * root can change, so the kernel's walk at exec and CPython's at start-up
 * meet the file vetted here (a descriptor would also make the zygote's
 * /proc/self/exe the host's inode, which the slot's overlays replace).
 * Beside that, a pyvenv.cfg next to the path as given or as resolved, or
 * in their parents (where CPython looks for one), refuses warm. */
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

/* What is wrong with the object fd names (a directory when dir), or NULL. */
static const char dir_open[] = "the interpreter lies in a directory others may write";

static const char *vet_object(int fd, bool owners, bool dir) {
  struct statfs fs;
  struct stat st;
  if (fstatfs(fd, &fs) < 0 || fstat(fd, &st) < 0) return "the interpreter's path cannot be examined";
  if (fs.f_type == PROC_SUPER_MAGIC)
    return "the interpreter's path passes through /proc (magic links lead into other processes' roots)";
  if (fs.f_type == FUSE_SUPER_MAGIC) return "the interpreter's path passes through a FUSE file system";
  /* what a user may have mounted (udisks' removable media, nosuid, whose
   * file system says which uid owns its files) */
  if (owners && (fs.f_flags & ST_NOSUID)) return "the interpreter's path passes through a file system mounted nosuid";
  if (dir && !S_ISDIR(st.st_mode)) return "the interpreter's path has a component that is not a directory";
  if (!owners || root_only(&st)) return NULL;
  return dir ? dir_open : "the interpreter is not a file only root may write";
}

/* Replace *dir by fd. */
static void step_into(int *dir, int fd) {
  close(*dir);
  *dir = fd;
}

/* A directory others may write is not the end of the walk: the file's own
 * fault, when it has one, is the one said (its owner, its kind); a link
 * held by such a directory is never followed. */
static const char *open_root(int *dir, bool owners, const char **open_dir) {
  *dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (*dir < 0) return "the interpreter's path cannot be examined";
  const char *why = vet_object(*dir, owners, true);
  if (why == dir_open && !*open_dir) *open_dir = why, why = NULL;
  return why;
}

/* Walks path (absolute) as described above. want_dir: it must end on a
 * directory, whose descriptor is left in *dir_out; else on a regular file.
 * canon: the path with no link, no "." or ".." left. NULL or why not. */
static const char *walk(const char *path, bool owners, bool want_dir, char canon[PATH_MAX], int *dir_out) {
  char rest[2 * PATH_MAX], target[PATH_MAX];
  size_t clen = 0;
  int links = 0, dir = -1;
  const char *open_dir = NULL; /* a directory on the way others may write */
  canon[0] = 0;
  if (path[0] != '/' || snprintf(rest, sizeof rest, "%s", path) >= (int)sizeof rest)
    return "the interpreter's path is not absolute or too long";
  const char *why = open_root(&dir, owners, &open_dir);
  for (char *p = rest; !why;) {
    while (*p == '/') p++;
    if (!*p) break;
    char *end = strchrnul(p, '/');
    char name[NAME_MAX + 1];
    if ((size_t)(end - p) > NAME_MAX) {
      why = "the interpreter's path has a component over NAME_MAX";
      break;
    }
    memcpy(name, p, (size_t)(end - p));
    name[end - p] = 0;
    p = end;
    bool last = !*p;
    if (strcmp(name, ".") == 0) continue;
    int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
      why = "the interpreter cannot be resolved on the host";
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
        why = open_dir;
        break;
      }
      /* dir, which holds the link, passed vet_object: only root can change it */
      ssize_t n = readlinkat(fd, "", target, sizeof target);
      close(fd);
      if (n <= 0 || (size_t)n >= sizeof target || ++links > SB_VET_MAX_LINKS) {
        why = "the interpreter's path has an unreadable link or too many links";
        break;
      }
      target[n] = 0;
      char joined[2 * PATH_MAX];
      if (snprintf(joined, sizeof joined, "%s%s", target, p) >= (int)sizeof joined) { /* p: "" or "/..." */
        why = "the interpreter's path is too long";
        break;
      }
      memcpy(rest, joined, sizeof rest);
      p = rest;
      if (target[0] == '/') {
        close(dir);
        clen = 0;
        canon[0] = 0;
        why = open_root(&dir, owners, &open_dir);
      }
      continue;
    }
    bool is_dir = S_ISDIR(st.st_mode);
    if (!is_dir && (!last || want_dir)) {
      close(fd);
      why = "the interpreter's path has a component that is not a directory";
      break;
    }
    if (!is_dir && !S_ISREG(st.st_mode)) {
      close(fd);
      why = "the interpreter is not a regular file";
      break;
    }
    if ((why = vet_object(fd, owners, is_dir)) == dir_open && !open_dir) open_dir = why, why = NULL;
    if (why && why != open_dir) {
      close(fd);
      break;
    }
    why = NULL;
    if (strcmp(name, "..") != 0) {
      if (clen + 1 + strlen(name) >= PATH_MAX) {
        close(fd);
        why = "the interpreter's path is too long";
        break;
      }
      clen += (size_t)snprintf(canon + clen, PATH_MAX - clen, "/%s", name);
    }
    step_into(&dir, fd);
    if (!is_dir) break; /* the file: the walk is over */
  }
  if (!why && open_dir) why = open_dir;
  if (!why && !clen) snprintf(canon, PATH_MAX, "/");
  if (!why && want_dir) {
    struct stat st;
    if (fstat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) why = "the interpreter's path does not end on a directory";
  } else if (!why) {
    struct stat st;
    if (fstat(dir, &st) < 0 || !S_ISREG(st.st_mode)) why = "the interpreter is not a regular file";
  }
  if (why || !dir_out) {
    if (dir >= 0) close(dir);
  } else {
    *dir_out = dir;
  }
  return why;
}

/* The directory holding path, and that directory's own parent, textually
 * (as CPython's getpath takes them); ups: 1 or 2. */
static void dirname_up(const char *path, int ups, char out[PATH_MAX]) {
  snprintf(out, PATH_MAX, "%s", path);
  for (int i = 0; i < ups; i++) {
    char *slash = strrchr(out, '/');
    if (!slash) break;
    if (slash == out) {
      out[1] = 0;
      break;
    }
    *slash = 0;
  }
}

static const char *venv_marker_in(const char *dirpath, bool owners) {
  char canon[PATH_MAX];
  int dfd = -1;
  const char *why = walk(dirpath, owners, true, canon, &dfd);
  if (why) return why;
  struct stat st;
  int r = fstatat(dfd, "pyvenv.cfg", &st, AT_SYMLINK_NOFOLLOW);
  int e = errno;
  close(dfd);
  if (r == 0 || e != ENOENT)
    return "a pyvenv.cfg beside the interpreter or in its parent directory (a virtual environment: CPython's "
           "start-up would take its site-packages)";
  return NULL;
}

const char *sb_interp_vet(const char *argv0, bool owners, char canon[PATH_MAX]) {
  if (strncmp(argv0, "/proc/", 6) == 0 || strcmp(argv0, "/proc") == 0)
    return "the interpreter's path passes through /proc (magic links lead into other processes' roots)";
  /* "." and ".." and "//" would make CPython's textual dirnames and the
   * kernel's walk disagree about where pyvenv.cfg is looked for */
  if (strstr(argv0, "/./") || strstr(argv0, "/../") || strstr(argv0, "//") ||
      (strlen(argv0) >= 2 && strcmp(argv0 + strlen(argv0) - 2, "/.") == 0) ||
      (strlen(argv0) >= 3 && strcmp(argv0 + strlen(argv0) - 3, "/..") == 0))
    return "the interpreter's path has \".\", \"..\" or empty components";
  const char *why = walk(argv0, owners, false, canon, NULL);
  if (why) return why;
  char d[PATH_MAX];
  const char *paths[] = {argv0, canon};
  for (int i = 0; i < 2; i++)
    for (int ups = 1; ups <= 2; ups++) {
      dirname_up(paths[i], ups, d);
      if ((why = venv_marker_in(d, owners))) return why;
    }
  return NULL;
}
