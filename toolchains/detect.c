/* Detection: which declared binaries exist, their versions, and which
 * option values each accepts (probes run in parallel). Host toolchain
 * binaries are trusted: they run here without a sandbox, only to print a
 * version or to compile /dev/null. Results are cached in a JSON file keyed
 * by path, real path, mtime and size, so a restart costs nothing. */
#include "thread.h"
#include "atomic_write.h"
#include "cleanup.h"
#include "clock.h"
#include "profile.h"
#include "toolchain.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROBE_TIMEOUT_MS 30000
#define MAX_PARALLEL 16

void sbt_defs_free(sbt_def *defs, size_t n);

/* Start argv with stdout+stderr to out_fd (or /dev/null when < 0). */
static pid_t spawn(char **argv, int out_fd) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  int null = open("/dev/null", O_RDWR);
  dup2(null, 0);
  dup2(out_fd >= 0 ? out_fd : null, 1);
  dup2(out_fd >= 0 ? out_fd : null, 2);
  setenv("LC_ALL", "C", 1);
  execv(argv[0], argv);
  _exit(127);
}

/* Wait for pids (0 entries are skipped) until all exit or the deadline;
 * status[i] = exit code, or -1 when killed or failed. */
static void wait_all(pid_t *pids, int *status, size_t n, uint64_t deadline) {
  size_t left = 0;
  for (size_t i = 0; i < n; i++) left += pids[i] > 0;
  while (left) {
    for (size_t i = 0; i < n; i++) {
      if (pids[i] <= 0) continue;
      int st;
      pid_t r = waitpid(pids[i], &st, WNOHANG);
      if (r == pids[i] || (r < 0 && errno == ECHILD)) {
        status[i] = r == pids[i] && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        pids[i] = 0;
        left--;
      }
    }
    if (!left) break;
    if (sbu_now_ns() / 1000000 > deadline) {
      for (size_t i = 0; i < n; i++)
        if (pids[i] > 0) {
          kill(pids[i], SIGKILL);
          waitpid(pids[i], NULL, 0);
          status[i] = -1;
          pids[i] = 0;
        }
      break;
    }
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  }
}

static char **expand_argv(char *const *tmpl, const sbt_vars *v) {
  size_t n = 0;
  while (tmpl[n]) n++;
  char **out = calloc(n + 1, sizeof *out);
  for (size_t i = 0; out && i < n; i++) out[i] = sbt_expand_string(tmpl[i], v);
  return out;
}

static void free_strv(char **v) {
  for (char **p = v; p && *p; p++) free(*p);
  free(v);
}

/* Run argv (a template) and return what regex's group matched in its
 * stdout+stderr (the exit status does not matter: mcs prints its language
 * range in an error), or NULL. */
static char *run_match(char *const *tmpl, const char *regex, int group, const sbt_vars *v) {
  char tmp[] = "/tmp/surgebox-version-XXXXXX";
  int fd = mkstemp(tmp);
  if (fd < 0) return NULL;
  unlink(tmp);
  char **argv = expand_argv(tmpl, v);
  pid_t pid = argv ? spawn(argv, fd) : -1;
  int status = -1;
  if (pid > 0) wait_all(&pid, &status, 1, sbu_now_ns() / 1000000 + PROBE_TIMEOUT_MS);
  free_strv(argv);
  char out[8192] = "";
  ssize_t n = pread(fd, out, sizeof out - 1, 0);
  close(fd);
  if (n <= 0) return NULL;
  out[n] = '\0';
  return sbt_regex_group(regex, group, out);
}

static char *read_version(const sbt_def *d, const sbt_vars *v) {
  return run_match(d->version_argv, d->version_regex, 1, v);
}

static bool under_default_binds(const char *path) {
  static const char *const roots[] = {"/usr/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/etc/", NULL};
  for (const char *const *r = roots; *r; r++)
    if (strncmp(path, *r, strlen(*r)) == 0) return true;
  return false;
}

/* "{libraries}": each declared library that is a readable regular file
 * the sandbox can see (under the default binds), after the separator. */
