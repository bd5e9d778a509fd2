/* sb_interp_vet (interp_vet.c, issue 35): the walk of a warm interpreter's
 * path on trees made here, in a tmpfs of this test's own mount namespace
 * (ctest runs it under unshare --mount): links followed only from root's
 * directories, a target walked the same way, no /proc, no nosuid mount,
 * pyvenv.cfg beside the path as given and as resolved and in their parents,
 * the file's own faults, loops; and path_vet.c's walk as the spawner takes
 * it (spawner_exe.c): from an anchor trusted as it is (another user's,
 * open to all), everything beneath it, links' targets and ".." above it
 * vetted. Needs root (files of root's and another uid's); else SKIPPED. */
#include "check.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static char top[64];

static const char *at(const char *rel) {
  static char buf[8][PATH_MAX];
  static int n;
  char *b = buf[n++ % 8];
  snprintf(b, PATH_MAX, "%s/%s", top, rel);
  return b;
}

static void dir(const char *rel, uid_t owner, mode_t mode) {
  CHECK(mkdir(at(rel), mode) == 0);
  CHECK(chown(at(rel), owner, owner) == 0);
  CHECK(chmod(at(rel), mode) == 0);
}

static void file(const char *rel, uid_t owner, mode_t mode) {
  int fd = open(at(rel), O_WRONLY | O_CREAT | O_EXCL, mode);
  CHECK(fd >= 0);
  close(fd);
  CHECK(chown(at(rel), owner, owner) == 0);
  CHECK(chmod(at(rel), mode) == 0);
}

static void link_(const char *rel, const char *target, uid_t owner) {
  CHECK(symlink(target, at(rel)) == 0);
  CHECK(lchown(at(rel), owner, owner) == 0);
}

/* NULL when sb_interp_vet found path fit, else its reason; canon out. */
static const char *vet(const char *path, bool owners, char canon[PATH_MAX]) {
  return sb_interp_vet(path, owners, canon);
}

static void refused(const char *path, bool owners, const char *want) {
  char canon[PATH_MAX];
  const char *why = vet(path, owners, canon);
  CHECK(why != NULL && strstr(why, want) != NULL);
  if (!why || !strstr(why, want)) fprintf(stderr, "  %s: %s (want: %s)\n", path, why ? why : "fit", want);
}

/* sb_path_walk's fault for path (from anchor, when not NULL) with flags
 * (owners), canon checked when OK */
static void walks(const char *anchor, const char *path, unsigned flags, sb_path_fault want, const char *canon_want) {
  char canon[PATH_MAX];
  int fd = -1;
  sb_path_fault got = sb_path_walk(anchor, path, true, flags, canon, &fd);
  CHECK(got == want);
  if (got != want) fprintf(stderr, "  %s (flags %u): fault %d, want %d\n", path, flags, (int)got, (int)want);
  if (got == SB_PATH_OK && want == SB_PATH_OK) {
    CHECK_STR(canon, canon_want);
    struct stat a, b;
    CHECK(fstat(fd, &a) == 0 && stat(canon_want, &b) == 0 && a.st_ino == b.st_ino);
  }
  if (fd >= 0) close(fd);
}

static void fit(const char *path, bool owners, const char *canon_want) {
  char canon[PATH_MAX];
  const char *why = vet(path, owners, canon);
  CHECK(why == NULL);
  if (why) fprintf(stderr, "  %s: %s\n", path, why);
  else CHECK_STR(canon, canon_want);
}

