/* `surgebox profile create`: a profile from its definition
 * (toolchains/profiles/<name>.json, see toolchains/profiles/README.md):
 *
 *   1. debootstrap --variant=V --include=P,... SUITE rootfs MIRROR
 *      (resumable: a rootfs left by an interrupted run is bootstrapped again
 *      in place, reusing the packages already downloaded into it; if that
 *      fails, the rootfs is wiped except for those packages and redone)
 *   2. links (g++ -> g++-9 ...), cleanup (downloaded .debs, apt lists)
 *   3. imports: host trees copied into the rootfs with their shared-library
 *      closure and the host's loader, started through launcher scripts
 *   4. toolchains/: the definition's toolchain files (those of skipped
 *      imports left out), each checked by the toolchain reader
 *   5. package_versions from dpkg-query run in the rootfs (chroot)
 *   6. seal: hash the rootfs, write rootfs.sha256 and, last, manifest.json
 * Idempotent: a sealed profile that verifies is left as it is. */
#include "atomic_write.h"
#include "cleanup.h"
#include "clock.h"
#include "fs_tree.h"
#include "profile.h"
#include "profile_internal.h"
#include "sha256.h"
#include "toolchain.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  const char *name;
  const sbf_create_opts *o;
  char *err;
  size_t errn;
  json_object *def;
  char def_file[4096];
  char path[4096];  /* <dir>/<name> */
  char root[4200];  /* <path>/rootfs */
  char log[4200];   /* <path>/create.log */
  int log_fd;
  char mirror[2048]; /* --mirror, else the definition's, else apt's own (apt_mirror.c) */
} ctx;

__attribute__((format(printf, 2, 3))) static void say(ctx *c, const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (!c->o->quiet) fprintf(stderr, "profile %s: %s\n", c->name, buf);
  if (c->log_fd >= 0) dprintf(c->log_fd, "== %s\n", buf);
}

__attribute__((format(printf, 3, 4))) static int fail(ctx *c, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err, c->errn, fmt, ap);
  va_end(ap);
  if (c->log_fd >= 0) dprintf(c->log_fd, "== error: %s\n", c->err);
  return rc < 0 ? rc : -EIO;
}

/* ---- the definition ---- */
static const char *jstr(json_object *o, const char *k) {
  json_object *v;
  return o && json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                              : NULL;
}

static json_object *jget(json_object *o, const char *k, json_type t) {
  json_object *v;
  return o && json_object_object_get_ex(o, k, &v) && json_object_is_type(v, t) ? v : NULL;
}

static bool strings_array(json_object *o, const char *k, bool required) {
  json_object *v;
  if (!json_object_object_get_ex(o, k, &v)) return !required;
  if (!json_object_is_type(v, json_type_array)) return false;
  for (size_t i = 0; i < json_object_array_length(v); i++)
    if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string)) return false;
  return true;
}

static bool strings_object(json_object *o, const char *k) {
  json_object *v;
  if (!json_object_object_get_ex(o, k, &v)) return true;
  if (!json_object_is_type(v, json_type_object)) return false;
  json_object_object_foreach(v, key, val) {
    (void)key;
    if (!json_object_is_type(val, json_type_string)) return false;
  }
  return true;
}

static bool safe_rel(const char *p) {
  return p && *p && *p != '/' && strstr(p, "..") == NULL;
}

static int check_def(ctx *c) {
  json_object *d = c->def;
  const char *f = c->def_file;
  if (!json_object_is_type(d, json_type_object)) return fail(c, -EINVAL, "%s: not a JSON object", f);
  const char *name = jstr(d, "name");
  if (!name || strcmp(name, c->name) != 0) return fail(c, -EINVAL, "%s: field \"name\" must be \"%s\"", f, c->name);
  static const char *const req[] = {"suite", "variant", NULL};
  for (const char *const *k = req; *k; k++)
    if (!jstr(d, *k) || !*jstr(d, *k)) return fail(c, -EINVAL, "%s: field \"%s\" missing or not a string", f, *k);
  if (json_object_object_get_ex(d, "mirror", NULL) && (!jstr(d, "mirror") || !*jstr(d, "mirror")))
    return fail(c, -EINVAL, "%s: field \"mirror\" must be a non-empty string when given", f);
  const char *m = c->o->mirror ? c->o->mirror : jstr(d, "mirror");
  if (m) snprintf(c->mirror, sizeof c->mirror, "%s", m);
  else if (!sbf_apt_mirror("/etc/apt", c->mirror, sizeof c->mirror))
    return fail(c, -EINVAL, "%s: no mirror: pass --mirror URL (apt's configuration names no Debian source)", f);
  if (!strings_array(d, "packages", true) || !strings_array(d, "toolchains", false) ||
      !strings_array(d, "cleanup", false) || !strings_object(d, "links"))
    return fail(c, -EINVAL, "%s: packages, toolchains and cleanup must be lists of strings, links an object of strings", f);
  json_object *ex = jget(d, "expect", json_type_object), *v;
  if (json_object_object_get_ex(d, "expect", NULL) &&
      (!ex || !json_object_object_get_ex(ex, "disk_gib", &v) || !json_object_is_type(v, json_type_double) ||
       !json_object_object_get_ex(ex, "measured_s", &v) || !json_object_is_type(v, json_type_int) || !jstr(ex, "measured_on")))
    return fail(c, -EINVAL, "%s: field \"expect\" must be {\"disk_gib\": number, \"measured_s\": integer, \"measured_on\": text}", f);
  json_object *imports = jget(d, "imports", json_type_array);
  if (json_object_object_get_ex(d, "imports", NULL) && !imports)
    return fail(c, -EINVAL, "%s: field \"imports\" must be a list", f);
  for (size_t i = 0; imports && i < json_object_array_length(imports); i++) {
    json_object *im = json_object_array_get_idx(imports, i);
    const char *n = jstr(im, "name");
    if (!n || !jstr(im, "source") || !jstr(im, "target") || jstr(im, "target")[0] != '/')
      return fail(c, -EINVAL, "%s: imports[%zu] needs name, source and an absolute target", f, i);
    if (!strings_array(im, "copy", true) || !strings_array(im, "exclude", false) ||
        !strings_array(im, "closure", false) || !strings_array(im, "closure_extra", false) ||
        !strings_array(im, "toolchains", false) || !strings_array(im, "host_packages", false) ||
        !strings_object(im, "files") || !strings_object(im, "links") || !strings_object(im, "move"))
      return fail(c, -EINVAL, "%s: import %s: copy, exclude, closure, closure_extra, toolchains, host_packages must be "
                             "lists of strings; files, links, move objects of strings", f, n);
    json_object *l = jget(im, "launchers", json_type_array);
    for (size_t k = 0; l && k < json_object_array_length(l); k++) {
      json_object *e = json_object_array_get_idx(l, k);
      if (!jstr(e, "path") || !safe_rel(jstr(e, "exec")) || !jstr(e, "argv0") || !strings_array(e, "args", false) ||
          !strings_array(e, "direct_when_first", false))
        return fail(c, -EINVAL, "%s: import %s: each launcher needs path, exec (relative) and argv0; args and "
                               "direct_when_first are lists of strings", f, n);
    }
  }
  return 0;
}