static char *find_libraries(const sbt_def *d) {
  size_t len = 1;
  for (char **p = d->library_paths; p && *p; p++) len += strlen(d->library_join) + strlen(*p);
  char *out = calloc(len, 1);
  for (char **p = d->library_paths; out && p && *p; p++) {
    char real[PATH_MAX];
    struct stat st;
    if (!realpath(*p, real) || !under_default_binds(real) || !under_default_binds(*p) || stat(real, &st) < 0 ||
        !S_ISREG(st.st_mode) || access(real, R_OK) < 0)
      continue;
    strcat(out, d->library_join);
    strcat(out, *p);
  }
  return out;
}

static char *name_for(const char *tmpl, const char *path, const char *version) {
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  char *major = sbt_version_part(version, 1), *mm = sbt_version_part(version, 2);
  char out[256] = "";
  size_t o = 0;
  for (const char *p = tmpl; *p && o < sizeof out - 1;) {
    const char *val = NULL;
    size_t skip = 0;
    if (!strncmp(p, "{basename}", 10)) val = base, skip = 10;
    else if (!strncmp(p, "{version}", 9)) val = version, skip = 9;
    else if (!strncmp(p, "{major_minor}", 13)) val = mm, skip = 13;
    else if (!strncmp(p, "{major}", 7)) val = major, skip = 7;
    if (val) {
      o += (size_t)snprintf(out + o, sizeof out - o, "%s", val);
      p += skip;
    } else {
      out[o++] = *p++;
    }
  }
  out[o < sizeof out ? o : sizeof out - 1] = '\0';
  free(major);
  free(mm);
  return strdup(out);
}

/* A detection that runs what the cache did not know (versions, option
 * probes) and takes more than a second says once, on stderr, what it is doing. */
/* Per thread: the daemon detects a profile's toolchains on libuv's pool
 * while its loop may detect the host's (SIGHUP). */
static _Thread_local uint64_t detect_t0;
static _Thread_local bool detect_announced = true; /* only sbt_registry_detect arms it */
static _Thread_local const char *detect_cache_file;
static _Thread_local bool detect_missed; /* something had to be run */
static void announce_if_slow(void) {
  if (detect_announced || !detect_missed || sbu_now_ns() / 1000000 - detect_t0 < 1000) return;
  detect_announced = true;
  if (detect_cache_file && detect_cache_file[0])
    fprintf(stderr, "surgebox: detecting the installed toolchains and their options (once: cached in %s)\n",
            detect_cache_file);
  else
    fprintf(stderr, "surgebox: detecting the installed toolchains and their options (no writable cache directory)\n");
}

