/* Profiles: where they live, opening one (manifest checks and verification),
 * sealing a new one, and small helpers the create command shares. */
#include "atomic_write.h"
#include "fs_tree.h"
#include "nearest.h"
#include "profile.h"
#include "profile_internal.h"
#include "runtime_paths.h"
#include "toolchain.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SURGEBOX_TOOLCHAINS_SOURCE_DIR
#define SURGEBOX_TOOLCHAINS_SOURCE_DIR "/usr/share/surgebox/toolchains"
#endif
/* toolchains/defs -> toolchains/profiles */
#define SURGEBOX_PROFILE_DEFS_SOURCE_DIR SURGEBOX_TOOLCHAINS_SOURCE_DIR "/../profiles"

const char *sbf_default_dir(void) { return sbu_profiles_dir(); }

const char *sbf_defs_dir(void) {
  static _Thread_local char buf[4096]; /* the daemon opens profiles on its thread pool */
  const char *env = getenv("SURGEBOX_PROFILE_DEFS");
  if (env && *env) return env;
  if (sbt_installed_dir("profiles", buf, sizeof buf)) return buf;
  if (realpath(SURGEBOX_PROFILE_DEFS_SOURCE_DIR, buf) && access(buf, R_OK) == 0) return buf;
  return "/usr/share/surgebox/profiles";
}

/* Names in dir: its subdirectories holding manifest.json (profiles), or its
 * NAME.json files (definitions), comma-separated into list; the nearest to
 * word into near (when none is yet). */
static void names_in(const char *dir, bool defs, const char *word, char *list, size_t cap, char *near, size_t near_cap) {
  DIR *d = opendir(dir);
  const char *cands[64];
  char names[64][SBF_NAME_MAX + 8];
  size_t nc = 0;
  for (struct dirent *e; d && (e = readdir(d)) && nc < 64;) {
    char nm[SBF_NAME_MAX + 8], file[4400];
    size_t len = strlen(e->d_name);
    if (e->d_name[0] == '.' || len > SBF_NAME_MAX + 5) continue;
    snprintf(nm, sizeof nm, "%s", e->d_name);
    if (defs) {
      if (len < 6 || strcmp(nm + len - 5, ".json") != 0) continue;
      nm[len - 5] = '\0';
    } else {
      snprintf(file, sizeof file, "%s/%s/manifest.json", dir, nm);
      if (access(file, F_OK) != 0) continue;
    }
    snprintf(names[nc], sizeof names[nc], "%s", nm);
    cands[nc] = names[nc];
    snprintf(list + strlen(list), cap - strlen(list), "%s%s", nc ? ", " : "", nm);
    nc++;
  }
  if (d) closedir(d);
  const char *best = sbu_nearest(word, cands, nc);
  if (best && !near[0]) snprintf(near, near_cap, "%s", best);
  if (!nc) snprintf(list, cap, "none");
}

/* No profile NAME in dir: create it when a definition of it ships, else
 * what there is (never `profile create NAME`, which would fail). */
static void unknown_profile(const char *name, const char *dir, char *err, size_t n) {
  char def[4400];
  snprintf(def, sizeof def, "%s/%s.json", sbf_defs_dir(), name);
  if (access(def, F_OK) == 0) {
    snprintf(err, n, "no profile %s in %s: create it with `surgebox profile create %s`", name, dir, name);
    return;
  }
  char have[1024] = "", defs[1024] = "", near[SBF_NAME_MAX + 8] = "";
  names_in(dir, false, name, have, sizeof have, near, sizeof near);
  names_in(sbf_defs_dir(), true, name, defs, sizeof defs, near, sizeof near);
  char mean[128] = "";
  if (near[0]) snprintf(mean, sizeof mean, ": did you mean %s?", near);
  snprintf(err, n, "no profile %s in %s and no definition of it%s (profiles there: %s; definitions: %s; "
           "surgebox profile list)", name, dir, mean, have, defs);
}

