/* Profiles without network: the rootfs listing and hash on a tiny fake
 * rootfs (expected values computed with coreutils' sha256sum, written here by
 * hand), sealing, opening, quick and full verification (a modified, added,
 * re-moded or touched file), manifest checks, names, the default directory,
 * the host profile, and the surge-2025 definition's toolchain files. */
#include "check.h"
#include "profile.h"
#include "profile_internal.h"
#include "toolchain.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char base[64];

static void put_file(const char *rel, const char *text, mode_t mode) {
  char p[512];
  snprintf(p, sizeof p, "%s/fake/rootfs/%s", base, rel);
  FILE *f = fopen(p, "w");
  if (!f) {
    perror(p);
    exit(2);
  }
  fputs(text, f);
  fclose(f);
  chmod(p, mode);
}

static void mk(const char *rel, mode_t mode) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", base, rel);
  mkdir(p, mode);
  chmod(p, mode);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  static char buf[65536];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

#define E0 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
static const char expected_listing[] =
    E0 " 040700 0 empty\n" E0 " 040755 0 etc\n"
       "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03 100644 6 etc/hello.txt\n" E0
       " 040755 0 usr\n" E0 " 040755 0 usr/bin\n"
       "7c9bbe5ec9b3fb774e8fa0f54247e93c34ddf8e5d16fe3073420de0ae81a262d 120777 4 usr/bin/link\n"
       "299001868fb8c02fd431c336c6d058f5558c5dff5b5af5e6fe04b870a6a9cbba 100755 18 usr/bin/tool\n"
       "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 100600 1 we\\nird\n";
/* sha256sum of the listing above */
static const char expected_hash[] = "sha256:440cd63c65952d789a06a7bed768ab7e368809976e5ffbf562907c18efdd6939";

static void write_manifest(const char *text) {
  char p[512];
  snprintf(p, sizeof p, "%s/fake/manifest.json", base);
  FILE *f = fopen(p, "w");
  fputs(text, f);
  fclose(f);
}

static int open_err(char *err, size_t n) {
  sbf_profile p;
  int rc = sbf_profile_open_mode(base, "fake", SBF_VERIFY_NONE, &p, err, n);
  if (rc == 0) sbf_profile_close(&p);
  return rc;
}

/* The mirror debootstrap gets by default: apt's own first non-security
 * source, deb822 before the one-line format (toolchains/apt_mirror.c). */
static void write_at(const char *dir, const char *name, const char *text) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  fputs(text, f);
  fclose(f);
}

static void test_apt_mirror(void) {
  char apt[] = "/tmp/sbf-apt-XXXXXX", d[512], out[256];
  if (!mkdtemp(apt)) return;
  snprintf(d, sizeof d, "%s/sources.list.d", apt);
  mkdir(d, 0755);
  CHECK(!sbf_apt_mirror(apt, out, sizeof out)); /* nothing configured */
  write_at(apt, "sources.list", "# comment\ndeb-src http://src.example.org/debian bookworm main\n"
                                "deb [arch=amd64 signed-by=/k.gpg] http://one.example.org/debian bookworm main\n");
  CHECK(sbf_apt_mirror(apt, out, sizeof out));
  CHECK_STR(out, "http://one.example.org/debian");
  write_at(d, "debian.sources", "Types: deb\nURIs: http://sec.example.org/debian-security\nSuites: bookworm-security\n\n"
                                "Types: deb\nURIs: http://two.example.org/debian\nSuites: bookworm\n");
  CHECK(sbf_apt_mirror(apt, out, sizeof out));
  CHECK_STR(out, "http://two.example.org/debian");
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf %s", apt);
  if (system(cmd) != 0) {
  }
}