/* ---- the cache file ---- */
static json_object *cache_entry(json_object *cache, const char *bin, const char *real, const struct stat *st) {
  json_object *e, *v;
  if (!cache || !json_object_object_get_ex(cache, bin, &e)) return NULL;
  if (!json_object_object_get_ex(e, "real", &v) || strcmp(json_object_get_string(v), real) != 0) return NULL;
  uint64_t mtime = (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;
  if (!json_object_object_get_ex(e, "mtime_ns", &v) || (uint64_t)json_object_get_int64(v) != mtime) return NULL;
  if (!json_object_object_get_ex(e, "size", &v) || json_object_get_int64(v) != (int64_t)st->st_size) return NULL;
  return e;
}

/* ---- version and level commands, run in parallel before the serial pass ----
 * A first detection ran them one by one (14 s here, kotlinc -version alone
 * 4 s); now every binary the cache does not know has its commands started
 * MAX_PARALLEL at a time, and add_toolchain takes the results. */
typedef struct {
  const sbt_def *d;
  char *bin, *real, *bin_dir;
  bool run_version, run_level; /* what the cache did not know */
  char *version, *level;       /* what they printed that the regexes matched */
} prefetched;

typedef struct {
  prefetched *v;
  size_t n;
} prefetch;

static const prefetched *prefetch_find(const prefetch *pf, const sbt_def *d, const char *bin) {
  for (size_t i = 0; pf && i < pf->n; i++)
    if (pf->v[i].d == d && !strcmp(pf->v[i].bin, bin)) return &pf->v[i];
  return NULL;
}

static bool cached_level(json_object *e, const sbt_def *d, json_object **v) {
  json_object *lr = NULL; /* cached for this very regex only: a file may have changed since */
  return e && json_object_object_get_ex(e, "level", v) && *v && json_object_object_get_ex(e, "level_regex", &lr) && lr &&
         !strcmp(json_object_get_string(lr), d->level_regex);
}

/* what the detection cache keeps of one binary (probes are added later) */
static json_object *new_cache_entry(const char *real, const struct stat *st, const char *version, const char *level_raw,
                                    const sbt_def *d) {
  json_object *ne = json_object_new_object();
  json_object_object_add(ne, "real", json_object_new_string(real));
  json_object_object_add(ne, "mtime_ns", json_object_new_int64((int64_t)((uint64_t)st->st_mtim.tv_sec * 1000000000ull +
                                                                          (uint64_t)st->st_mtim.tv_nsec)));
  json_object_object_add(ne, "size", json_object_new_int64((int64_t)st->st_size));
  json_object_object_add(ne, "version", json_object_new_string(version));
  if (level_raw) {
    json_object_object_add(ne, "level", json_object_new_string(level_raw));
    json_object_object_add(ne, "level_regex", json_object_new_string(d->level_regex));
  }
  return ne;
}

static int add_toolchain(sbt_registry *r, const sbt_def *d, const sbt_binary *b, const char *bin, json_object *cache,
                         json_object *new_cache, const prefetch *pf) {
  char real[PATH_MAX];
  struct stat st;
  if (!realpath(bin, real) || stat(real, &st) < 0 || !S_ISREG(st.st_mode) || access(real, X_OK) < 0) return 0;
  json_object *e = cache_entry(cache, bin, real, &st), *v;
  const prefetched *got = prefetch_find(pf, d, bin);
  SBU_AUTOFREE char *version = NULL;
  if (e && json_object_object_get_ex(e, "version", &v)) version = strdup(json_object_get_string(v));
  SBU_AUTOFREE char *bin_dir = strdup(real);
  if (!bin_dir) return -1;
  *strrchr(bin_dir, '/') = '\0';
  sbt_vars vars = {.bin = bin, .bin_real = real, .bin_dir = bin_dir};
  if (!version) {
    detect_missed = true;
    if (got && got->run_version) version = got->version ? strdup(got->version) : NULL;
    else version = read_version(d, &vars);
  }
  SBU_AUTOFREE char *level_raw = NULL;
  if (version && d->level_argv) {
    if (cached_level(e, d, &v)) level_raw = strdup(json_object_get_string(v));
    else if (got && got->run_level) level_raw = got->level ? strdup(got->level) : NULL;
    else level_raw = run_match(d->level_argv, d->level_regex, d->level_group, &vars);
  }
  if (!version) return 0; /* cannot run: not really installed */
  SBU_AUTOFREE char *name = name_for(b->name, bin, version);
  for (size_t i = 0; i < r->n_tcs; i++)
    if (strcmp(r->tcs[i].name, name) == 0) { /* first declaration wins */
      /* but remember its version: else every start runs it again */
      json_object *ne = new_cache_entry(real, &st, version, level_raw, d);
      if (!json_object_object_get_ex(new_cache, bin, NULL)) json_object_object_add(new_cache, bin, ne);
      else json_object_put(ne);
      return 0;
    }
  sbt_toolchain *t = realloc(r->tcs, (r->n_tcs + 1) * sizeof *t);
  if (!t) return -1;
  r->tcs = t;
  t = &r->tcs[r->n_tcs++];
  memset(t, 0, sizeof *t);
  t->name = sbu_take_ptr(&name);
  t->level_raw = sbu_take_ptr(&level_raw);
  t->libraries = find_libraries(d); /* not cached: a stat per library */
  t->def = d;
  t->bin = strdup(bin);
  t->bin_real = strdup(real);
  t->bin_dir = sbu_take_ptr(&bin_dir);
  t->version = sbu_take_ptr(&version);
  t->bin_mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
  t->bin_size = (uint64_t)st.st_size;
  if (!under_default_binds(real)) {
    /* <prefix>/bin/<binary>: bind the whole installation (rustup, pyenv, /opt) */
    char *prefix = strdup(t->bin_dir);
    char *slash = strrchr(prefix, '/');
    if (slash && slash != prefix) *slash = '\0';
    t->prefix_mount = prefix;
  }
  t->value_ok = calloc(d->n_options + 1, sizeof *t->value_ok);
  for (size_t o = 0; o < d->n_options; o++) {
    t->value_ok[o] = calloc(d->options[o].n_values + 1, sizeof(bool));
    for (size_t k = 0; k < d->options[o].n_values; k++) t->value_ok[o][k] = true;
  }
  /* the cache entry; probes are filled in by probe_all */
  json_object *ne = new_cache_entry(real, &st, t->version, t->level_raw, d);
  json_object *probes = NULL;
  if (e && json_object_object_get_ex(e, "probes", &probes)) json_object_object_add(ne, "probes", json_object_get(probes));
  json_object_object_add(new_cache, bin, ne);
  return 0;
}

/* Run every probe not in the cache, MAX_PARALLEL at a time. */
static void probe_all(sbt_registry *r, json_object *new_cache) {
  typedef struct {
    sbt_toolchain *t;
    size_t opt, val;
  } job;
  job *jobs = NULL;
  size_t n = 0;
  for (size_t i = 0; i < r->n_tcs; i++) {
    sbt_toolchain *t = &r->tcs[i];
    json_object *e = NULL, *probes = NULL, *po = NULL, *pv = NULL;
    json_object_object_get_ex(new_cache, t->bin, &e);
    if (e && !json_object_object_get_ex(e, "probes", &probes)) {
      probes = json_object_new_object();
      json_object_object_add(e, "probes", probes);
    }
    for (size_t o = 0; o < t->def->n_options; o++) {
      const sbt_option *opt = &t->def->options[o];
      if (!opt->probe) continue;
      if (probes && !json_object_object_get_ex(probes, opt->name, &po)) {
        po = json_object_new_object();
        json_object_object_add(probes, opt->name, po);
      }
      for (size_t k = 0; k < opt->n_values; k++) {
        if (po && json_object_object_get_ex(po, opt->values[k], &pv)) {
          t->value_ok[o][k] = json_object_get_boolean(pv);
          r->probes_cached++;
          continue;
        }
        job *nj = realloc(jobs, (n + 1) * sizeof *jobs);
        if (!nj) break;
        jobs = nj;
        jobs[n++] = (job){t, o, k};
      }
    }
  }
  if (n) detect_missed = true;
  for (size_t start = 0; start < n; start += MAX_PARALLEL) {
    size_t m = n - start < MAX_PARALLEL ? n - start : MAX_PARALLEL;
    pid_t pids[MAX_PARALLEL];
    int status[MAX_PARALLEL];
    for (size_t i = 0; i < m; i++) {
      job *j = &jobs[start + i];
      const sbt_option *opt = &j->t->def->options[j->opt];
      sbt_vars v = {.bin = j->t->bin, .bin_real = j->t->bin_real, .bin_dir = j->t->bin_dir, .value = opt->values[j->val]};
      char **argv = expand_argv(opt->probe, &v);
      pids[i] = argv ? spawn(argv, -1) : -1;
      status[i] = -1;
      free_strv(argv);
    }
    wait_all(pids, status, m, sbu_now_ns() / 1000000 + PROBE_TIMEOUT_MS);
    announce_if_slow();
    for (size_t i = 0; i < m; i++) {
      job *j = &jobs[start + i];
      bool ok = status[i] == 0;
      j->t->value_ok[j->opt][j->val] = ok;
      r->probes_run++;
      json_object *e, *probes, *po;
      if (json_object_object_get_ex(new_cache, j->t->bin, &e) && json_object_object_get_ex(e, "probes", &probes) &&
          json_object_object_get_ex(probes, j->t->def->options[j->opt].name, &po))
        json_object_object_add(po, j->t->def->options[j->opt].values[j->val], json_object_new_boolean(ok));
    }
  }
  free(jobs);
}

static void free_toolchains(sbt_registry *r) {
  for (size_t i = 0; i < r->n_tcs; i++) {
    sbt_toolchain *t = &r->tcs[i];
    free(t->name);
    free(t->bin);
    free(t->bin_real);
    free(t->bin_dir);
    free(t->version);
    free(t->prefix_mount);
    free(t->libraries);
    free(t->level_raw);
    for (size_t o = 0; t->value_ok && o < t->def->n_options; o++) free(t->value_ok[o]);
    free(t->value_ok);
  }
  free(r->tcs);
  r->tcs = NULL;
  r->n_tcs = 0;
}

/* Find every declared binary; cache_in: what an earlier detection knew
 * (may be NULL); cache_out receives what this one found. */
/* Every declared binary present: fn(ctx, def, binary, path), in declaration order. */
typedef void (*binary_fn)(void *ctx, const sbt_def *d, const sbt_binary *b, const char *path);
static void for_each_binary(const sbt_registry *r, binary_fn fn, void *ctx) {
  for (size_t i = 0; i < r->n_defs; i++) {
    const sbt_def *d = &r->defs[i];
    for (size_t b = 0; b < d->n_binaries; b++) {
      const sbt_binary *bin = &d->binaries[b];
      if (bin->path) {
        char *p = sbt_expand_env(bin->path);
        if (access(p, X_OK) == 0) fn(ctx, d, bin, p);
        free(p);
        continue;
      }
      glob_t g;
      if (glob(bin->glob, 0, NULL, &g) == 0) {
        for (size_t k = 0; k < g.gl_pathc; k++) fn(ctx, d, bin, g.gl_pathv[k]);
        globfree(&g);
      }
    }
  }
}

typedef struct {
  prefetch *pf;
  json_object *cache;
} collect_ctx;

static void collect_one(void *vctx, const sbt_def *d, const sbt_binary *b, const char *bin) {
  (void)b;
  collect_ctx *c = vctx;
  char real[PATH_MAX];
  struct stat st;
  if (prefetch_find(c->pf, d, bin) || !realpath(bin, real) || stat(real, &st) < 0 || !S_ISREG(st.st_mode) ||
      access(real, X_OK) < 0)
    return;
  json_object *e = cache_entry(c->cache, bin, real, &st), *v;
  bool run_version = !(e && json_object_object_get_ex(e, "version", &v));
  bool run_level = d->level_argv && !cached_level(e, d, &v);
  if (!run_version && !run_level) return;
  prefetched *nv = realloc(c->pf->v, (c->pf->n + 1) * sizeof *nv);
  if (!nv) return;
  c->pf->v = nv;
  prefetched *p = &nv[c->pf->n++];
  *p = (prefetched){.d = d, .bin = strdup(bin), .real = strdup(real), .bin_dir = strdup(real),
                    .run_version = run_version, .run_level = run_level};
  if (p->bin_dir && strrchr(p->bin_dir, '/')) *strrchr(p->bin_dir, '/') = '\0';
}

/* One command of the prefetch: its template, regex and where its match goes. */
typedef struct {
  prefetched *p;
  char *const *argv;
  const char *regex;
  int group;
  char **out;
} prefetch_cmd;

static void run_batch(prefetch_cmd *cmds, size_t m) {
  pid_t pids[MAX_PARALLEL];
  int status[MAX_PARALLEL], fds[MAX_PARALLEL];
  for (size_t i = 0; i < m; i++) {
    char tmp[] = "/tmp/surgebox-version-XXXXXX";
    fds[i] = mkstemp(tmp);
    pids[i] = -1;
    status[i] = -1;
    if (fds[i] < 0) continue;
    unlink(tmp);
    prefetched *p = cmds[i].p;
    sbt_vars v = {.bin = p->bin, .bin_real = p->real, .bin_dir = p->bin_dir};
    char **argv = expand_argv(cmds[i].argv, &v);
    pids[i] = argv ? spawn(argv, fds[i]) : -1;
    free_strv(argv);
  }
  wait_all(pids, status, m, sbu_now_ns() / 1000000 + PROBE_TIMEOUT_MS);
  for (size_t i = 0; i < m; i++) {
    if (fds[i] < 0) continue;
    char out[8192] = "";
    ssize_t n = pread(fds[i], out, sizeof out - 1, 0);
    close(fds[i]);
    if (n > 0) {
      out[n] = '\0';
      *cmds[i].out = sbt_regex_group(cmds[i].regex, cmds[i].group, out);
    }
  }
}

static void prefetch_run(const sbt_registry *r, json_object *cache, prefetch *pf) {
  collect_ctx c = {pf, cache};
  for_each_binary(r, collect_one, &c);
  prefetch_cmd *cmds = calloc(2 * pf->n + 1, sizeof *cmds);
  size_t n = 0;
  for (size_t i = 0; cmds && i < pf->n; i++) {
    prefetched *p = &pf->v[i];
    if (!p->bin || !p->real || !p->bin_dir) {
      p->run_version = p->run_level = false; /* out of memory: add_toolchain runs them itself */
      continue;
    }
    if (p->run_version) cmds[n++] = (prefetch_cmd){p, p->d->version_argv, p->d->version_regex, 1, &p->version};
    if (p->run_level) cmds[n++] = (prefetch_cmd){p, p->d->level_argv, p->d->level_regex, p->d->level_group, &p->level};
  }
  if (n) detect_missed = true;
  for (size_t start = 0; start < n; start += MAX_PARALLEL) {
    run_batch(cmds + start, n - start < MAX_PARALLEL ? n - start : MAX_PARALLEL);
    announce_if_slow();
  }
  free(cmds);
}

static void prefetch_free(prefetch *pf) {
  for (size_t i = 0; i < pf->n; i++) {
    free(pf->v[i].bin);
    free(pf->v[i].real);
    free(pf->v[i].bin_dir);
    free(pf->v[i].version);
    free(pf->v[i].level);
  }
  free(pf->v);
}

typedef struct {
  sbt_registry *r;
  json_object *cache, *new_cache;
  const prefetch *pf;
} add_ctx;

static void add_one(void *vctx, const sbt_def *d, const sbt_binary *b, const char *bin) {
  add_ctx *c = vctx;
  add_toolchain(c->r, d, b, bin, c->cache, c->new_cache, c->pf);
  announce_if_slow();
}

static void detect_with(sbt_registry *r, json_object *cache, json_object *new_cache) {
  free_toolchains(r);
  r->probes_run = r->probes_cached = 0;
  prefetch pf = {0};
  prefetch_run(r, cache, &pf);
  add_ctx c = {r, cache, new_cache, &pf};
  for_each_binary(r, add_one, &c);
  prefetch_free(&pf);
  probe_all(r, new_cache);
}

static void save_cache(const char *cache_file, json_object *cache) {
  if (!cache_file || !cache_file[0]) return;
  sbu_write_json_atomic(cache_file, cache, JSON_C_TO_STRING_PRETTY); /* a cache: not written, detected again */
}

/* SURGEBOX_TOOLCHAINS_SEED=FILE: a detection cache to start from when the
 * cache directory has none yet (a test suite detects once and seeds every
 * private daemon's fresh cache directory with it). Read only when the file
 * is this process's own or root's and writable by its owner alone, as the cache directory's
 * own file would be; entries are still checked per binary (path, real path,
 * mtime, size), so a stale seed only costs a detection. */
static json_object *load_seed(void) {
  const char *seed = getenv("SURGEBOX_TOOLCHAINS_SEED");
  if (!seed || !seed[0]) return NULL;
  SBU_AUTOCLOSE int fd = open(seed, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  SBU_AUTOPUT json_object *o = NULL;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_uid == geteuid() || st.st_uid == 0) &&
      !(st.st_mode & 022))
    o = json_object_from_fd(fd);
  return json_object_is_type(o, json_type_object) ? sbu_take_ptr(&o) : NULL;
}