bool sbf_name_ok(const char *name) {
  if (!name || !isalnum((unsigned char)name[0]) || strlen(name) > SBF_NAME_MAX) return false;
  for (const char *s = name; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr("._+-", *s)) return false;
  return true;
}

/* ---- small helpers ---- */
void sbf_iso_now(char out[32]) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

bool sbf_iso_ok(const char *s) {
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  const char *end = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
  return end && (strcmp(end, "Z") == 0 || (strlen(end) == 6 && (end[0] == '+' || end[0] == '-')));
}

bool sbf_hash_ok(const char *s) {
  if (!s || strncmp(s, "sha256:", 7) != 0 || strlen(s) != 7 + 64) return false;
  for (const char *p = s + 7; *p; p++)
    if (!isdigit((unsigned char)*p) && !(*p >= 'a' && *p <= 'f')) return false;
  return true;
}

json_object *sbf_json_seconds(double s) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.3f", s);
  return json_object_new_double_s(s, buf);
}

void sbf_human_size(uint64_t bytes, char out[32]) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, u++;
  if (u == 0) snprintf(out, 32, "%llu B", (unsigned long long)bytes);
  else snprintf(out, 32, "%.2f %s", v, units[u]);
}

int sbf_run(const char *const *argv, int out_fd, int err_fd, char **captured) {
  int pfd[2] = {-1, -1};
  if (captured) {
    *captured = NULL;
    if (out_fd < 0 && pipe2(pfd, O_CLOEXEC) < 0) return -errno;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    if (pfd[0] >= 0) close(pfd[0]), close(pfd[1]);
    return -e;
  }
  if (pid == 0) {
    int o = pfd[1] >= 0 ? pfd[1] : out_fd;
    if (o >= 0 && dup2(o, 1) < 0) _exit(127);
    if (err_fd >= 0 && dup2(err_fd, 2) < 0) _exit(127);
    int dn = open("/dev/null", O_RDONLY);
    if (dn >= 0) dup2(dn, 0);
    signal(SIGPIPE, SIG_DFL);
    /* debootstrap and chroot live in sbin, which a daemon's PATH may lack */
    const char *path = getenv("PATH");
    if (!path || !strstr(path, "/usr/sbin")) {
      char np[4096];
      snprintf(np, sizeof np, "%s%s/usr/local/sbin:/usr/sbin:/sbin:/usr/bin:/bin", path ? path : "", path ? ":" : "");
      setenv("PATH", np, 1);
    }
    execvp(argv[0], (char *const *)argv);
    dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  if (pfd[0] >= 0) {
    close(pfd[1]);
    size_t len = 0, cap = 65536;
    char *buf = malloc(cap);
    for (;;) {
      if (buf && len + 4096 > cap) {
        char *nb = realloc(buf, cap * 2);
        if (!nb) free(buf);
        buf = nb, cap *= 2;
      }
      char scratch[4096];
      ssize_t r = read(pfd[0], buf ? buf + len : scratch, buf ? cap - len - 1 : sizeof scratch);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      len += buf ? (size_t)r : 0;
    }
    close(pfd[0]);
    if (buf) buf[len] = '\0';
    *captured = buf;
  }
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -errno;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* /proc/self/mountinfo field 5 is the mount point, octal-escaped. */
static void unescape(char *s) {
  char *o = s;
  for (char *p = s; *p; p++) {
    if (p[0] == '\\' && isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) && isdigit((unsigned char)p[3])) {
      *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
      p += 3;
    } else {
      *o++ = *p;
    }
  }
  *o = '\0';
}

int sbf_unmount_under(const char *path) {
  char real[PATH_MAX];
  if (!realpath(path, real)) return errno == ENOENT ? 0 : -errno;
  size_t rl = strlen(real);
  int total = 0;
  for (int round = 0; round < 16; round++) {
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f) return -errno;
    char line[8192], best[PATH_MAX] = "";
    while (fgets(line, sizeof line, f)) {
      char mp[PATH_MAX];
      if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1) continue;
      unescape(mp);
      if (strncmp(mp, real, rl) != 0 || (mp[rl] != '/' && mp[rl] != '\0')) continue;
      if (strlen(mp) > strlen(best)) snprintf(best, sizeof best, "%s", mp);
    }
    fclose(f);
    if (!*best) return total;
    if (umount2(best, MNT_DETACH) < 0) return -errno;
    total++;
  }
  return total;
}