/* ---- file helpers ---- */
static int copy_file(const char *src, const char *dst, mode_t mode) {
  SBU_AUTOCLOSE int in = open(src, O_RDONLY | O_CLOEXEC);
  if (in < 0) return -errno;
  unlink(dst);
  int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode & 0777);
  if (out < 0) return -errno;
  char buf[1 << 16];
  int rc = 0;
  for (;;) {
    ssize_t r = read(in, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      rc = -errno;
      break;
    }
    if (r == 0) break;
    for (ssize_t w = 0; w < r;) {
      ssize_t k = write(out, buf + w, (size_t)(r - w));
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) {
        rc = -errno;
        break;
      }
      w += k;
    }
    if (rc) break;
  }
  if (close(out) < 0 && !rc) rc = -errno; /* by hand: a write error can show only here */
  if (!rc) chmod(dst, mode & 0777);
  return rc;
}

static int mkparents(const char *path) {
  char d[PATH_MAX];
  snprintf(d, sizeof d, "%s", path);
  char *s = strrchr(d, '/');
  if (!s || s == d) return 0;
  *s = '\0';
  return sb_mkdir_p(d, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

typedef struct {
  ctx *c;
  const char *src_root; /* realpath of the import's source */
  json_object *exclude;
  uint64_t files, bytes;
} copier;

static bool excluded(copier *k, const char *rel) {
  for (size_t i = 0; k->exclude && i < json_object_array_length(k->exclude); i++)
    if (fnmatch(json_object_get_string(json_object_array_get_idx(k->exclude, i)), rel, 0) == 0) return true;
  return false;
}

/* Copy src (rel: its path relative to the import source) to dst. Symlinks
 * that stay inside the source tree are kept as they are; others (and the
 * top of each copy) are dereferenced. */
static int copy_tree(copier *k, const char *src, const char *dst, const char *rel, bool top) {
  if (*rel && excluded(k, rel)) return 0;
  struct stat st;
  if (lstat(src, &st) < 0) return fail(k->c, -errno, "stat %s: %s", src, strerror(errno));
  if (S_ISLNK(st.st_mode)) {
    char real[PATH_MAX], target[PATH_MAX];
    ssize_t n = readlink(src, target, sizeof target - 1);
    bool inside = false;
    if (n > 0 && !top && target[0] != '/') {
      target[n] = '\0';
      size_t rl = strlen(k->src_root);
      inside = realpath(src, real) && strncmp(real, k->src_root, rl) == 0 && (real[rl] == '/' || !real[rl]);
    }
    if (inside) {
      unlink(dst);
      if (symlink(target, dst) < 0) return fail(k->c, -errno, "symlink %s: %s", dst, strerror(errno));
      k->files++;
      return 0;
    }
    if (stat(src, &st) < 0) return 0; /* dangling: nothing to copy */
  }
  if (S_ISDIR(st.st_mode)) {
    if (sb_mkdir_p(dst, 0755) < 0 && errno != EEXIST) return fail(k->c, -errno, "mkdir %s: %s", dst, strerror(errno));
    DIR *d = opendir(src);
    if (!d) return fail(k->c, -errno, "opendir %s: %s", src, strerror(errno));
    struct dirent *de;
    int rc = 0;
    while (!rc && (de = readdir(d))) {
      if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
      char s[PATH_MAX], t[PATH_MAX], r[PATH_MAX];
      snprintf(s, sizeof s, "%s/%s", src, de->d_name);
      snprintf(t, sizeof t, "%s/%s", dst, de->d_name);
      snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
      rc = copy_tree(k, s, t, r, false);
    }
    closedir(d);
    chmod(dst, st.st_mode & 0755);
    return rc;
  }
  if (!S_ISREG(st.st_mode)) return 0;
  if (mkparents(dst)) return fail(k->c, -errno, "mkdir for %s: %s", dst, strerror(errno));
  int rc = copy_file(src, dst, st.st_mode & 0755);
  if (rc) return fail(k->c, rc, "copy %s -> %s: %s", src, dst, strerror(-rc));
  k->files++;
  k->bytes += (uint64_t)st.st_size;
  return 0;
}

static int write_text(const char *path, const char *text, mode_t mode) {
  if (mkparents(path) || sbu_write_atomic(path, text, strlen(text), mode) < 0) return -errno;
  return 0;
}

/* A symlink at path (replacing what is there) pointing at target. */
static int make_link(const char *path, const char *target) {
  char cur[PATH_MAX];
  ssize_t n = readlink(path, cur, sizeof cur - 1);
  if (n >= 0) {
    cur[n] = '\0';
    if (strcmp(cur, target) == 0) return 0;
  }
  if (mkparents(path)) return -errno;
  unlink(path);
  return symlink(target, path) < 0 ? -errno : 0;
}

/* An in-rootfs path: absolute ones are under the rootfs, relative ones under base. */
static void in_root(ctx *c, const char *base, const char *p, char *out, size_t n) {
  if (p[0] == '/') snprintf(out, n, "%s%s", c->root, p);
  else snprintf(out, n, "%s%s/%s", c->root, base, p);
}

/* "sha256:<hex>" of a file, malloc'd; NULL when unreadable. */
static char *sha256_file(const char *path) {
  char hex[SBU_SHA256_HEX];
  if (sbu_sha256_file_hex(path, hex) < 0) return NULL;
  char *out = malloc(7 + sizeof hex);
  if (out) snprintf(out, 7 + sizeof hex, "sha256:%s", hex);
  return out;
}

/* ---- 1. debootstrap ---- */
static json_object *origin_of(ctx *c) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "suite", json_object_new_string(jstr(c->def, "suite")));
  json_object_object_add(o, "mirror", json_object_new_string(c->mirror));
  json_object_object_add(o, "variant", json_object_new_string(jstr(c->def, "variant")));
  json_object *p = NULL;
  json_object_deep_copy(jget(c->def, "packages", json_type_array), &p, NULL);
  json_object_object_add(o, "packages", p);
  return o;
}