int sbt_registry_detect(sbt_registry *r, const char *cache_file, char err[SBT_ERR_MAX]) {
  (void)err;
  uint64_t t0 = sbu_now_ns() / 1000000;
  snprintf(r->cache_file, sizeof r->cache_file, "%s", cache_file ? cache_file : "");
  json_object *cache = cache_file ? json_object_from_file(cache_file) : NULL;
  if (!cache && (!cache_file || access(cache_file, F_OK) != 0)) cache = load_seed();
  json_object *new_cache = json_object_new_object();
  detect_t0 = t0, detect_announced = false, detect_missed = false, detect_cache_file = cache_file;
  detect_with(r, cache, new_cache);
  /* Several daemons may share the file with other toolchain directories (a
   * daemon with none would otherwise leave "{}" and make every other one
   * probe again): keep what this detection did not look at, while the
   * binary still exists (entries are checked by mtime and size on use). */
  if (cache && json_object_is_type(cache, json_type_object)) {
    json_object_object_foreach(cache, path, entry) {
      if (!json_object_object_get_ex(new_cache, path, NULL) && access(path, X_OK) == 0)
        json_object_object_add(new_cache, path, json_object_get(entry));
    }
  }
  save_cache(cache_file, new_cache);
  if (cache) json_object_put(cache);
  json_object_put(new_cache);
  r->detect_s = (double)(sbu_now_ns() / 1000000 - t0) / 1000.0;
  return 0;
}