int sbf_lock(const char *dir, const char *name) {
  char path[4096];
  if (sb_mkdir_p(dir, 0755) < 0 && errno != EEXIST) return -errno;
  snprintf(path, sizeof path, "%s/.%s.lock", dir, name);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return -errno;
  if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
    fprintf(stderr, "profile %s: waiting for another surgebox working on it (%s)\n", name, path);
    if (flock(fd, LOCK_EX) < 0) {
      int e = errno;
      close(fd);
      return -e;
    }
  }
  return fd;
}

int sbf_enter_root(const char *root, char *err, size_t n) {
  char path[PATH_MAX];
  struct stat st;
  const char *step = "unshare(CLONE_NEWNS)";
  if (unshare(CLONE_NEWNS) < 0) goto fail;
  step = "make / private";
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) goto fail;
  step = "bind the rootfs";
  if (mount(root, root, NULL, MS_BIND | MS_REC, NULL) < 0) goto fail;
  step = "remount the rootfs read-only";
  if (mount(NULL, root, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID, NULL) < 0) goto fail;
  snprintf(path, sizeof path, "%s/proc", root);
  step = "mount /proc";
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
      mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    goto fail;
  snprintf(path, sizeof path, "%s/tmp", root);
  step = "mount a tmpfs on /tmp";
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
      mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "size=256m,mode=1777") < 0)
    goto fail;
  step = "chroot";
  if (chroot(root) < 0 || chdir("/") < 0) goto fail;
  return 0;
fail:;
  int e = errno;
  snprintf(err, n, "entering %s: %s: %s", root, step, strerror(e));
  return -e;
}

/* ---- listing diff (names what changed after a failed full verify) ---- */
typedef struct {
  char **lines;
  size_t n;
} lines_t;

static int read_lines(const char *path, lines_t *l) {
  memset(l, 0, sizeof *l);
  FILE *f = fopen(path, "re");
  if (!f) return -1;
  char *line = NULL;
  size_t cap = 0, alloc = 0;
  ssize_t r;
  while ((r = getline(&line, &cap, f)) > 0) {
    if (line[r - 1] == '\n') line[r - 1] = '\0';
    if (l->n == alloc) {
      alloc = alloc ? alloc * 2 : 4096;
      char **nl = realloc(l->lines, alloc * sizeof *nl);
      if (!nl) break;
      l->lines = nl;
    }
    l->lines[l->n++] = strdup(line);
  }
  free(line);
  fclose(f);
  return 0;
}

static void free_lines(lines_t *l) {
  for (size_t i = 0; i < l->n; i++) free(l->lines[i]);
  free(l->lines);
}

/* "<hex> <mode> <size> <path>" -> path */
static const char *line_path(const char *s) {
  for (int k = 0; k < 3 && s; k++) {
    s = strchr(s, ' ');
    if (s) s++;
  }
  return s ? s : "";
}

void sbf_listing_diff(const char *expected_path, const char *actual_path, int max, char *out, size_t n) {
  lines_t a, b;
  out[0] = '\0';
  if (read_lines(expected_path, &a) < 0) {
    snprintf(out, n, "(no stored listing %s to compare with)", expected_path);
    return;
  }
  read_lines(actual_path, &b);
  size_t i = 0, j = 0, len = 0;
  int shown = 0, total = 0;
  while (i < a.n || j < b.n) {
    int c = i >= a.n ? 1 : j >= b.n ? -1 : strcmp(line_path(a.lines[i]), line_path(b.lines[j]));
    const char *what = NULL, *p = NULL;
    if (c == 0) {
      if (strcmp(a.lines[i], b.lines[j]) != 0) what = "changed", p = line_path(a.lines[i]);
      i++, j++;
    } else if (c < 0) {
      what = "missing", p = line_path(a.lines[i++]);
    } else {
      what = "added", p = line_path(b.lines[j++]);
    }
    if (!what) continue;
    total++;
    if (shown < max && len < n) {
      len += (size_t)snprintf(out + len, n - len, "%s%s /%s", shown ? ", " : "", what, p);
      shown++;
    }
  }
  if (total > shown && len < n) snprintf(out + len, n - len, " (and %d more)", total - shown);
  free_lines(&a);
  free_lines(&b);
}