static void log_tail(ctx *c, int lines) {
  if (c->o->quiet) return;
  SBU_AUTOFCLOSE FILE *f = fopen(c->log, "re");
  if (!f) return;
  char *ring[64] = {0}, buf[1024];
  int n = 0;
  while (fgets(buf, sizeof buf, f)) {
    free(ring[n % 64]);
    ring[n % 64] = strdup(buf);
    n++;
  }
  int from = n > lines ? n - lines : 0;
  for (int i = from; i < n; i++) fprintf(stderr, "  | %s", ring[i % 64] ? ring[i % 64] : "\n");
  for (int i = 0; i < 64; i++) free(ring[i]);
}

static int run_debootstrap(ctx *c, json_object *origin) {
  json_object *pk = json_object_object_get(origin, "packages");
  size_t inc_len = 16;
  for (size_t i = 0; i < json_object_array_length(pk); i++)
    inc_len += strlen(json_object_get_string(json_object_array_get_idx(pk, i))) + 1;
  char *inc = malloc(inc_len), variant[128];
  if (!inc) return fail(c, -ENOMEM, "out of memory");
  strcpy(inc, "--include=");
  for (size_t i = 0; i < json_object_array_length(pk); i++) {
    if (i) strcat(inc, ",");
    strcat(inc, json_object_get_string(json_object_array_get_idx(pk, i)));
  }
  snprintf(variant, sizeof variant, "--variant=%s", jstr(origin, "variant"));
  const char *argv[] = {"debootstrap", variant, json_object_array_length(pk) ? inc : "--verbose",
                        jstr(origin, "suite"), c->root, jstr(origin, "mirror"), NULL};
  dprintf(c->log_fd, "== %s %s %s %s %s %s\n", argv[0], argv[1], argv[2], argv[3], argv[4], argv[5]);
  int rc = sbf_run(argv, c->log_fd, c->log_fd, NULL);
  free(inc);
  return rc;
}

/* Wipe the rootfs but keep the .debs debootstrap already downloaded into it. */
static int wipe_keeping_debs(ctx *c) {
  char keep[4300], arch[4300];
  snprintf(keep, sizeof keep, "%s/debs.keep", c->path);
  snprintf(arch, sizeof arch, "%s/var/cache/apt/archives", c->root);
  sb_rm_rf(keep);
  bool kept = rename(arch, keep) == 0;
  int rc = sb_rm_rf(c->root);
  if (rc < 0) return fail(c, rc, "cannot remove %s: %s", c->root, strerror(-rc));
  if (kept) {
    char parent[4300];
    snprintf(parent, sizeof parent, "%s/var/cache/apt", c->root);
    if (sb_mkdir_p(parent, 0755) < 0 || rename(keep, arch) < 0)
      return fail(c, -errno, "cannot restore %s: %s", arch, strerror(errno));
  }
  return 0;
}

static int stage_debootstrap(ctx *c, json_object *origin, double *secs, bool *reused) {
  char marker[4300];
  snprintf(marker, sizeof marker, "%s/debootstrap.done", c->path);
  const char *want = json_object_to_json_string_ext(origin, JSON_C_TO_STRING_PLAIN);
  /* debootstrap.done: {"origin": what was bootstrapped, "seconds": how long it took, "finished": when} */
  json_object *had = json_object_from_file(marker), *had_origin = NULL, *had_secs = NULL;
  if (had) json_object_object_get_ex(had, "origin", &had_origin), json_object_object_get_ex(had, "seconds", &had_secs);
  bool done = had_origin && strcmp(json_object_to_json_string_ext(had_origin, JSON_C_TO_STRING_PLAIN), want) == 0;
  struct stat st;
  bool exists = stat(c->root, &st) == 0;
  if (done && exists) {
    *secs = had_secs ? json_object_get_double(had_secs) : 0;
    *reused = true;
    json_object_put(had);
    say(c, "debootstrap already done (%s), continuing after it", marker);
    return 0;
  }
  unlink(marker);
  if (had) json_object_put(had);
  if (exists) {
    /* Measured: debootstrap into a rootfs it had begun to extract stops at once
     * ("Tried to extract package, but file already exists"); after a wipe that
     * keeps var/cache/apt/archives it reuses every downloaded .deb. */
    say(c, "resuming an incomplete rootfs: wiping it, keeping the packages already downloaded");
    int rc = wipe_keeping_debs(c);
    if (rc) return rc;
  }
  say(c, "debootstrap %s (%s, %zu packages) from %s (log: %s)", jstr(origin, "suite"), jstr(origin, "variant"),
      json_object_array_length(json_object_object_get(origin, "packages")), jstr(origin, "mirror"), c->log);
  double t0 = sbu_now_s();
  int rc = run_debootstrap(c, origin);
  sbf_unmount_under(c->root);
  *secs = sbu_now_s() - t0;
  if (rc != 0) {
    log_tail(c, 15);
    if (rc < 0 || rc == 127)
      return fail(c, -ENOENT, "cannot run debootstrap (apt-get install debootstrap)");
    return fail(c, -EIO, "debootstrap failed (exit %d); see %s. Run the same command again to resume.", rc, c->log);
  }
  say(c, "debootstrap: %.1f s", *secs);
  json_object *m = json_object_new_object();
  char now[32];
  sbf_iso_now(now);
  json_object_object_add(m, "origin", json_object_get(origin));
  json_object_object_add(m, "seconds", sbf_json_seconds(*secs));
  json_object_object_add(m, "finished", json_object_new_string(now));
  int w = json_object_to_file_ext(marker, m, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
  json_object_put(m);
  if (w < 0) return fail(c, -EIO, "cannot write %s", marker);
  return 0;
}

/* ---- 2. links and cleanup ---- */
static int stage_links_cleanup(ctx *c) {
  json_object *links = jget(c->def, "links", json_type_object);
  if (links) {
    json_object_object_foreach(links, p, t) {
      char path[PATH_MAX];
      in_root(c, "", p, path, sizeof path);
      int rc = make_link(path, json_object_get_string(t));
      if (rc) return fail(c, rc, "link %s -> %s: %s", p, json_object_get_string(t), strerror(-rc));
    }
  }
  json_object *cl = jget(c->def, "cleanup", json_type_array);
  size_t removed = 0;
  for (size_t i = 0; cl && i < json_object_array_length(cl); i++) {
    const char *pat = json_object_get_string(json_object_array_get_idx(cl, i));
    if (!safe_rel(pat)) return fail(c, -EINVAL, "cleanup pattern %s must be relative", pat);
    char full[PATH_MAX];
    snprintf(full, sizeof full, "%s/%s", c->root, pat);
    glob_t g;
    if (glob(full, GLOB_NOSORT, NULL, &g) == 0) {
      for (size_t k = 0; k < g.gl_pathc; k++) removed += sb_rm_rf(g.gl_pathv[k]) == 0;
      globfree(&g);
    }
  }
  if (removed) say(c, "cleanup: removed %zu files", removed);
  return 0;
}

/* ---- 3. imports ---- */
static const char *const lib_dirs[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
                                       "/lib", "/usr/lib", NULL};

typedef struct {
  char loader[128]; /* basename of the interpreter, "" until found */
  size_t libs;
  json_object *missing;
} closure_t;

static int closure_of(ctx *c, const char *elf, const char *libdir, closure_t *cl) {
  const char *argv[] = {"ldd", elf, NULL};
  SBU_AUTOFREE char *out = NULL;
  int rc = sbf_run(argv, -1, c->log_fd, &out);
  if (rc != 0 || !out) return 0; /* not a dynamic ELF (scripts, data): nothing to add */
  char *save = NULL;
  for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    while (*line == ' ' || *line == '\t') line++;
    char name[256], from[PATH_MAX];
    char *arrow = strstr(line, " => ");
    if (arrow) {
      snprintf(name, sizeof name, "%.*s", (int)(arrow - line), line);
      if (strncmp(arrow + 4, "not found", 9) == 0) {
        json_object_array_add(cl->missing, json_object_new_string(name));
        continue;
      }
      if (sscanf(arrow + 4, "%4095s", from) != 1) continue;
    } else if (line[0] == '/') {
      if (sscanf(line, "%4095s", from) != 1) continue;
      const char *b = strrchr(from, '/');
      snprintf(name, sizeof name, "%s", b + 1);
      snprintf(cl->loader, sizeof cl->loader, "%s", name);
    } else {
      continue; /* linux-vdso.so.1 */
    }
    char dst[PATH_MAX];
    snprintf(dst, sizeof dst, "%s/%s", libdir, name);
    if (access(dst, F_OK) == 0) continue;
    int r = copy_file(from, dst, 0755);
    if (r) return fail(c, r, "copy %s: %s", from, strerror(-r));
    cl->libs++;
  }
  return 0;
}