/* ---- detection inside a profile's root file system ----
 * A child chroots into the root and detects there (so symlinks such as
 * /etc/alternatives resolve inside it and versions come from its own
 * libraries), then sends what it found back as JSON. */
static json_object *tc_to_json(const sbt_toolchain *t) {
  json_object *o = json_object_new_object(), *ok = json_object_new_array();
  json_object_object_add(o, "family", json_object_new_string(t->def->name));
  json_object_object_add(o, "file", json_object_new_string(t->def->file));
  json_object_object_add(o, "name", json_object_new_string(t->name));
  json_object_object_add(o, "bin", json_object_new_string(t->bin));
  json_object_object_add(o, "bin_real", json_object_new_string(t->bin_real));
  json_object_object_add(o, "bin_dir", json_object_new_string(t->bin_dir));
  json_object_object_add(o, "version", json_object_new_string(t->version));
  json_object_object_add(o, "prefix_mount", t->prefix_mount ? json_object_new_string(t->prefix_mount) : NULL);
  json_object_object_add(o, "mtime_ns", json_object_new_int64((int64_t)t->bin_mtime_ns));
  json_object_object_add(o, "size", json_object_new_int64((int64_t)t->bin_size));
  json_object_object_add(o, "libraries", json_object_new_string(t->libraries ? t->libraries : ""));
  json_object_object_add(o, "level_raw", t->level_raw ? json_object_new_string(t->level_raw) : NULL);
  for (size_t k = 0; k < t->def->n_options; k++) {
    json_object *v = json_object_new_array();
    for (size_t i = 0; i < t->def->options[k].n_values; i++) json_object_array_add(v, json_object_new_boolean(t->value_ok[k][i]));
    json_object_array_add(ok, v);
  }
  json_object_object_add(o, "value_ok", ok);
  return o;
}