int main(void) {
  if (geteuid() != 0) {
    printf("SKIPPED: not root (the trees need files of root's and another uid's)\n");
    return 77;
  }
  snprintf(top, sizeof top, "/run/sbtest-vet-XXXXXX");
  if (!mkdtemp(top) || unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
      mount("sbtest-vet", top, "tmpfs", 0, "mode=0755") < 0) {
    printf("SKIPPED: no tmpfs of our own (%s)\n", strerror(errno));
    return 77;
  }
  const uid_t other = 4242;
  dir("ok", 0, 0755);
  dir("ok/bin", 0, 0755);
  file("ok/bin/python3.11", 0, 0755);
  link_("ok/bin/python3", "python3.11", 0);
  link_("ok/bin/up", "../bin/./python3", 0);
  link_("ok/abs", at("ok/bin/python3"), 0);
  file("ok/bin/grp", 0, 0775);
  file("ok/bin/theirs", other, 0755);
  dir("ok/bin/adir", 0, 0755);
  link_("ok/bin/loop", "loop", 0);
  dir("user", other, 0755);
  file("user/python3", 0, 0755);
  link_("user/python3-link", at("ok/bin/python3.11"), other);
  link_("ok/bin/into-user", at("user/python3"), 0);
  dir("open", 0, 01777);
  file("open/python3", 0, 0755);
  /* an anchor of another user's, open to all: trusted as it is */
  dir("anchor", other, 0777);
  dir("anchor/lib", 0, 0755);
  file("anchor/lib/x", 0, 0755);
  file("anchor/lib/grp", 0, 0775);
  dir("anchor/open", 0, 0777);
  file("anchor/open/x", 0, 0755);
  link_("anchor/lib/up", "../open/x", 0);
  link_("anchor/lib/abs", at("open/python3"), 0);
  link_("anchor/lib/fine", at("ok/bin/python3.11"), 0);
  /* venvs: pyvenv.cfg beside the given path, in its parent, beside the resolved one */
  dir("ok/venv", 0, 0755);
  dir("ok/venv/bin", 0, 0755);
  link_("ok/venv/bin/python3", at("ok/bin/python3.11"), 0);
  file("ok/venv/pyvenv.cfg", 0, 0644);
  dir("ok/venv2", 0, 0755);
  dir("ok/venv2/bin", 0, 0755);
  link_("ok/venv2/bin/python3", at("ok/bin/python3.11"), 0);
  file("ok/venv2/bin/pyvenv.cfg", 0, 0644);
  dir("ok/rv", 0, 0755);
  dir("ok/rv/bin", 0, 0755);
  file("ok/rv/bin/python3", 0, 0755);
  file("ok/rv/pyvenv.cfg", 0, 0644);
  link_("ok/bin/to-rv", at("ok/rv/bin/python3"), 0);
  link_("ok/bin/to-proc", "/proc/self/root/usr", 0);
  dir("ok/ns", 0, 0755);
  CHECK(mount("sbtest-vet-nosuid", at("ok/ns"), "tmpfs", MS_NOSUID, "mode=0755") == 0);
  file("ok/ns/python3", 0, 0755);

  /* fit: links from root's directories, relative, with "..", absolute */
  fit(at("ok/bin/python3.11"), true, at("ok/bin/python3.11"));
  fit(at("ok/bin/python3"), true, at("ok/bin/python3.11"));
  fit(at("ok/bin/up"), true, at("ok/bin/python3.11"));
  fit(at("ok/abs"), true, at("ok/bin/python3.11"));
  /* the file's own faults */
  refused(at("ok/bin/grp"), true, "not a file only root may write");
  refused(at("ok/bin/theirs"), true, "not a file only root may write");
  refused(at("ok/bin/adir"), true, "not a regular file");
  refused(at("ok/bin/none"), true, "cannot be resolved");
  refused(at("ok/bin/loop"), true, "too many links");
  refused(at("ok/bin/python3.11/x"), true, "not a directory");
  /* directories others may write, links held by them or leading into them */
  refused(at("user/python3"), true, "a directory others may write");
  refused(at("user/python3-link"), true, "a directory others may write");
  refused(at("ok/bin/into-user"), true, "a directory others may write");
  refused(at("open/python3"), true, "a directory others may write");
  /* venvs */
  refused(at("ok/venv/bin/python3"), true, "pyvenv.cfg");
  refused(at("ok/venv2/bin/python3"), true, "pyvenv.cfg");
  refused(at("ok/bin/to-rv"), true, "pyvenv.cfg");
  refused(at("ok/rv/bin/python3"), true, "pyvenv.cfg");
  /* /proc, by its name or through a link; a nosuid mount */
  refused("/proc/self/root/usr/bin/python3", true, "/proc");
  refused("/proc/1/root/usr/bin/python3", false, "/proc");
  refused(at("ok/bin/to-proc/bin/python3"), true, "/proc");
  refused(at("ok/ns/python3"), true, "nosuid");
  /* components that would make CPython's textual dirnames differ */
  refused(at("ok/./bin/python3"), true, "components");
  refused(at("ok/bin/../bin/python3"), true, "components");
  refused(at("ok//bin/python3"), true, "components");
  refused("bin/python3", true, "not absolute");
  /* without owner checks (user-namespace mode): owners no longer matter,
   * a venv and /proc still do */
  fit(at("user/python3-link"), false, at("ok/bin/python3.11"));
  fit(at("ok/bin/theirs"), false, at("ok/bin/theirs"));
  refused(at("ok/venv/bin/python3"), false, "pyvenv.cfg");
  refused(at("ok/bin/to-proc/bin/python3"), false, "/proc");

  /* path_vet.c as the spawner walks it: from an anchor not vetted itself,
   * beneath it everything vetted; nosuid refused only when asked */
  walks(at("anchor"), "lib/x", 0, SB_PATH_OK, at("anchor/lib/x"));
  walks(NULL, at("anchor/lib/x"), 0, SB_PATH_OPEN_DIR, NULL);
  walks(at("anchor"), "lib/grp", 0, SB_PATH_NOT_ROOTS, NULL);
  walks(at("anchor"), "open/x", 0, SB_PATH_OPEN_DIR, NULL);
  walks(at("anchor"), "lib/up", 0, SB_PATH_OPEN_DIR, NULL);   /* ".." into an open directory */
  walks(at("anchor"), "lib/abs", 0, SB_PATH_OPEN_DIR, NULL);  /* an absolute target: walked from "/" */
  walks(at("anchor"), "lib/fine", 0, SB_PATH_OK, at("ok/bin/python3.11"));
  walks(at("anchor"), at("anchor/lib/x"), 0, SB_PATH_NOT_ABSOLUTE, NULL); /* an anchor takes a relative path */
  walks(NULL, at("ok/ns/python3"), 0, SB_PATH_OK, at("ok/ns/python3"));
  walks(NULL, at("ok/ns/python3"), SB_PATH_NO_NOSUID, SB_PATH_NOSUID, NULL);
  walks(NULL, at("ok/bin"), SB_PATH_WANT_DIR, SB_PATH_OK, at("ok/bin"));
  walks(NULL, at("ok/bin/python3"), SB_PATH_WANT_DIR, SB_PATH_NOT_DIR, NULL);

  umount2(at("ok/ns"), MNT_DETACH);
  umount2(top, MNT_DETACH);
  rmdir(top);
  return check_exit();
}