/* ---- manifest ---- */
static int bad(char *err, size_t n, const char *file, const char *field, const char *why) {
  snprintf(err, n, "%s: field \"%s\": %s", file, field, why);
  return -EINVAL;
}

static const char *get_str(json_object *o, const char *key) {
  json_object *v;
  return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                            : NULL;
}

static int check_manifest(sbf_profile *p, const char *file, char *err, size_t n) {
  json_object *m = p->manifest, *v, *o;
  if (!json_object_is_type(m, json_type_object)) return bad(err, n, file, "(top)", "must be an object");
  const char *name = get_str(m, "name");
  if (!name) return bad(err, n, file, "name", "missing or not a string");
  if (strcmp(name, p->name) != 0) return bad(err, n, file, "name", "does not match the profile's directory");
  if (json_object_object_get_ex(m, "format", &v) && json_object_get_int(v) != 1)
    return bad(err, n, file, "format", "unsupported (this surgebox reads format 1)");
  if (!json_object_object_get_ex(m, "origin", &o) || !json_object_is_type(o, json_type_object))
    return bad(err, n, file, "origin", "missing or not an object");
  static const char *const ofields[] = {"suite", "mirror", "variant", NULL};
  for (const char *const *f = ofields; *f; f++) {
    const char *s = get_str(o, *f);
    if (!s || !*s) {
      char what[64];
      snprintf(what, sizeof what, "origin.%s", *f);
      return bad(err, n, file, what, "missing or not a non-empty string");
    }
  }
  if (!json_object_object_get_ex(o, "packages", &v) || !json_object_is_type(v, json_type_array))
    return bad(err, n, file, "origin.packages", "missing or not a list");
  for (size_t i = 0; i < json_object_array_length(v); i++)
    if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
      return bad(err, n, file, "origin.packages", "must hold strings");
  if (!json_object_object_get_ex(m, "package_versions", &o) || !json_object_is_type(o, json_type_object))
    return bad(err, n, file, "package_versions", "missing or not an object");
  if (json_object_object_length(o) == 0) return bad(err, n, file, "package_versions", "empty");
  json_object_object_foreach(o, pk, pv) {
    (void)pk;
    if (!json_object_is_type(pv, json_type_string)) return bad(err, n, file, "package_versions", "values must be strings");
  }
  p->created = get_str(m, "created");
  if (!sbf_iso_ok(p->created)) return bad(err, n, file, "created", "missing or not an ISO 8601 time");
  p->content_hash = get_str(m, "content_hash");
  if (!sbf_hash_ok(p->content_hash)) return bad(err, n, file, "content_hash", "missing or not \"sha256:<64 hex>\"");
  if (json_object_object_get_ex(m, "quick_hash", &v)) {
    p->quick_hash = get_str(m, "quick_hash");
    if (!sbf_hash_ok(p->quick_hash)) return bad(err, n, file, "quick_hash", "not \"sha256:<64 hex>\"");
  }
  if (json_object_object_get_ex(m, "files", &v)) p->files = (uint64_t)json_object_get_int64(v);
  if (json_object_object_get_ex(m, "size_bytes", &v)) p->size_bytes = (uint64_t)json_object_get_int64(v);
  return 0;
}