static void shell_quote(const char *s, char *out, size_t n) {
  size_t k = 0;
  if (k < n) out[k++] = '\'';
  for (; *s && k + 5 < n; s++) {
    if (*s == '\'') memcpy(out + k, "'\\''", 4), k += 4;
    else out[k++] = *s;
  }
  if (k + 2 <= n) out[k++] = '\'';
  out[k < n ? k : n - 1] = '\0';
}

static void host_versions(ctx *c, json_object *pkgs, json_object *out) {
  for (size_t i = 0; pkgs && i < json_object_array_length(pkgs); i++) {
    const char *p = json_object_get_string(json_object_array_get_idx(pkgs, i));
    const char *argv[] = {"dpkg-query", "-W", "-f=${Version}", p, NULL};
    char *v = NULL;
    if (sbf_run(argv, -1, c->log_fd, &v) == 0 && v && *v) json_object_object_add(out, p, json_object_new_string(v));
    free(v);
  }
}

/* ---- one import: a host directory copied into the profile, step by step ---- */
/* The directory an import replaces: absolute, no "..", three levels deep at
 * least (it is wiped first). 0 or fail(). */
static int import_target_ok(ctx *c, const char *name, const char *target) {
  int depth = 0;
  for (const char *t = target; *t; t++) depth += *t == '/' && t[1] && t[1] != '/';
  if (depth < 3 || strstr(target, ".."))
    return fail(c, -EINVAL, "import %s: target %s must be a private directory at least three levels deep "
                            "(it is wiped and made again)", name, target);
  return 0;
}

/* The host directory the pattern names (its highest version when several
 * match) into src, or "" when there is none. */
static void import_source(const char *pattern, char src[PATH_MAX]) {
  src[0] = '\0';
  glob_t g;
  if (!pattern || glob(pattern, 0, NULL, &g) != 0) return;
  /* the highest version: glob sorts, versionsort on the last component would be better but
   * one match is the common case; take the last in strverscmp order */
  const char *best = NULL;
  for (size_t i = 0; i < g.gl_pathc; i++)
    if (!best || strverscmp(g.gl_pathv[i], best) > 0) best = g.gl_pathv[i];
  if (best && !realpath(best, src)) src[0] = '\0';
  globfree(&g);
}

/* "copy": each entry (or "." for all) from src to tdir, then "move": renames inside tdir. */
static int import_copy(copier *k, json_object *im, const char *name, const char *src, const char *tdir) {
  ctx *c = k->c;
  json_object *copy = jget(im, "copy", json_type_array);
  for (size_t i = 0; i < json_object_array_length(copy); i++) {
    const char *rel = json_object_get_string(json_object_array_get_idx(copy, i));
    char s[PATH_MAX], t[PATH_MAX];
    bool all = strcmp(rel, ".") == 0;
    if (!all && !safe_rel(rel)) return fail(c, -EINVAL, "import %s: copy entry %s must be relative", name, rel);
    snprintf(s, sizeof s, "%s%s%s", src, all ? "" : "/", all ? "" : rel);
    snprintf(t, sizeof t, "%s%s%s", tdir, all ? "" : "/", all ? "" : rel);
    int rc = copy_tree(k, s, t, all ? "" : rel, true);
    if (rc) return rc;
  }
  json_object *mv = jget(im, "move", json_type_object);
  if (mv) {
    json_object_object_foreach(mv, from, to) {
      char a[PATH_MAX], b[PATH_MAX];
      if (!safe_rel(from) || !safe_rel(json_object_get_string(to)))
        return fail(c, -EINVAL, "import %s: move paths must be relative", name);
      snprintf(a, sizeof a, "%s/%s", tdir, from);
      snprintf(b, sizeof b, "%s/%s", tdir, json_object_get_string(to));
      if (mkparents(b) || rename(a, b) < 0) return fail(c, -errno, "move %s -> %s: %s", a, b, strerror(errno));
    }
  }
  return 0;
}

/* The libraries the import's programs need, into libdir: "closure" (ELF
 * files whose needs are followed) and "closure_extra" (libraries by name,
 * from the host's library directories). What is not found goes into
 * cl->missing (the caller's). */
