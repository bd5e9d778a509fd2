/* The interpreter a warm zygote runs (warm.c), vetted before root execs it
 * outside any sandbox (issue 35, findings 1 and 2). realpath() is not a
 * vetting: it reads /proc/PID/root as "/" where the kernel's exec walks into
 * that process's root, and a venv's bin/python3 resolves to the system's
 * file while CPython's start-up still reads the venv's pyvenv.cfg and runs
 * its .pth files. So the path is walked as the kernel will walk it
 * (path_vet.c: root's directories, links and regular file; no /proc, no
 * FUSE, and here no nosuid mount either: a user's removable media, whose
 * file system names the owners).
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
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* path_vet.c's faults, as a zygote's refusal says them */
static const char *const interp_why[SB_PATH_N_FAULTS] = {
    [SB_PATH_NOT_ABSOLUTE] = "the interpreter's path is not absolute or too long",
    [SB_PATH_UNEXAMINABLE] = "the interpreter's path cannot be examined",
    [SB_PATH_PROC] = "the interpreter's path passes through /proc (magic links lead into other processes' roots)",
    [SB_PATH_FUSE] = "the interpreter's path passes through a FUSE file system",
    [SB_PATH_NOSUID] = "the interpreter's path passes through a file system mounted nosuid",
    [SB_PATH_NOT_DIR] = "the interpreter's path has a component that is not a directory",
    [SB_PATH_OPEN_DIR] = "the interpreter lies in a directory others may write",
    [SB_PATH_NOT_ROOTS] = "the interpreter is not a file only root may write",
    [SB_PATH_NAME_MAX] = "the interpreter's path has a component over NAME_MAX",
    [SB_PATH_UNRESOLVED] = "the interpreter cannot be resolved on the host",
    [SB_PATH_LINKS] = "the interpreter's path has an unreadable link or too many links",
    [SB_PATH_TOO_LONG] = "the interpreter's path is too long",
    [SB_PATH_NOT_REGULAR] = "the interpreter is not a regular file",
    [SB_PATH_NOT_ENDING_DIR] = "the interpreter's path does not end on a directory",
};

/* path_vet.c's walk, nosuid mounts refused too */
static const char *walk(const char *path, bool owners, bool want_dir, char canon[PATH_MAX], int *dir_out) {
  unsigned flags = SB_PATH_NO_NOSUID | (want_dir ? SB_PATH_WANT_DIR : 0);
  return interp_why[sb_path_walk(NULL, path, owners, flags, canon, dir_out)];
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