int sbf_profile_open_mode(const char *dir, const char *name, sbf_verify_mode mode, sbf_profile *out, char *err,
                          size_t n) {
  memset(out, 0, sizeof *out);
  if (!name || strcmp(name, "host") == 0) {
    snprintf(out->name, sizeof out->name, "host");
    out->is_host = true;
    return 0;
  }
  if (!sbf_name_ok(name)) {
    snprintf(err, n, "bad profile name \"%s\" (letters, digits and ._+- only, at most %d)", name, SBF_NAME_MAX);
    return -EINVAL;
  }
  if (!dir) dir = sbf_default_dir();
  snprintf(out->name, sizeof out->name, "%s", name);
  if ((size_t)snprintf(out->path, sizeof out->path, "%s/%s", dir, name) >= sizeof out->path - 32) {
    snprintf(err, n, "profile directory path too long");
    return -ENAMETOOLONG;
  }
  snprintf(out->root, sizeof out->root, "%s/rootfs", out->path);
  char file[4200];
  snprintf(file, sizeof file, "%s/manifest.json", out->path);
  struct stat st;
  if (stat(file, &st) < 0) {
    int e = errno;
    if (e == ENOENT && stat(out->path, &st) == 0)
      snprintf(err, n, "profile %s in %s is incomplete (no manifest.json): run `surgebox profile create %s` to finish it",
               name, dir, name);
    else if (e == ENOENT)
      unknown_profile(name, dir, err, n);
    else
      snprintf(err, n, "%s: %s", file, strerror(e));
    return -e;
  }
  out->manifest = json_object_from_file(file);
  if (!out->manifest) {
    snprintf(err, n, "%s: not valid JSON", file);
    return -EINVAL;
  }
  int rc = check_manifest(out, file, err, n);
  if (!rc && (stat(out->root, &st) < 0 || !S_ISDIR(st.st_mode))) {
    snprintf(err, n, "profile %s: %s is missing", name, out->root);
    rc = -ENOENT;
  }
  if (!rc && mode != SBF_VERIFY_NONE) rc = sbf_profile_verify(out, mode, err, n);
  if (rc) sbf_profile_close(out);
  return rc;
}

int sbf_profile_open(const char *dir, const char *name, sbf_profile *out, char *err, size_t n) {
  return sbf_profile_open_mode(dir, name, SBF_VERIFY_QUICK, out, err, n);
}

void sbf_profile_close(sbf_profile *p) {
  if (p->manifest) json_object_put(p->manifest);
  p->manifest = NULL;
  p->created = p->content_hash = p->quick_hash = NULL;
}

const char *sbf_profile_root(const sbf_profile *p) { return p->is_host ? NULL : p->root; }