static char *jstr(json_object *o, const char *k) {
  json_object *v;
  return json_object_object_get_ex(o, k, &v) && v ? strdup(json_object_get_string(v)) : NULL;
}

static void tc_from_json(sbt_registry *r, json_object *o) {
  const char *file = json_object_get_string(json_object_object_get(o, "file"));
  const sbt_def *d = NULL;
  for (size_t i = 0; i < r->n_defs && !d; i++)
    if (file && strcmp(r->defs[i].file, file) == 0) d = &r->defs[i];
  if (!d) return;
  sbt_toolchain *t = realloc(r->tcs, (r->n_tcs + 1) * sizeof *t);
  if (!t) return;
  r->tcs = t;
  t = &r->tcs[r->n_tcs++];
  memset(t, 0, sizeof *t);
  t->def = d;
  t->name = jstr(o, "name");
  t->bin = jstr(o, "bin");
  t->bin_real = jstr(o, "bin_real");
  t->bin_dir = jstr(o, "bin_dir");
  t->version = jstr(o, "version");
  t->prefix_mount = jstr(o, "prefix_mount");
  t->libraries = jstr(o, "libraries");
  t->level_raw = jstr(o, "level_raw");
  t->bin_mtime_ns = (uint64_t)json_object_get_int64(json_object_object_get(o, "mtime_ns"));
  t->bin_size = (uint64_t)json_object_get_int64(json_object_object_get(o, "size"));
  json_object *ok = json_object_object_get(o, "value_ok");
  t->value_ok = calloc(d->n_options + 1, sizeof *t->value_ok);
  for (size_t k = 0; k < d->n_options; k++) {
    t->value_ok[k] = calloc(d->options[k].n_values + 1, sizeof(bool));
    json_object *v = ok ? json_object_array_get_idx(ok, k) : NULL;
    for (size_t i = 0; i < d->options[k].n_values; i++)
      t->value_ok[k][i] = v ? json_object_get_boolean(json_object_array_get_idx(v, i)) : true;
  }
}