static int import_closure(ctx *c, json_object *im, const char *tdir, const char *libdir, closure_t *cl) {
  json_object *clo = jget(im, "closure", json_type_array);
  for (size_t i = 0; clo && i < json_object_array_length(clo); i++) {
    char pat[PATH_MAX];
    snprintf(pat, sizeof pat, "%s/%s", tdir, json_object_get_string(json_object_array_get_idx(clo, i)));
    glob_t g;
    if (glob(pat, 0, NULL, &g) != 0) continue;
    int rc = 0;
    for (size_t j = 0; !rc && j < g.gl_pathc; j++) rc = closure_of(c, g.gl_pathv[j], libdir, cl);
    globfree(&g);
    if (rc) return rc;
  }
  json_object *extra = jget(im, "closure_extra", json_type_array);
  for (size_t i = 0; extra && i < json_object_array_length(extra); i++) {
    const char *lib = json_object_get_string(json_object_array_get_idx(extra, i));
    char dst[PATH_MAX], from[PATH_MAX];
    snprintf(dst, sizeof dst, "%s/%s", libdir, lib);
    if (access(dst, F_OK) == 0) continue;
    bool found = false;
    for (const char *const *d = lib_dirs; *d && !found; d++) {
      snprintf(from, sizeof from, "%s/%s", *d, lib);
      if (access(from, R_OK) == 0) found = copy_file(from, dst, 0755) == 0;
    }
    if (found) cl->libs++;
    else json_object_array_add(cl->missing, json_object_new_string(lib));
  }
  return 0;
}

/* "files": texts written into tdir. */
static int import_files(ctx *c, json_object *im, const char *name, const char *tdir) {
  json_object *files = jget(im, "files", json_type_object);
  if (!files) return 0;
  json_object_object_foreach(files, p, text) {
    char path[PATH_MAX];
    if (!safe_rel(p)) return fail(c, -EINVAL, "import %s: files must be relative", name);
    snprintf(path, sizeof path, "%s/%s", tdir, p);
    int rc = write_text(path, json_object_get_string(text), 0644);
    if (rc) return fail(c, rc, "write %s: %s", path, strerror(-rc));
  }
  return 0;
}

/* Where an import's launchers point: its target, library directory and loader. */
typedef struct {
  const char *name, *target, *libdir_rel, *loader;
} import_place;

/* One launcher l: a shell script that runs the imported program through
 * the host's loader and libraries; its record (path, argv) into lrec. */
static int import_launcher(ctx *c, const import_place *at, json_object *l, json_object *lrec) {
  const char *lp = jstr(l, "path"), *ex = jstr(l, "exec"), *a0 = jstr(l, "argv0");
  if (!at->loader[0]) return fail(c, -ENOENT, "import %s: no dynamic loader found for its launchers", at->name);
  char loader[PATH_MAX], libpath[PATH_MAX], exe[PATH_MAX], path[PATH_MAX], qa0[512];
  snprintf(loader, sizeof loader, "%s/%s/%s", at->target, at->libdir_rel, at->loader);
  snprintf(libpath, sizeof libpath, "%s/%s", at->target, at->libdir_rel);
  snprintf(exe, sizeof exe, "%s/%s", at->target, ex);
  if (strcmp(a0, "$0") == 0) snprintf(qa0, sizeof qa0, "\"$0\"");
  else shell_quote(a0, qa0, sizeof qa0);
  /* args: put before the caller's; direct_when_first: first arguments
   * (clang's -cc1 when the driver re-executes itself) that get none. */
  json_object *args = jget(l, "args", json_type_array), *direct = jget(l, "direct_when_first", json_type_array);
  char pre[4096] = "", cases[1024] = "";
  size_t xl = 0, cl_len = 0;
  for (size_t m = 0; args && m < json_object_array_length(args); m++) {
    char q[1024];
    shell_quote(json_object_get_string(json_object_array_get_idx(args, m)), q, sizeof q);
    xl += (size_t)snprintf(pre + xl, xl < sizeof pre ? sizeof pre - xl : 0, "%s ", q);
  }
  for (size_t m = 0; direct && xl && m < json_object_array_length(direct); m++) {
    char q[256];
    shell_quote(json_object_get_string(json_object_array_get_idx(direct, m)), q, sizeof q);
    cl_len += (size_t)snprintf(cases + cl_len, cl_len < sizeof cases ? sizeof cases - cl_len : 0, "%s%s", m ? "|" : "", q);
  }
  if (xl >= sizeof pre || cl_len >= sizeof cases)
    return fail(c, -E2BIG, "import %s: launcher arguments too long", at->name);
  char head[2 * PATH_MAX + 600], script[6 * PATH_MAX + 6000];
  snprintf(head, sizeof head, "%s --library-path %s --argv0 %s %s", loader, libpath, qa0, exe);
  int len = snprintf(script, sizeof script,
                     "#!/bin/sh\n"
                     "# surgebox profile launcher (import %s): the host's program through the host's own loader\n"
                     "# and libraries in %s, so that it does not use the profile's older glibc.\n",
                     at->name, libpath);
  if (*cases)
    len += snprintf(script + len, sizeof script - (size_t)len, "case \"$1\" in\n  %s) exec %s \"$@\" ;;\nesac\n", cases,
                    head);
  snprintf(script + len, sizeof script - (size_t)len, "exec %s %s\"$@\"\n", head, pre);
  in_root(c, at->target, lp, path, sizeof path);
  int rc = write_text(path, script, 0755);
  if (rc) return fail(c, rc, "write %s: %s", path, strerror(-rc));
  json_object *r = json_object_new_object(), *argv = json_object_new_array();
  if (lp[0] != '/') snprintf(path, sizeof path, "%s/%s", at->target, lp);
  json_object_object_add(r, "path", json_object_new_string(lp[0] == '/' ? lp : path));
  json_object_array_add(argv, json_object_new_string(loader));
  json_object_array_add(argv, json_object_new_string("--library-path"));
  json_object_array_add(argv, json_object_new_string(libpath));
  json_object_array_add(argv, json_object_new_string("--argv0"));
  json_object_array_add(argv, json_object_new_string(a0));
  json_object_array_add(argv, json_object_new_string(exe));
  for (size_t m = 0; args && m < json_object_array_length(args); m++)
    json_object_array_add(argv, json_object_get(json_object_array_get_idx(args, m)));
  if (direct) json_object_object_add(r, "direct_when_first", json_object_get(direct));
  json_object_object_add(r, "argv", argv);
  json_object_array_add(lrec, r);
  return 0;
}