int main(void) {
  umask(022);
  test_apt_mirror();
  snprintf(base, sizeof base, "/tmp/sbf-unit-XXXXXX");
  if (!mkdtemp(base)) return perror("mkdtemp"), 2;
  mk("fake", 0755);
  mk("fake/rootfs", 0755);
  mk("fake/rootfs/empty", 0700);
  mk("fake/rootfs/etc", 0755);
  mk("fake/rootfs/usr", 0755);
  mk("fake/rootfs/usr/bin", 0755);
  put_file("etc/hello.txt", "hello\n", 0644);
  put_file("usr/bin/tool", "#!/bin/sh\necho hi\n", 0755);
  put_file("we\nird", "x", 0600);
  char p[512], root[512], listing[512], err[SBF_ERR_MAX];
  snprintf(root, sizeof root, "%s/fake/rootfs", base);
  snprintf(p, sizeof p, "%s/usr/bin/link", root);
  CHECK(symlink("tool", p) == 0);

  /* the listing and its hash */
  sbf_tree_hash h;
  snprintf(listing, sizeof listing, "%s/listing", base);
  CHECK(sbf_hash_tree(root, true, listing, &h, err, sizeof err) == 0);
  CHECK_STR(slurp(listing), expected_listing);
  CHECK_STR(h.content_hash, expected_hash);
  CHECK(h.files == 8);
  CHECK(h.size_bytes == 29);
  CHECK(strncmp(h.quick_hash, "sha256:", 7) == 0 && strlen(h.quick_hash) == 71);
  sbf_tree_hash q;
  CHECK(sbf_hash_tree(root, false, NULL, &q, err, sizeof err) == 0);
  CHECK_STR(q.content_hash, "");
  CHECK_STR(q.quick_hash, h.quick_hash);

  /* seal and open */
  json_object *origin = json_tokener_parse(
      "{\"suite\":\"bullseye\",\"mirror\":\"http://mirror.example.org/debian\",\"variant\":\"minbase\","
      "\"packages\":[\"make\"]}");
  json_object *versions = json_tokener_parse("{\"make\":\"4.3-4.1\",\"libc6\":\"2.31-13+deb11u11\"}");
  json_object *extra = json_tokener_parse("{\"notes\":[\"unit test\"],\"name\":\"ignored\"}");
  CHECK(sbf_profile_seal(base, "fake", origin, versions, extra, &h, err, sizeof err) == 0);
  CHECK_STR(h.content_hash, expected_hash);
  snprintf(p, sizeof p, "%s/fake/rootfs.sha256", base);
  CHECK_STR(slurp(p), expected_listing);
  sbf_profile prof;
  int rc = sbf_profile_open(base, "fake", &prof, err, sizeof err);
  CHECK(rc == 0);
  if (rc) fprintf(stderr, "open: %s\n", err);
  if (rc == 0) {
    CHECK_STR(prof.name, "fake");
    CHECK(!prof.is_host);
    CHECK_STR(sbf_profile_root(&prof), root);
    CHECK_STR(prof.content_hash, expected_hash);
    CHECK(prof.files == 8 && prof.size_bytes == 29);
    CHECK(prof.created && strlen(prof.created) == 20 && prof.created[10] == 'T' && prof.created[19] == 'Z');
    json_object *v;
    CHECK(json_object_object_get_ex(prof.manifest, "package_versions", &v) &&
          strcmp(json_object_get_string(json_object_object_get(v, "libc6")), "2.31-13+deb11u11") == 0);
    CHECK(json_object_object_get_ex(prof.manifest, "origin", &v) &&
          strcmp(json_object_get_string(json_object_object_get(v, "suite")), "bullseye") == 0);
    CHECK(json_object_object_get_ex(prof.manifest, "notes", &v));
    CHECK_STR(json_object_get_string(json_object_object_get(prof.manifest, "name")), "fake");
    char tdir[512], want[512];
    CHECK(sbf_profile_toolchains_dir(&prof, tdir, sizeof tdir) == 0);
    snprintf(want, sizeof want, "%s/fake/toolchains", base);
    CHECK_STR(tdir, want);
    CHECK(sbf_profile_toolchains_dir(&prof, tdir, 8) == -ENAMETOOLONG);
    CHECK(sbf_profile_verify(&prof, SBF_VERIFY_FULL, err, sizeof err) == 0);

    /* same size, same mtime, other content: only the full check sees it */
    char hello[512];
    snprintf(hello, sizeof hello, "%s/etc/hello.txt", root);
    struct stat st;
    stat(hello, &st);
    put_file("etc/hello.txt", "jello\n", 0644);
    struct timespec ts[2] = {st.st_atim, st.st_mtim};
    utimensat(AT_FDCWD, hello, ts, 0);
    CHECK(sbf_profile_verify(&prof, SBF_VERIFY_QUICK, err, sizeof err) == 0);
    err[0] = '\0';
    CHECK(sbf_profile_verify(&prof, SBF_VERIFY_FULL, err, sizeof err) == -EBADMSG);
    CHECK(strstr(err, "changed /etc/hello.txt") != NULL);
    if (!strstr(err, "changed /etc/hello.txt")) fprintf(stderr, "err: %s\n", err);
    /* restored: both pass again */
    put_file("etc/hello.txt", "hello\n", 0644);
    utimensat(AT_FDCWD, hello, ts, 0);
    CHECK(sbf_profile_verify(&prof, SBF_VERIFY_FULL, err, sizeof err) == 0);
    CHECK(sbf_profile_verify(&prof, SBF_VERIFY_QUICK, err, sizeof err) == 0);
    /* touched: the quick check sees it (the content did not change) */
    struct timespec later[2] = {st.st_atim, {st.st_mtim.tv_sec + 5, 0}};
    utimensat(AT_FDCWD, hello, later, 0);
    CHECK(sbf_profile_verify(&prof, SBF_VERIFY_QUICK, err, sizeof err) == -EBADMSG);
    CHECK(strstr(err, "changed since it was sealed") != NULL);
    CHECK(sbf_profile_verify(&prof, SBF_VERIFY_FULL, err, sizeof err) == 0);
    /* the content verifies, so the quick hash may be refreshed */
    CHECK(sbf_profile_refresh_quick(&prof, err, sizeof err) == 0);
    CHECK(sbf_profile_verify(&prof, SBF_VERIFY_QUICK, err, sizeof err) == 0);
    sbf_profile reread;
    CHECK(sbf_profile_open(base, "fake", &reread, err, sizeof err) == 0);
    sbf_profile_close(&reread);
    utimensat(AT_FDCWD, hello, ts, 0);
    CHECK(sbf_profile_verify(&prof, SBF_VERIFY_QUICK, err, sizeof err) == -EBADMSG);
    CHECK(sbf_profile_refresh_quick(&prof, err, sizeof err) == 0);
    /* a file added, a mode changed, a file removed */
    put_file("usr/bin/extra", "", 0644);
    CHECK(sbf_profile_verify(&prof, SBF_VERIFY_FULL, err, sizeof err) == -EBADMSG);
    CHECK(sbf_profile_refresh_quick(&prof, err, sizeof err) == -EBADMSG); /* not with other content */
    CHECK(strstr(err, "added /usr/bin/extra") != NULL);
    snprintf(p, sizeof p, "%s/usr/bin/extra", root);
    unlink(p);
    snprintf(p, sizeof p, "%s/usr/bin/tool", root);
    chmod(p, 04755);
    CHECK(sbf_profile_verify(&prof, SBF_VERIFY_FULL, err, sizeof err) == -EBADMSG);
    CHECK(strstr(err, "changed /usr/bin/tool") != NULL);
    chmod(p, 0755);
    snprintf(p, sizeof p, "%s/usr/bin/link", root);
    unlink(p);
    CHECK(sbf_profile_verify(&prof, SBF_VERIFY_FULL, err, sizeof err) == -EBADMSG);
    CHECK(strstr(err, "missing /usr/bin/link") != NULL);
    CHECK(symlink("tool", p) == 0);
    CHECK(sbf_profile_verify(&prof, SBF_VERIFY_FULL, err, sizeof err) == 0);
    /* the quick check sees a re-created symlink (new mtime) and open() refuses it */
    sbf_profile again;
    CHECK(sbf_profile_open(base, "fake", &again, err, sizeof err) == -EBADMSG);
    CHECK(sbf_profile_open_mode(base, "fake", SBF_VERIFY_FULL, &again, err, sizeof err) == 0);
    sbf_profile_close(&again);
    sbf_profile_close(&prof);
  }

  /* manifest checks: each names the field */
  static const struct {
    const char *json, *field;
  } bad[] = {
      {"[1]", "(top)"},
      {"{\"name\":\"other\"}", "\"name\""},
      {"{\"name\":\"fake\",\"format\":1,\"origin\":{\"mirror\":\"m\",\"variant\":\"v\",\"packages\":[]},"
       "\"package_versions\":{\"a\":\"1\"},\"created\":\"2025-01-01T00:00:00Z\",\"content_hash\":\"" E0 "\"}",
       "origin.suite"},
      {"{\"name\":\"fake\",\"origin\":{\"suite\":\"s\",\"mirror\":\"m\",\"variant\":\"v\",\"packages\":[]},"
       "\"package_versions\":[],\"created\":\"2025-01-01T00:00:00Z\",\"content_hash\":\"sha256:" E0 "\"}",
       "package_versions"},
      {"{\"name\":\"fake\",\"origin\":{\"suite\":\"s\",\"mirror\":\"m\",\"variant\":\"v\",\"packages\":[]},"
       "\"package_versions\":{\"a\":\"1\"},\"created\":\"yesterday\",\"content_hash\":\"sha256:" E0 "\"}",
       "created"},
      {"{\"name\":\"fake\",\"origin\":{\"suite\":\"s\",\"mirror\":\"m\",\"variant\":\"v\",\"packages\":[]},"
       "\"package_versions\":{\"a\":\"1\"},\"created\":\"2025-01-01T00:00:00Z\",\"content_hash\":\"" E0 "\"}",
       "content_hash"},
      {"{\"name\":\"fake\",\"format\":2,\"origin\":{}}", "format"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    write_manifest(bad[i].json);
    err[0] = '\0';
    CHECK(open_err(err, sizeof err) == -EINVAL);
    CHECK(strstr(err, bad[i].field) != NULL);
    if (!strstr(err, bad[i].field)) fprintf(stderr, "case %zu: %s\n", i, err);
  }
  write_manifest("{not json");
  CHECK(open_err(err, sizeof err) == -EINVAL);
  /* a well-formed manifest whose hash does not match the rootfs */
  write_manifest("{\"name\":\"fake\",\"origin\":{\"suite\":\"s\",\"mirror\":\"m\",\"variant\":\"v\",\"packages\":[]},"
                 "\"package_versions\":{\"a\":\"1\"},\"created\":\"2025-01-01T00:00:00Z\",\"content_hash\":\"sha256:" E0
                 "\"}");
  CHECK(open_err(err, sizeof err) == 0);
  CHECK(sbf_profile_open(base, "fake", &prof, err, sizeof err) == -EBADMSG); /* no quick hash: full check */
  snprintf(p, sizeof p, "%s/fake/manifest.json", base);
  unlink(p);
  CHECK(open_err(err, sizeof err) == -ENOENT);
  CHECK(strstr(err, "incomplete") != NULL);
  CHECK(sbf_profile_open(base, "nothere", &prof, err, sizeof err) == -ENOENT);
  CHECK(strstr(err, "no profile nothere") != NULL);
  CHECK(sbf_profile_open(base, "../etc", &prof, err, sizeof err) == -EINVAL);

  /* host */
  CHECK(sbf_profile_open(base, "host", &prof, err, sizeof err) == 0);
  CHECK(prof.is_host && sbf_profile_root(&prof) == NULL);
  char tdir[4096];
  CHECK(sbf_profile_toolchains_dir(&prof, tdir, sizeof tdir) == 0);
  CHECK_STR(tdir, sbt_default_dir());
  CHECK(sbf_profile_verify(&prof, SBF_VERIFY_FULL, err, sizeof err) == 0);
  sbf_profile_close(&prof);

  /* names and the default directory */
  CHECK(sbf_name_ok("surge-2025"));
  CHECK(sbf_name_ok("a.b+c_d"));
  CHECK(!sbf_name_ok(""));
  CHECK(!sbf_name_ok(".hidden"));
  CHECK(!sbf_name_ok("a/b"));
  CHECK(!sbf_name_ok(".."));
  CHECK(!sbf_name_ok("01234567890123456789012345678901234567890123456789012345678901234"));
  setenv("SURGEBOX_PROFILES", "/srv/profiles", 1);
  CHECK_STR(sbf_default_dir(), "/srv/profiles");
  unsetenv("SURGEBOX_PROFILES");
  if (geteuid() == 0) CHECK_STR(sbf_default_dir(), "/var/lib/surgebox/profiles");

  /* sbf_enter_root: read-only rootfs, private /tmp, a /proc (root only: it mounts, in a child's own namespace) */
  if (geteuid() == 0) {
    mk("fake2", 0755);
    mk("fake2/etc", 0755);
    mk("fake2/tmp", 01777);
    mk("fake2/proc", 0555);
    char r2[512];
    snprintf(r2, sizeof r2, "%s/fake2", base);
    pid_t pid = fork();
    if (pid == 0) {
      if (sbf_enter_root(r2, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        _exit(99);
      }
      int bits = 0;
      if (open("/etc/x", O_WRONLY | O_CREAT, 0644) >= 0 || errno != EROFS) bits |= 1;
      int fd = open("/tmp/x", O_WRONLY | O_CREAT, 0644);
      if (fd < 0) bits |= 2;
      if (access("/proc/self/status", R_OK) != 0) bits |= 4;
      if (access("/fake2", F_OK) == 0 || access("/etc", F_OK) != 0) bits |= 8; /* chrooted */
      _exit(bits);
    }
    int st = -1;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st)) fprintf(stderr, "enter_root child: status %d\n", st);
    snprintf(p, sizeof p, "%s/tmp/x", r2);
    CHECK(access(p, F_OK) != 0); /* /tmp was a tmpfs */
    snprintf(p, sizeof p, "%s/etc/x", r2);
    CHECK(access(p, F_OK) != 0);
  }

  /* the surge-2025 definition and its toolchain files */
  json_object *def = json_object_from_file(SURGEBOX_PROFILE_DEFS "/surge-2025.json");
  CHECK(def != NULL);
  if (def) {
    CHECK_STR(json_object_get_string(json_object_object_get(def, "suite")), "bullseye");
    CHECK_STR(json_object_get_string(json_object_object_get(def, "variant")), "minbase");
    json_object_put(def);
  }
  sbt_registry reg;
  char terr[SBT_ERR_MAX];
  CHECK(sbt_registry_load(&reg, SURGEBOX_PROFILE_DEFS "/surge-2025", terr) == 0);
  CHECK(reg.n_defs == 8);
  bool has_clang = false, has_julia = false;
  for (size_t i = 0; i < reg.n_defs; i++) {
    has_clang |= strcmp(reg.defs[i].name, "clang++-19") == 0;
    has_julia |= strcmp(reg.defs[i].name, "julia") == 0; /* bullseye's julia 1.5.3 */
  }
  CHECK(has_clang);
  CHECK(has_julia);
  sbt_registry_free(&reg);

  /* create on a profile made from an older definition (a package added
   * since): refused, naming the difference, never reported as up to date */
  mk("defs", 0755);
  mk("stale", 0755);
  snprintf(p, sizeof p, "%s/defs", base);
  write_at(p, "stale.json", "{\"name\":\"stale\",\"description\":\"d\",\"suite\":\"bullseye\",\"variant\":\"minbase\","
                            "\"mirror\":\"http://mirror.example.org/debian\",\"packages\":[\"make\",\"julia\"]}");
  snprintf(p, sizeof p, "%s/stale", base);
  write_at(p, "manifest.json", "{\"name\":\"stale\",\"origin\":{\"suite\":\"bullseye\",\"mirror\":\"http://other.example.org/debian\","
                               "\"variant\":\"minbase\",\"packages\":[\"make\",\"bash\"]}}");
  char defs[512];
  snprintf(defs, sizeof defs, "%s/defs", base);
  sbf_create_opts co = {.dir = base, .defs = defs, .quiet = true};
  err[0] = '\0';
  CHECK(sbf_profile_create("stale", &co, err, sizeof err) == -ESTALE);
  CHECK(strstr(err, "made from another definition (+julia -bash)") != NULL); /* another mirror is no difference */
  if (!strstr(err, "+julia -bash")) fprintf(stderr, "stale: %s\n", err);

  json_object_put(origin);
  json_object_put(versions);
  json_object_put(extra);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", base);
  return check_exit();
}