int sbf_profile_toolchains_dir(const sbf_profile *p, char *out, size_t n) {
  int len = p->is_host ? snprintf(out, n, "%s", sbt_default_dir()) : snprintf(out, n, "%s/toolchains", p->path);
  return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

int sbf_profile_verify(const sbf_profile *p, sbf_verify_mode mode, char *err, size_t n) {
  if (p->is_host || mode == SBF_VERIFY_NONE) return 0;
  if (mode == SBF_VERIFY_QUICK && !p->quick_hash) mode = SBF_VERIFY_FULL;
  sbf_tree_hash h;
  char tmp[] = "/tmp/surgebox-verify-XXXXXX";
  bool full = mode == SBF_VERIFY_FULL;
  if (full) {
    int fd = mkstemp(tmp);
    if (fd < 0) {
      snprintf(err, n, "mkstemp: %s", strerror(errno));
      return -errno;
    }
    close(fd);
  }
  int rc = sbf_hash_tree(p->root, full, full ? tmp : NULL, &h, err, n);
  if (rc) {
    if (full) unlink(tmp);
    return rc;
  }
  if (full && strcmp(h.content_hash, p->content_hash) != 0) {
    char stored[4200], diff[1024];
    snprintf(stored, sizeof stored, "%s/rootfs.sha256", p->path);
    sbf_listing_diff(stored, tmp, 5, diff, sizeof diff);
    snprintf(err, n, "profile %s does not match its manifest (content %s, expected %s): %s", p->name,
             h.content_hash, p->content_hash, diff);
    rc = -EBADMSG;
  } else if (!full && strcmp(h.quick_hash, p->quick_hash) != 0) {
    snprintf(err, n,
             "profile %s changed since it was sealed (quick hash differs: a file was added, removed or touched); "
             "`surgebox profile verify %s` names what",
             p->name, p->name);
    rc = -EBADMSG;
  }
  if (full) unlink(tmp);
  return rc;
}

int sbf_profile_refresh_quick(sbf_profile *p, char *err, size_t n) {
  if (p->is_host) return 0;
  int rc = sbf_profile_verify(p, SBF_VERIFY_FULL, err, n);
  if (rc) return rc;
  sbf_tree_hash h;
  if ((rc = sbf_hash_tree(p->root, false, NULL, &h, err, n))) return rc;
  char file[4200], now[32];
  snprintf(file, sizeof file, "%s/manifest.json", p->path);
  sbf_iso_now(now);
  json_object_object_add(p->manifest, "quick_hash", json_object_new_string(h.quick_hash));
  json_object_object_add(p->manifest, "quick_hash_refreshed", json_object_new_string(now));
  p->quick_hash = get_str(p->manifest, "quick_hash");
  p->created = get_str(p->manifest, "created");
  p->content_hash = get_str(p->manifest, "content_hash");
  if (sbu_write_json_atomic(file, p->manifest,
                            JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE) < 0) {
    int e = errno ? errno : EIO;
    snprintf(err, n, "cannot write %s: %s", file, strerror(e));
    return -e;
  }
  return 0;
}

int sbf_profile_seal(const char *dir, const char *name, json_object *origin, json_object *package_versions,
                     json_object *extra, sbf_tree_hash *hash_out, char *err, size_t n) {
  if (!dir) dir = sbf_default_dir();
  if (!sbf_name_ok(name)) {
    snprintf(err, n, "bad profile name \"%s\"", name);
    return -EINVAL;
  }
  char path[4096], root[4200], listing[4200], manifest[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(root, sizeof root, "%s/rootfs", path);
  snprintf(listing, sizeof listing, "%s/rootfs.sha256", path);
  snprintf(manifest, sizeof manifest, "%s/manifest.json", path);
  unlink(manifest); /* not sealed while the rootfs is hashed */
  sbf_tree_hash h;
  int rc = sbf_hash_tree(root, true, listing, &h, err, n);
  if (rc) return rc;
  if (hash_out) *hash_out = h;
  char created[32];
  sbf_iso_now(created);
  json_object *m = json_object_new_object();
  json_object_object_add(m, "name", json_object_new_string(name));
  json_object_object_add(m, "format", json_object_new_int(1));
  json_object_object_add(m, "created", json_object_new_string(created));
  json_object *copy = NULL;
  if (origin) json_object_deep_copy(origin, &copy, NULL);
  json_object_object_add(m, "origin", copy ? copy : json_object_new_object());
  json_object_object_add(m, "content_hash", json_object_new_string(h.content_hash));
  json_object_object_add(m, "quick_hash", json_object_new_string(h.quick_hash));
  json_object_object_add(m, "files", json_object_new_int64((int64_t)h.files));
  json_object_object_add(m, "size_bytes", json_object_new_int64((int64_t)h.size_bytes));
  json_object_object_add(m, "hash_s", sbf_json_seconds(h.seconds));
  if (extra) {
    json_object_object_foreach(extra, k, v) {
      if (json_object_object_get_ex(m, k, NULL) || strcmp(k, "package_versions") == 0) continue;
      json_object *c = NULL;
      if (v) json_object_deep_copy(v, &c, NULL);
      json_object_object_add(m, k, c);
    }
  }
  copy = NULL;
  if (package_versions) json_object_deep_copy(package_versions, &copy, NULL);
  json_object_object_add(m, "package_versions", copy ? copy : json_object_new_object());
  if (sbu_write_json_atomic(manifest, m, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE) < 0) {
    rc = errno ? -errno : -EIO;
    snprintf(err, n, "cannot write %s: %s", manifest, strerror(-rc));
  }
  json_object_put(m);
  return rc;
}