/* "launchers" (recorded in record's "launchers"), then "links". */
static int import_launchers_links(ctx *c, json_object *im, const import_place *at, json_object *record) {
  json_object *launchers = jget(im, "launchers", json_type_array), *lrec = json_object_new_array();
  json_object_object_add(record, "launchers", lrec);
  for (size_t i = 0; launchers && i < json_object_array_length(launchers); i++) {
    int rc = import_launcher(c, at, json_object_array_get_idx(launchers, i), lrec);
    if (rc) return rc;
  }
  json_object *links = jget(im, "links", json_type_object);
  if (!links) return 0;
  json_object_object_foreach(links, p, t) {
    char path[PATH_MAX];
    in_root(c, at->target, p, path, sizeof path);
    int rc = make_link(path, json_object_get_string(t));
    if (rc) return fail(c, rc, "link %s: %s", path, strerror(-rc));
  }
  return 0;
}

/* One entry of the definition's "imports": found on the host (or skipped
 * when optional), copied to its target, its libraries gathered, its files,
 * launchers and links written; what it did goes into record and its
 * toolchains into toolchains. 0 or fail(). */
static int do_import(ctx *c, json_object *im, json_object *record, json_object *toolchains) {
  const char *name = jstr(im, "name"), *target = jstr(im, "target");
  int rc = import_target_ok(c, name, target);
  if (rc) return rc;
  json_object *opt = jget(im, "optional", json_type_boolean);
  bool optional = opt && json_object_get_boolean(opt);
  SBU_AUTOFREE char *pattern = sbt_expand_env(jstr(im, "source"));
  char src[PATH_MAX];
  import_source(pattern, src);
  json_object_object_add(record, "name", json_object_new_string(name));
  json_object_object_add(record, "target", json_object_new_string(target));
  struct stat st;
  if (!*src || stat(src, &st) < 0 || !S_ISDIR(st.st_mode)) {
    char why[PATH_MAX + 64];
    snprintf(why, sizeof why, "not on this host: %s", pattern ? pattern : "?");
    if (!optional) return fail(c, -ENOENT, "import %s: %s", name, why);
    say(c, "import %s skipped: %s", name, why);
    json_object_object_add(record, "skipped", json_object_new_string(why));
    return 0;
  }
  double t0 = sbu_now_s();
  char tdir[PATH_MAX];
  snprintf(tdir, sizeof tdir, "%s%s", c->root, target);
  sb_rm_rf(tdir); /* a rerun redoes the import from scratch */
  if (sb_mkdir_p(tdir, 0755) < 0) return fail(c, -errno, "mkdir %s: %s", tdir, strerror(errno));
  copier k = {.c = c, .src_root = src, .exclude = jget(im, "exclude", json_type_array)};
  if ((rc = import_copy(&k, im, name, src, tdir))) return rc;
  const char *libdir_rel = jstr(im, "libdir") ? jstr(im, "libdir") : "lib";
  char libdir[PATH_MAX];
  snprintf(libdir, sizeof libdir, "%s/%s", tdir, libdir_rel);
  if (sb_mkdir_p(libdir, 0755) < 0 && errno != EEXIST) return fail(c, -errno, "mkdir %s", libdir);
  SBU_AUTOPUT json_object *missing = json_object_new_array(); /* every return below releases it */
  closure_t cl = {.missing = missing};
  if ((rc = import_closure(c, im, tdir, libdir, &cl))) return rc;
  if ((rc = import_files(c, im, name, tdir))) return rc;
  import_place at = {.name = name, .target = target, .libdir_rel = libdir_rel, .loader = cl.loader};
  if ((rc = import_launchers_links(c, im, &at, record))) return rc;
  json_object *hp = json_object_new_object();
  host_versions(c, jget(im, "host_packages", json_type_array), hp);
  json_object_object_add(record, "source", json_object_new_string(src));
  json_object_object_add(record, "host_packages", hp);
  json_object_object_add(record, "files", json_object_new_int64((int64_t)(k.files + cl.libs)));
  json_object_object_add(record, "libraries", json_object_new_int64((int64_t)cl.libs));
  json_object_object_add(record, "loader", json_object_new_string(cl.loader));
  if (json_object_array_length(missing)) json_object_object_add(record, "libraries_missing", sbu_take_ptr(&missing));
  json_object *tcs = jget(im, "toolchains", json_type_array);
  for (size_t i = 0; tcs && i < json_object_array_length(tcs); i++)
    json_object_array_add(toolchains, json_object_get(json_object_array_get_idx(tcs, i)));
  double dt = sbu_now_s() - t0;
  json_object_object_add(record, "seconds", sbf_json_seconds(dt));
  char size[32];
  sbf_human_size(k.bytes, size);
  say(c, "import %s: %s -> %s (%llu files, %s, %zu libraries, loader %s) in %.1f s", name, src, target,
      (unsigned long long)k.files, size, cl.libs, cl.loader[0] ? cl.loader : "-", dt);
  return 0;
}

static int stage_toolchains(ctx *c, json_object *files) {
  char dir[4300], tmp[4300], src_dir[4300];
  snprintf(dir, sizeof dir, "%s/toolchains", c->path);
  snprintf(tmp, sizeof tmp, "%s/toolchains.tmp", c->path);
  snprintf(src_dir, sizeof src_dir, "%s/%s", c->o->defs, c->name);
  sb_rm_rf(tmp);
  if (sb_mkdir_p(tmp, 0755) < 0) return fail(c, -errno, "mkdir %s: %s", tmp, strerror(errno));
  for (size_t i = 0; i < json_object_array_length(files); i++) {
    const char *f = json_object_get_string(json_object_array_get_idx(files, i));
    char s[PATH_MAX], d[PATH_MAX];
    if (!safe_rel(f) || strchr(f, '/')) return fail(c, -EINVAL, "toolchain file %s: a plain file name please", f);
    snprintf(s, sizeof s, "%s/%s", src_dir, f);
    snprintf(d, sizeof d, "%s/%s", tmp, f);
    int rc = copy_file(s, d, 0644);
    if (rc) return fail(c, rc, "toolchain file %s: %s", s, strerror(-rc));
  }
  sbt_registry reg;
  char terr[SBT_ERR_MAX];
  if (sbt_registry_load(&reg, tmp, terr) != 0) return fail(c, -EINVAL, "%s", terr);
  sbt_registry_free(&reg);
  sb_rm_rf(dir);
  if (rename(tmp, dir) < 0) return fail(c, -errno, "rename %s: %s", tmp, strerror(errno));
  return 0;
}