int sbt_registry_detect_in_root(sbt_registry *r, const char *root, const char *cache_file, char err[SBT_ERR_MAX]) {
  uint64_t t0 = sbu_now_ns() / 1000000;
  free_toolchains(r);
  json_object *cache = cache_file ? json_object_from_file(cache_file) : NULL;
  char tmp[] = "/tmp/surgebox-detect-XXXXXX";
  int fd = mkstemp(tmp);
  if (fd < 0) {
    snprintf(err, SBT_ERR_MAX, "mkstemp: %s", strerror(errno));
    return -1;
  }
  unlink(tmp);
  /* This child never execs and runs as long as the probes: forked outside
   * any sandbox's start, it holds no job's pipe (daemon.profile_load.sighup:
   * a host job answered only when the load ended). Closing its descriptors
   * instead lost a toolchain now and then under load. */
  pid_t pid = sbu_fork_guarded();
  if (pid == 0) {
    /* a private mount namespace with the root read-only, a fresh /proc and
     * a tmpfs /tmp: javac needs /proc, and probes must not write into it */
    char eerr[SBF_ERR_MAX];
    if (sbf_enter_root(root, eerr, sizeof eerr) < 0) {
      fprintf(stderr, "detect in %s: %s\n", root, eerr);
      _exit(3);
    }
    json_object *new_cache = json_object_new_object();
    detect_with(r, cache, new_cache);
    json_object *res = json_object_new_object(), *tcs = json_object_new_array();
    for (size_t i = 0; i < r->n_tcs; i++) json_object_array_add(tcs, tc_to_json(&r->tcs[i]));
    json_object_object_add(res, "toolchains", tcs);
    json_object_object_add(res, "cache", new_cache);
    json_object_object_add(res, "probes_run", json_object_new_int64((int64_t)r->probes_run));
    const char *text = json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN);
    size_t len = strlen(text);
    _exit(write(fd, text, len) == (ssize_t)len ? 0 : 4);
  }
  int st = -1;
  if (pid > 0) waitpid(pid, &st, 0);
  if (cache) json_object_put(cache);
  struct stat sst;
  json_object *res = NULL;
  if (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && fstat(fd, &sst) == 0) {
    char *buf = malloc((size_t)sst.st_size + 1);
    if (buf && pread(fd, buf, (size_t)sst.st_size, 0) == sst.st_size) {
      buf[sst.st_size] = '\0';
      res = json_tokener_parse(buf);
    }
    free(buf);
  }
  close(fd);
  if (!res) {
    snprintf(err, SBT_ERR_MAX, "toolchain detection inside %s failed", root);
    return -1;
  }
  json_object *tcs = json_object_object_get(res, "toolchains");
  for (size_t i = 0; tcs && i < json_object_array_length(tcs); i++) tc_from_json(r, json_object_array_get_idx(tcs, i));
  r->probes_run = (size_t)json_object_get_int64(json_object_object_get(res, "probes_run"));
  save_cache(cache_file, json_object_object_get(res, "cache"));
  snprintf(r->cache_file, sizeof r->cache_file, "%s", cache_file ? cache_file : "");
  snprintf(r->root, sizeof r->root, "%s", root);
  json_object_put(res);
  r->detect_s = (double)(sbu_now_ns() / 1000000 - t0) / 1000.0;
  return 0;
}

void sbt_registry_free(sbt_registry *r) {
  free_toolchains(r);
  sbt_defs_free(r->defs, r->n_defs);
  r->defs = NULL;
  r->n_defs = 0;
}