/* ---- 5. package versions ---- */
static int stage_packages(ctx *c, json_object *versions) {
  const char *argv[] = {"chroot", c->root, "dpkg-query", "-W", "-f=${db:Status-Abbrev}\t${Package}\t${Version}\n", NULL};
  char *out = NULL;
  int rc = sbf_run(argv, -1, c->log_fd, &out);
  if (rc != 0 || !out) {
    free(out);
    return fail(c, -EIO, "dpkg-query in the rootfs failed (exit %d)", rc);
  }
  char *save = NULL;
  for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    if (!t2 || strncmp(line, "ii", 2) != 0) continue;
    *t2 = '\0';
    json_object_object_add(versions, t1 + 1, json_object_new_string(t2 + 1));
  }
  free(out);
  if (json_object_object_length(versions) == 0) return fail(c, -EIO, "dpkg-query in the rootfs listed nothing");
  json_object *pk = jget(c->def, "packages", json_type_array);
  for (size_t i = 0; i < json_object_array_length(pk); i++) {
    const char *p = json_object_get_string(json_object_array_get_idx(pk, i));
    if (!json_object_object_get_ex(versions, p, NULL)) return fail(c, -EIO, "package %s is not installed in the rootfs", p);
  }
  return 0;
}

/* Appends to out the packages of list a that list b lacks, each prefixed. */
static void missing_from(json_object *a, json_object *b, const char *prefix, char *out, size_t n) {
  for (size_t i = 0; a && i < json_object_array_length(a); i++) {
    const char *p = json_object_get_string(json_object_array_get_idx(a, i));
    bool found = false;
    for (size_t k = 0; !found && b && k < json_object_array_length(b); k++)
      found = !strcmp(p, json_object_get_string(json_object_array_get_idx(b, k)));
    size_t len = strlen(out);
    if (!found) snprintf(out + len, n - len, "%s%s%s", len ? " " : "", prefix, p);
  }
}

/* Was the existing profile bootstrapped from what the definition asks for
 * now (suite, variant, packages; the mirror may differ between machines)?
 * 0 when it was, else 1 with what differs in `why`. */
static int origin_differs(ctx *c, const char *manifest, char *why, size_t n) {
  json_object *m = json_object_from_file(manifest), *had = jget(m, "origin", json_type_object);
  why[0] = '\0';
  if (had) {
    const char *keys[] = {"suite", "variant"};
    for (int k = 0; k < 2; k++) {
      const char *a = jstr(had, keys[k]), *b = jstr(c->def, keys[k]);
      size_t len = strlen(why);
      if (a && b && strcmp(a, b)) snprintf(why + len, n - len, "%s%s %s -> %s", len ? " " : "", keys[k], a, b);
    }
    json_object *was = jget(had, "packages", json_type_array), *want = jget(c->def, "packages", json_type_array);
    missing_from(want, was, "+", why, n);
    missing_from(was, want, "-", why, n);
  }
  json_object_put(m);
  return why[0] != '\0';
}

static int delete_profile(ctx *c) {
  sbf_unmount_under(c->path);
  int rc = sb_rm_rf(c->path);
  return rc < 0 ? fail(c, rc, "cannot remove %s: %s", c->path, strerror(-rc)) : 0;
}

/* A profile already made: --force deletes it; otherwise it must come from
 * this definition and verify (quickly, else by content). 1: the answer is
 * given (*rc set: 0 when it verifies), 0: go on and make it. */
static int existing_profile(ctx *c, const char *manifest, int *rc) {
  const char *name = c->name;
  if (access(manifest, F_OK) != 0) return 0;
  if (c->o->force) {
    say(c, "--force: deleting the existing profile");
    *rc = delete_profile(c);
    return *rc != 0;
  }
  sbf_profile p;
  char verr[1024];
  double t0 = sbu_now_s();
  if (origin_differs(c, manifest, verr, sizeof verr)) {
    *rc = fail(c, -ESTALE, "profile %s was made from another definition (%s); `surgebox profile delete %s` or "
               "create --force makes it again", name, verr, name);
    return 1;
  }
  *rc = sbf_profile_open_mode(c->o->dir, name, SBF_VERIFY_QUICK, &p, verr, sizeof verr);
  if (*rc == 0) {
    char size[32];
    sbf_human_size(p.size_bytes, size);
    printf("profile %s exists and verifies (quick, %.2f s): %s, created %s, %llu files, %s, %s\n", name,
           sbu_now_s() - t0, c->path, p.created, (unsigned long long)p.files, size, p.content_hash);
    sbf_profile_close(&p);
    return 1;
  }
  if (*rc == -EBADMSG && sbf_profile_open_mode(c->o->dir, name, SBF_VERIFY_NONE, &p, verr, sizeof verr) == 0) {
    /* touched but maybe not changed: the content decides */
    say(c, "exists but its quick hash differs: checking the content");
    *rc = sbf_profile_refresh_quick(&p, verr, sizeof verr);
    if (*rc == 0)
      printf("profile %s exists and its content verifies (%.2f s; quick hash refreshed): %s, %s\n", name,
             sbu_now_s() - t0, c->path, p.content_hash);
    sbf_profile_close(&p);
    if (*rc == 0) return 1;
  }
  *rc = fail(c, *rc, "%s; `surgebox profile delete %s` or create --force to make it again", verr, name);
  return 1;
}

/* What a creation records beside the tree: per stage its time, and the
 * imports and toolchains as made. */
typedef struct {
  json_object *origin, *versions, *imports, *tcs;
  double t_deb, t_imports, t_pkgs;
  bool deb_reused;
} creation;

/* The stages in order: debootstrap (or its earlier result), links and
 * clean-up, the definition's imports, toolchains, the package list. */
static int run_stages(ctx *c, creation *cr) {
  json_object *base = jget(c->def, "toolchains", json_type_array);
  for (size_t i = 0; base && i < json_object_array_length(base); i++)
    json_object_array_add(cr->tcs, json_object_get(json_object_array_get_idx(base, i)));
  json_object *ex = jget(c->def, "expect", json_type_object);
  if (ex) /* said before anything is downloaded: the user decides whether to wait */
    say(c, "about %.1f GiB on disk; creating it took %d s on %s (a slow mirror takes several minutes); "
           "progress below, everything in %s; an interrupted create resumes where it stopped",
        json_object_get_double(json_object_object_get(ex, "disk_gib")),
        json_object_get_int(json_object_object_get(ex, "measured_s")), jstr(ex, "measured_on"), c->log);
  sbf_unmount_under(c->root);
  int rc = stage_debootstrap(c, cr->origin, &cr->t_deb, &cr->deb_reused);
  double t0 = sbu_now_s();
  if (!rc) rc = stage_links_cleanup(c);
  json_object *defs_imports = jget(c->def, "imports", json_type_array);
  for (size_t i = 0; !rc && defs_imports && i < json_object_array_length(defs_imports); i++) {
    json_object *rec = json_object_new_object();
    json_object_array_add(cr->imports, rec);
    rc = do_import(c, json_object_array_get_idx(defs_imports, i), rec, cr->tcs);
  }
  cr->t_imports = sbu_now_s() - t0;
  if (!rc) rc = stage_toolchains(c, cr->tcs);
  t0 = sbu_now_s();
  if (!rc) rc = stage_packages(c, cr->versions);
  cr->t_pkgs = sbu_now_s() - t0;
  return rc;
}

/* The manifest's "extra": the definition (file and hash), what it says of
 * itself, and the creation's records. */
static json_object *extra_of(ctx *c, const creation *cr) {
  json_object *timings = json_object_new_object(), *extra = json_object_new_object();
  json_object_object_add(timings, "debootstrap_s", sbf_json_seconds(cr->t_deb));
  if (cr->deb_reused) json_object_object_add(timings, "debootstrap_reused", json_object_new_boolean(true));
  json_object_object_add(timings, "imports_s", sbf_json_seconds(cr->t_imports));
  json_object_object_add(timings, "package_versions_s", sbf_json_seconds(cr->t_pkgs));
  SBU_AUTOFREE char *dh = sha256_file(c->def_file);
  json_object *defrec = json_object_new_object();
  json_object_object_add(defrec, "file", json_object_new_string(c->def_file));
  json_object_object_add(defrec, "sha256", dh ? json_object_new_string(dh) : NULL);
  json_object_object_add(extra, "description", json_object_get(json_object_object_get(c->def, "description")));
  json_object_object_add(extra, "definition", defrec);
  json_object_object_add(extra, "links", json_object_get(json_object_object_get(c->def, "links")));
  json_object_object_add(extra, "imports", json_object_get(cr->imports));
  json_object_object_add(extra, "toolchains", json_object_get(cr->tcs));
  json_object_object_add(extra, "created_by", json_object_new_string("surgebox " SURGEBOX_VERSION));
  json_object_object_add(extra, "timings", timings);
  json_object_object_add(extra, "notes", json_object_get(json_object_object_get(c->def, "notes")));
  return extra;
}

/* The stages, then the tree hashed and the manifest written (sealed). */
static int make_profile(ctx *c, double t_start) {
  const char *name = c->name;
  creation cr = {.origin = origin_of(c), .versions = json_object_new_object(), .imports = json_object_new_array(),
                 .tcs = json_object_new_array()};
  int rc = run_stages(c, &cr);
  if (!rc) {
    if (!c->o->quiet) say(c, "hashing the rootfs");
    SBU_AUTOPUT json_object *extra = extra_of(c, &cr);
    sbf_tree_hash h;
    rc = sbf_profile_seal(c->o->dir, name, cr.origin, cr.versions, extra, &h, c->err, c->errn);
    if (!rc) {
      double total = sbu_now_s() - t_start;
      char size[32];
      sbf_human_size(h.size_bytes, size);
      say(c, "hash: %llu files, %s in %.1f s (%s)", (unsigned long long)h.files, size, h.seconds, h.content_hash);
      printf("profile %s created in %.1f s (debootstrap %.1f s%s, imports %.1f s, package list %.1f s, hash %.1f s): "
             "%s, %llu files, %s\n",
             name, total, cr.t_deb, cr.deb_reused ? " earlier" : "", cr.t_imports, cr.t_pkgs, h.seconds, c->path,
             (unsigned long long)h.files, size);
    }
  }
  json_object_put(cr.origin);
  json_object_put(cr.versions);
  json_object_put(cr.imports);
  json_object_put(cr.tcs);
  return rc;
}

/* Checks before any change: root, the profile's directory, its log. */
static int prepare_creation(ctx *c) {
  if (geteuid() != 0) return fail(c, -EPERM, "creating a profile needs root (debootstrap and chroot)");
  if (sb_mkdir_p(c->path, 0755) < 0 && errno != EEXIST) return fail(c, -errno, "mkdir %s: %s", c->path, strerror(errno));
  c->log_fd = open(c->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (c->log_fd < 0) return fail(c, -errno, "cannot write %s: %s", c->log, strerror(errno));
  char started[32];
  sbf_iso_now(started);
  dprintf(c->log_fd, "== %s: surgebox %s profile create %s\n", started, SURGEBOX_VERSION, c->name);
  return 0;
}

/* Under the profile's lock: an existing one answered, else made. */
static int create_locked(ctx *c, double t_start) {
  const sbf_create_opts *o = c->o;
  snprintf(c->path, sizeof c->path, "%s/%s", o->dir, c->name);
  snprintf(c->root, sizeof c->root, "%s/rootfs", c->path);
  snprintf(c->log, sizeof c->log, "%s/create.log", c->path);
  SBU_AUTOCLOSE int lock = sbf_lock(o->dir, c->name);
  if (lock < 0) return fail(c, lock, "cannot lock %s/.%s.lock: %s", o->dir, c->name, strerror(-lock));
  char manifest[4300];
  snprintf(manifest, sizeof manifest, "%s/manifest.json", c->path);
  int rc = 0;
  if (!existing_profile(c, manifest, &rc) && !(rc = prepare_creation(c))) rc = make_profile(c, t_start);
  return rc;
}

int sbf_profile_create(const char *name, const sbf_create_opts *o, char *err, size_t n) {
  ctx c = {.name = name, .o = o, .err = err, .errn = n, .log_fd = -1};
  double t_start = sbu_now_s();
  if (!sbf_name_ok(name) || strcmp(name, "host") == 0) return fail(&c, -EINVAL, "bad profile name \"%s\"", name);
  snprintf(c.def_file, sizeof c.def_file, "%s/%s.json", o->defs, name);
  if (access(c.def_file, R_OK) != 0) {
    return fail(&c, -ENOENT, "no definition for profile %s (%s); definitions are in %s", name, c.def_file, o->defs);
  }
  c.def = json_object_from_file(c.def_file);
  if (!c.def) return fail(&c, -EINVAL, "%s: not valid JSON", c.def_file);
  int rc = check_def(&c);
  if (!rc) rc = create_locked(&c, t_start);
  if (c.log_fd >= 0) close(c.log_fd);
  json_object_put(c.def);
  return rc;
}
