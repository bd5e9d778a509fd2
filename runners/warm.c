/* Warm runs, parent side (issue 25; toolchains/warm/README.md): one Python
 * zygote per worker slot, started lazily by the spawner (its child, not
 * ours: SB_SPAWN_ZYGOTE), with the first warm job's interpreter and
 * start-up variables, and a hash seed of its own; started again when it died, when
 * a job's interpreter or start-up variables (warm_start_var) differ, and every
 * SB_WARM_JOBS_PER_ZYGOTE jobs (its address-space layout is shared by its
 * children). A warm run's init is cloned exactly as a cold one's; the job
 * goes to the zygote with the init's pidfd, its stdio, its cgroup.procs
 * descriptors and the init's plan (plan.c's marshal pair, in a memfd),
 * which only the zygote's fork reads; the job's socket joins the zygote and the init
 * (internal.h, "warm.c"). What cannot run warm runs cold, the reason in
 * the result's enforced.start. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <ctype.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime_paths.h"
#include "warm_lang.h"

#include <json-c/json.h>

#ifndef SURGEBOX_WARM_SOURCE_DIR
#define SURGEBOX_WARM_SOURCE_DIR "/usr/share/surgebox/warm"
#endif
#ifndef SURGEBOX_WARM_LIB_BUILT
#define SURGEBOX_WARM_LIB_BUILT "/usr/lib/surgebox/libsbwarm.so"
#endif
#define SB_WARM_MSG_MAX (64 * 1024) /* argv and environment of a warm job, at most */
#define SB_WARM_EARLY_DEATHS 3      /* zygotes dead in a row before READY: warm refused from then on */

struct sb_zygote {
  int sock, pidfd;
  int exe_fd;         /* its executable (/proc/PID/exe), opened once it is READY; -1 before */
  pid_t pid;
  uint64_t key, seed, jobs;
  bool seeded, ready; /* ready: it said READY */
  char argv0[256];    /* its interpreter */
  uint64_t start_key; /* its interpreter and start-up variables (start_key) */
  uid_t client;       /* whose job started it: its early death is counted against that client */
};

#define SB_WARM_N_INTERPS ((int)(sizeof ((sb_runtime *)0)->warm_interps / sizeof ((sb_runtime *)0)->warm_interps[0]))

/* The early-death count of a client's start-up; NULL: it has none. */
static int *early_deaths_of(sb_runtime *rt, uid_t client, uint64_t key) {
  for (int i = 0; i < SB_WARM_N_INTERPS; i++)
    if (rt->warm_interps[i].key == key && rt->warm_interps[i].client == client) return &rt->warm_interps[i].early_deaths;
  return NULL;
}

/* Where to count a client's start-up's early deaths: its entry, else a new
 * one in a free place or in place of the one with the fewest deaths (a
 * client filling the table only evicts counts, never adds to another's).
 * Only a death makes an entry: asking (zygote_for) must not evict another
 * start-up's count. */
static int *early_deaths_entry(sb_runtime *rt, uid_t client, uint64_t key, const char *argv0) {
  int *have = early_deaths_of(rt, client, key);
  if (have) return have;
  int pick = 0;
  for (int i = 0; i < SB_WARM_N_INTERPS; i++) {
    if (!rt->warm_interps[i].key) {
      pick = i;
      break;
    }
    if (rt->warm_interps[i].early_deaths < rt->warm_interps[pick].early_deaths) pick = i;
  }
  rt->warm_interps[pick].key = key;
  rt->warm_interps[pick].client = client;
  snprintf(rt->warm_interps[pick].argv0, sizeof rt->warm_interps[pick].argv0, "%s", argv0);
  rt->warm_interps[pick].early_deaths = 0;
  return &rt->warm_interps[pick].early_deaths;
}

/* The zygote's files: $SURGEBOX_WARM (a directory holding each language's
 * folder, python/: warm_script is that directory), else
 * beside an installed binary, else the source tree we were built from.
 * Worked out once per runtime (sbu_installed_dir resolves our own binary:
 * ~15 µs a job on the loop thread); whether they are there is asked when a
 * zygote is started (zygote_for), the only time they are read. */
static void warm_files(sb_runtime *rt) {
  if (rt->warm_paths) return;
  rt->warm_paths = true;
  char *script = rt->warm_script, *lib = rt->warm_lib;
  char dir[PATH_MAX];
  const char *env = getenv("SURGEBOX_WARM");
  const char *d = env && *env ? env : sbu_installed_dir("warm", dir, sizeof dir);
  if (!d) d = SURGEBOX_WARM_SOURCE_DIR;
  snprintf(script, PATH_MAX, "%s", d);
  const char *l = getenv("SURGEBOX_WARM_LIB");
  if (l && *l) {
    snprintf(lib, PATH_MAX, "%s", l);
  } else if (sbu_installed_dir("warm", dir, sizeof dir)) {
    snprintf(lib, PATH_MAX, "%s/../../../lib/surgebox/libsbwarm.so", dir);
  } else {
    snprintf(lib, PATH_MAX, "%s", SURGEBOX_WARM_LIB_BUILT);
  }
}

static uint64_t fnv(uint64_t h, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s;; p++) {
    h = (h ^ *p) * 0x100000001b3ull;
    if (!*p) return h;
  }
}

static size_t strv_bytes(const char *const *v, uint32_t *n) {
  size_t len = 0;
  for (*n = 0; v && v[*n]; (*n)++) len += strlen(v[*n]) + 12;
  return len;
}

/* The zygote's start-up runs outside any sandbox, with the daemon's uid
 * (root when privileged), so nothing a client names may shape it: the
 * interpreter must be a file that only root can have put there, reached
 * through what only root can change (interp_vet.c), and the environment it
 * starts with holds only variables that steer an interpreter without naming
 * anything to load or import (warm_start_var), each with a value checked
 * to be one of the harmless ones (bad_start_value). */
#define SB_VET_KEEP_NS 1000000000ull /* a path found fit is walked again after this */
static const char *untrusted_interpreter(const sb_runtime *rt, const char *argv0) {
  /* The walk costs ~40 system calls (0.5 ms on a loaded machine) on the
   * loop thread: a path found fit is kept for a second. Safe to keep:
   * every component of a fit path is one only root can change. */
  static struct {
    char argv0[256];
    bool owners;
    uint64_t at;
  } fit[8];
  static unsigned next;
  bool owners = !rt->userns;
  uint64_t now = sbu_now_ns();
  for (unsigned i = 0; i < 8; i++)
    if (fit[i].owners == owners && now - fit[i].at < SB_VET_KEEP_NS && strcmp(fit[i].argv0, argv0) == 0) return NULL;
  char canon[PATH_MAX];
  /* unprivileged, the zygote is the daemon's user, the only one it serves
   * (and root's files read as the overflow uid there): no owner checks, but
   * still no /proc and no venv (a venv's start-up differs from its cold one) */
  const char *why = sb_interp_vet(argv0, owners, canon);
  if (!why && strlen(argv0) < sizeof fit[0].argv0) {
    unsigned i = next++ % 8;
    snprintf(fit[i].argv0, sizeof fit[i].argv0, "%s", argv0);
    fit[i].owners = owners;
    fit[i].at = now;
  }
  return why;
}

/* The start-up variable e is (the language's list: its toolchain file's
 * "warm"), or NULL. Those change how the interpreter starts but name no file
 * it loads and no module it imports. Every other variable of the language's
 * own prefix, and the dynamic loader's and libc's that name files (LD_*,
 * GCONV_PATH, LOCPATH, ...), make the run cold: the zygote cannot honour
 * them without loading what they name outside the sandbox, and a cold
 * start-up would. */
static const sb_warm_var *warm_start_var(const sb_warm_lang *lang, const char *e) {
  for (size_t i = 0; i < lang->n_vars; i++) {
    const sb_warm_var *v = &lang->vars[i];
    size_t n = strlen(v->name);
    if (strncmp(e, v->name, n) == 0 && (v->prefix || e[n] == '=')) return v;
  }
  return NULL;
}

/* v is 1..max decimal digits (no sign, no space) worth at most top. */
static bool decimal(const char *v, size_t max, unsigned long long top) {
  size_t n = strlen(v);
  if (!n || n > max || strspn(v, "0123456789") != n) return false;
  return strtoull(v, NULL, 10) <= top;
}

/* v is at most max bytes, each a letter, a digit or one of extra. */
static bool charset(const char *v, size_t max, const char *extra) {
  size_t n = strlen(v);
  if (n > max) return false;
  for (const char *c = v; *c; c++)
    if (!isalnum((unsigned char)*c) && !strchr(extra, *c)) return false;
  return true;
}

/* A start-up variable (warm_start_var) whose value is not one the zygote
 * may take: what it must be; NULL when it is fine. A name under a prefix
 * ("LC_") is capitals and '_'; a value is one the rule lists (a locale or
 * encoding name with a '/' would be a path: glibc's locale files, a codec
 * module). */
static const char *bad_start_value(const sb_warm_var *r, const char *e) {
  const char *eq = strchr(e, '='), *v = eq + 1;
  static char name_must[64];
  for (const char *c = e + strlen(r->name); r->prefix && c < eq; c++)
    if (!isupper((unsigned char)*c) && *c != '_') {
      snprintf(name_must, sizeof name_must, "a name %.16s + capitals and '_'", r->name);
      return name_must;
    }
  for (char **w = r->words; w && *w; w++)
    if (strcmp(v, *w) == 0) return NULL;
  for (size_t i = 0; i < r->n_ranges; i++)
    if (decimal(v, 10, r->ranges[i][1]) && strtoull(v, NULL, 10) >= r->ranges[i][0]) return NULL;
  if (r->has_chars && charset(v, r->max, r->chars) && !(r->forbid && strstr(v, r->forbid))) return NULL;
  return r->must;
}

/* A variable that makes the run cold: the variable, with *must what its
 * value must be (a start-up variable's), or *why why it cannot be set at
 * all (the language's own word), or neither (it names what would load). */
static const char *unsafe_var(const sb_warm_lang *lang, const char *const *envp, const char **must, const char **why) {
  static const char *const files[] = {"LD_", "GCONV_PATH=", "LOCPATH=", "NLSPATH=", "GLIBC_TUNABLES=", "MALLOC_",
                                      "TZDIR=", "HOSTALIASES=", "RES_OPTIONS=", "LOCALDOMAIN=", NULL};
  size_t own = lang->own_prefix ? strlen(lang->own_prefix) : 0;
  *must = *why = NULL;
  for (const char *const *e = envp; e && *e; e++) {
    const sb_warm_var *r = warm_start_var(lang, *e);
    if (own && strncmp(*e, lang->own_prefix, own) == 0 && !r) {
      for (size_t i = 0; i < lang->n_cold; i++)
        if (strncmp(*e, lang->cold[i].name, strlen(lang->cold[i].name)) == 0 && (*e)[strlen(lang->cold[i].name)] == '=')
          *why = lang->cold[i].why;
      return *e;
    }
    if (r && (*must = bad_start_value(r, *e))) return *e;
    for (int i = 0; files[i]; i++)
      if (strncmp(*e, files[i], strlen(files[i])) == 0) return *e;
  }
  return NULL;
}

/* Why this run cannot be warm, or NULL. */
static const char *refusal(const sb_runtime *rt, const sb_spec *spec, const char *const *envp) {
  /* user-namespace mode: the zygote's start-up runs on the host's /tmp (no
   * mount namespace of its own), so with HOME elsewhere (zygote_start); a
   * user base the job names would still be the host's */
  const sb_warm_lang *lang = spec->warm_lang;
  static char var_why[200];
  for (size_t i = 0; rt->userns && lang && i < lang->n_userns_cold; i++)
    for (const char *const *e = envp; e && *e; e++) {
      size_t n = strlen(lang->userns_cold[i].name);
      if (strncmp(*e, lang->userns_cold[i].name, n) == 0 && (*e)[n] == '=') {
        snprintf(var_why, sizeof var_why, "%.40s in user-namespace mode (%.120s)", lang->userns_cold[i].name,
                 lang->userns_cold[i].why);
        return var_why;
      }
    }
  if (spec->trace) return "a traced run";
  if (spec->root) return "a profile's root (the zygote runs the host's interpreter)";
  if (spec->netns_slot < 0) return "no worker slot";
  const char *const *argv = spec->argv;
  if (!lang) return "not an interpreter a warm-capable language names (toolchains/warm/<lang>/warm.json)";
  if (argv[0][0] != '/') {
    snprintf(var_why, sizeof var_why, "not a %.40s interpreter called by absolute path", lang->label);
    return var_why;
  }
  const char *why = untrusted_interpreter(rt, argv[0]);
  if (why) return why;
  const char *must, *cold;
  const char *var = unsafe_var(lang, envp, &must, &cold);
  if (var) {
    int len = (int)(strchrnul(var, '=') - var > 40 ? 40 : strchrnul(var, '=') - var);
    if (must)
      snprintf(var_why, sizeof var_why, "%.*s's value in the environment is not one the warm start-up takes (%s)", len,
               var, must);
    else if (cold)
      snprintf(var_why, sizeof var_why, "%.*s in the environment (%.120s)", len, var, cold);
    else
      snprintf(var_why, sizeof var_why, "%.*s in the environment (it names what the interpreter would load)", len, var);
    return var_why;
  }
  if (!argv[1] || argv[1][0] == '-' || !argv[1][0]) return "interpreter options or no script";
  uint32_t n;
  if (strv_bytes(argv, &n) + strv_bytes(envp, &n) + strlen(spec->cwd) > SB_WARM_MSG_MAX)
    return "argv and environment over 64 KiB";
  return NULL;
}

static void zygote_close(sb_zygote *z) {
  if (z->pidfd >= 0) syscall(SYS_pidfd_send_signal, z->pidfd, SIGKILL, NULL, 0); /* the spawner reaps it */
  sbu_closep(&z->pidfd);
  sbu_closep(&z->sock);
  sbu_closep(&z->exe_fd);
  z->pid = 0;
}

/* A lock on the zygote's executable, a file of its own overlay
 * (zygote_root.c) that only its jobs can reach (/proc/self/exe), left in
 * flight by one (SCM_RIGHTS): the next job of its slot would see it, so
 * the zygote is replaced, as pool.c rebuilds a template with a locked
 * file. Asked before each job, when no job of the slot is alive. */
static bool zygote_exe_locked(sb_zygote *z) {
  if (z->exe_fd < 0 && z->ready) { /* exec'd: /proc/PID/exe is the interpreter, no more the spawner's binary */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)z->pid);
    z->exe_fd = open(path, O_RDONLY | O_CLOEXEC);
    /* alive after the open: PID was still the zygote's during it */
    if (z->exe_fd >= 0 && syscall(SYS_pidfd_send_signal, z->pidfd, 0, NULL, 0) < 0) sbu_closep(&z->exe_fd);
  }
  return z->exe_fd >= 0 && sb_file_locked(z->exe_fd);
}

/* Dead while idle? It writes one message, READY (its start-up done and
 * libsbwarm.so loaded), and nothing more: anything else readable is EOF. */
static bool zygote_dead(sb_zygote *z) {
  for (;;) {
    char m[16];
    ssize_t n = z->sock < 0 ? 0 : recv(z->sock, m, sizeof m, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno != EAGAIN;
    if (n == 5 && memcmp(m, "READY", 5) == 0) {
      z->ready = true;
      continue;
    }
    return true;
  }
}

static int zygote_start(sb_runtime *rt, sb_zygote *z, const sb_warm_lang *lang, const char *argv0,
                        const char *const *envp, uint64_t key, const char *script, const char *lib,
                        char err[SB_ERR_MAX]) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
    sb_err(err, "warm: socketpair: %s", strerror(errno));
    return -errno;
  }
  uint32_t n;
  strv_bytes(envp, &n);
  const char **env = calloc(n + 7, sizeof *env);
  char fdv[32], libv[PATH_MAX + 32], seedv[96];
  size_t seed_len = lang->seed_var ? strlen(lang->seed_var) : 0;
  z->seeded = seed_len > 0; /* unless the job chose its seed */
  for (uint32_t i = 0; z->seeded && i < n; i++)
    if (strncmp(envp[i], lang->seed_var, seed_len) == 0 && envp[i][seed_len] == '=') z->seeded = false;
  uint32_t r = 0;
  if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = (uint32_t)sbu_now_ns();
  z->seed = r;
  if (!env) {
    close(sv[0]);
    close(sv[1]);
    return -ENOMEM;
  }
  uint32_t k = 0;
  /* only what steers start-up (the refusal made sure nothing else of that
   * kind is there); the rest of the job's environment reaches its child */
  for (uint32_t i = 0; i < n; i++)
    if (warm_start_var(lang, envp[i])) env[k++] = envp[i];
  {
    /* The job's HOME is a client's word and, on the host, could be any
     * directory (a user site's .pth files there would run as the daemon's
     * user, root when privileged; unprivileged the zygote has no /tmp of its
     * own either): under /dev/null no user site can exist. Each child
     * computes site.USER_SITE anew from the job's own HOME, as a cold
     * start-up would (sbzygote_body.py). */
    env[k++] = "HOME=/dev/null";
    env[k++] = "SURGEBOX_ZYGOTE_REHOME=1";
  }
  snprintf(fdv, sizeof fdv, "SURGEBOX_ZYGOTE_FD=3");
  snprintf(libv, sizeof libv, "SURGEBOX_ZYGOTE_LIB=%s", lib);
  env[k++] = fdv;
  env[k++] = libv;
  if (z->seeded) {
    snprintf(seedv, sizeof seedv, "%.64s=%llu", lang->seed_var, (unsigned long long)z->seed);
    env[k++] = seedv;
    env[k++] = "SURGEBOX_ZYGOTE_SEEDED=1";
  }
  const char *argv[] = {argv0, script, NULL};
  sb_plan a;
  sb_plan_init(&a);
  a.ctl_fd = sv[1];
  a.userns = rt->userns;
  a.mounts.root = a.mounts.empty_file = "";
  /* its read-only directories are overlays of its own (zygote_root.c), over
   * this empty directory, with the mounts beneath them bound back on top */
  a.mounts.newroot = rt->newroot;
  char **submounts = sb_submounts_list("", NULL, 0);
  a.mounts.submounts = (const char *const *)submounts;
  a.cwd = "/";
  a.argv = argv;
  a.envp = env;
  sb_spawned out;
  int rc = sb_spawner_clone(rt, SB_SPAWN_ZYGOTE, &a, 0, -1, &out, err);
  sb_submounts_free(submounts);
  free(env);
  close(sv[1]);
  if (rc < 0) {
    close(sv[0]);
    return rc;
  }
  z->sock = sv[0];
  z->pidfd = out.pidfd;
  z->exe_fd = -1;
  z->pid = out.pid;
  z->key = key;
  snprintf(z->argv0, sizeof z->argv0, "%s", argv0);
  z->jobs = 0;
  z->ready = false;
  return 0;
}

/* A zygote found dead: counted, and when it died before READY, counted
 * against its interpreter (a zygote that cannot start, from a broken
 * interpreter, one without ctypes or a broken install, would fail every
 * warm job of that interpreter). */
static void zygote_buried(sb_runtime *rt, sb_zygote *z) {
  int *deaths;
  rt->zygote_restarts++;
  if (!z->ready) ++*early_deaths_entry(rt, z->client, z->start_key, z->argv0);
  else if ((deaths = early_deaths_of(rt, z->client, z->start_key))) *deaths = 0;
}

/* A start-up's key: the interpreter and the variables the zygote starts
 * with (warm_start_var), not the rest of the job's environment. Never 0
 * (a free entry). */
static uint64_t start_key(const sb_warm_lang *lang, const char *argv0, const char *const *envp) {
  uint64_t key = fnv(0xcbf29ce484222325ull, argv0);
  for (const char *const *e = envp; e && *e; e++)
    if (warm_start_var(lang, *e)) key = fnv(key, *e);
  return key ? key : 1;
}

/* The slot's zygote for this interpreter and environment, started if need
 * be. Each slot has two places: the zygote that serves, and its successor,
 * started SB_WARM_SPARE_AHEAD jobs before the swap so that the job after it
 * does not wait for an interpreter's start-up (20-30 ms every 100 jobs, on
 * that job's wall clock). The successor serves nothing until it takes over. */
static sb_zygote *zygote_for(sb_runtime *rt, int slot, uid_t client, const sb_warm_lang *lang, const char *argv0,
                             const char *const *envp, const char *script, const char *lib, bool for_job,
                             char err[SB_ERR_MAX]) {
  if (2 * slot + 1 >= rt->n_zygotes) {
    sb_zygote *nz = realloc(rt->zygotes, (size_t)(2 * slot + 2) * sizeof *nz);
    if (!nz) return NULL;
    for (int i = rt->n_zygotes; i < 2 * slot + 2; i++) nz[i] = (sb_zygote){.sock = -1, .pidfd = -1, .exe_fd = -1};
    rt->zygotes = nz;
    rt->n_zygotes = 2 * slot + 2;
  }
  sb_zygote *z = &rt->zygotes[2 * slot], *next = z + 1;
  int *deaths;
  /* what the zygote starts with: the interpreter and the start-up variables
   * (zygote_start passes no other); the rest of a job's environment is its
   * child's alone, so a job that differs only there keeps the zygote */
  uint64_t key = start_key(lang, argv0, envp);
  if (next->sock >= 0 && next->key != key) zygote_close(next); /* of another interpreter or environment */
  if (z->sock >= 0 && (z->key != key || z->jobs >= SB_WARM_JOBS_PER_ZYGOTE || zygote_dead(z))) {
    if (zygote_dead(z)) zygote_buried(rt, z);
    zygote_close(z);
  }
  if (z->sock >= 0 && zygote_exe_locked(z)) zygote_close(z); /* a fresh one, with fresh overlays */
  if (z->sock < 0 && next->sock >= 0) { /* the successor takes over */
    if (zygote_dead(next)) {
      zygote_buried(rt, next);
      zygote_close(next);
    } else {
      *z = *next;
      *next = (sb_zygote){.sock = -1, .pidfd = -1, .exe_fd = -1};
    }
  }
  /* counted per client and start-up: another client's deaths, or this
   * client's with another start-up, refuse nothing here */
  uint64_t skey = key;
  if (z->sock >= 0 && z->ready && (deaths = early_deaths_of(rt, z->client, z->start_key))) *deaths = 0;
  if ((deaths = early_deaths_of(rt, client, skey)) && *deaths >= SB_WARM_EARLY_DEATHS) {
    sb_err(err, "%d zygotes in a row died before they were ready (%s, this client's start-up)", SB_WARM_EARLY_DEATHS,
           argv0);
    return NULL;
  }
  if (z->sock < 0 && (access(script, R_OK) < 0 || access(lib, R_OK) < 0)) {
    sb_err(err, "the zygote's files (sbzygote.py, libsbwarm.so) are not installed");
    return NULL;
  }
  if (z->sock < 0) {
    if (zygote_start(rt, z, lang, argv0, envp, key, script, lib, err) < 0) return NULL;
    z->start_key = skey;
    z->client = client;
  }
  /* this job is z's (jobs + 1)th: its successor starts now if the swap is
   * near (not started: the swap starts one, as without a successor) */
  if (for_job && next->sock < 0 && z->jobs + 1 + SB_WARM_SPARE_AHEAD >= SB_WARM_JOBS_PER_ZYGOTE) {
    char ignored[SB_ERR_MAX];
    if (zygote_start(rt, next, lang, argv0, envp, key, script, lib, ignored) == 0) {
      next->start_key = skey;
      next->client = client;
    }
  }
  return z;
}

/* The slot's zygote for a warm run of spec, started (no job sent) when none
 * of its interpreter and environment is up: a slot lent to a warm cases
 * step gets one of its own while it stays free for queued jobs. The
 * start-up runs in the zygote, as every zygote's (the loop waits for none);
 * the same checks as a job's (refusal: the interpreter vetted, the
 * start-up variables checked). */
int sb_runtime_warm_slot_start(sb_runtime *rt, const sb_spec *spec, char err[SB_ERR_MAX]) {
  err[0] = '\0';
  const char *why = !spec->warm ? "not a warm run" : !spec->envp ? "no environment" : refusal(rt, spec, spec->envp);
  if (why) {
    snprintf(err, SB_ERR_MAX, "%s", why);
    return -1;
  }
  warm_files(rt);
  char script[PATH_MAX];
  snprintf(script, sizeof script, "%s/%s", rt->warm_script, spec->warm_lang->zygote);
  sb_zygote *z = zygote_for(rt, spec->netns_slot, spec->client, spec->warm_lang, spec->argv[0], spec->envp, script,
                            rt->warm_lib, false, err);
  if (!z) {
    if (!err[0]) snprintf(err, SB_ERR_MAX, "the zygote cannot be started");
    return -1;
  }
  return !zygote_dead(z) && z->ready ? 1 : 0; /* dead: the next call buries it and starts another */
}

void sb_warm_prepare(sb_runtime *rt, const sb_spec *spec, const sb_cg_job *cg, const char *const *envp, sb_warm_run *w,
                     char note[SB_ERR_MAX]) {
  memset(w, 0, sizeof *w);
  w->pair[0] = w->pair[1] = -1;
  if (!spec->warm) {
    snprintf(note, SB_ERR_MAX, "cold");
    return;
  }
  char err[SB_ERR_MAX] = "";
  const char *why = refusal(rt, spec, envp);
  warm_files(rt);
  char script[PATH_MAX];
  const char *lib = rt->warm_lib;
  if (spec->warm_lang) snprintf(script, sizeof script, "%s/%s", rt->warm_script, spec->warm_lang->zygote);
  /* the zygote starts with an empty /tmp of its own (spawner_serve.c): the
   * host's, the job's HOME, must not feed its start-up (a user site's .pth
   * files would run as root); its own files, if under /tmp, are bound there */
  if (!why && (w->n_cg = sb_cg_job_open_procs(&rt->cg, cg, w->cg)) < 0) {
    w->n_cg = 0;
    why = "the job's cgroup.procs cannot be opened";
  }
  if (!why && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, w->pair) < 0) why = "socketpair failed";
  if (!why && !(w->z = zygote_for(rt, spec->netns_slot, spec->client, spec->warm_lang, spec->argv[0], envp, script, lib, true, err)))
    why = err[0] ? err : "the zygote cannot be started";
  if (why) {
    snprintf(note, SB_ERR_MAX, "cold (warm refused: %s)", why);
    sb_warm_run_close(w);
    return;
  }
  w->on = true;
  w->zygote_pid = w->z->pid;
  w->seed = w->z->seeded ? w->z->seed : 0;
  w->seeded = w->z->seeded;
  if (w->seeded) snprintf(note, SB_ERR_MAX, "warm (zygote, hash seed %llu)", (unsigned long long)w->seed);
  else snprintf(note, SB_ERR_MAX, "warm (zygote, hash seed from the job's %s)",
                spec->warm_lang->seed_var ? spec->warm_lang->seed_var : "environment");
}

/* The job to the zygote: "SBX" (the only bytes of it the zygote reads),
 * and by SCM_RIGHTS its stdio, the job's socket, the init's pidfd, the plan
 * in a memfd and the job's cgroup.procs. The plan is the init's (plan.c,
 * the one marshal pair), its program's part: the zygote reads its mode
 * alone, and only the forked child maps and applies it (warm_lib.c). */
int sb_warm_send(sb_warm_run *w, const sb_plan *a, int init_pidfd, char err[SB_ERR_MAX]) {
  sb_plan job = *a;
  job.mounts = (sb_mount_plan){.root = "", .newroot = "", .empty_file = ""}; /* the init's, not the child's */
  size_t len;
  int plan = sb_plan_memfd(&job, "surgebox-warm-job", &len);
  if (plan < 0) {
    sb_err(err, "warm: the job's plan: %s", strerror(-plan));
    return plan;
  }
  int fds[6 + sizeof w->cg / sizeof *w->cg] = {a->stdin_fd, a->stdout_fd, a->stderr_fd, w->pair[1], init_pidfd, plan};
  int nfds = 6;
  for (int i = 0; i < w->n_cg; i++) fds[nfds++] = w->cg[i];
  ssize_t n = sb_sendmsg_fds(w->z->sock, "SBX", 4, fds, nfds, MSG_NOSIGNAL | MSG_DONTWAIT);
  int e = errno;
  close(plan);
  if (n < 0) {
    sb_err(err, "warm: the job could not reach the slot's zygote (pid %d): %s", (int)w->z->pid, strerror(e));
    return -e;
  }
  w->z->jobs++;
  return 0;
}

bool sb_warm_zygote_kill(const sb_warm_run *w) {
  /* by pid: w->z points into rt->zygotes, which a later slot's start may move. The zygote is
   * alive here (its /proc state was just read) and only the spawner, its parent, reaps it. */
  SBU_AUTOCLOSE int fd = w->zygote_pid > 0 ? (int)syscall(SYS_pidfd_open, w->zygote_pid, 0) : -1;
  return fd >= 0 && syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) == 0;
}

void sb_warm_run_close(sb_warm_run *w) {
  for (int i = 0; i < 2; i++) sbu_closep(&w->pair[i]);
  for (int i = 0; i < w->n_cg; i++) sbu_closep(&w->cg[i]);
  w->n_cg = 0;
}

void sb_warm_fini(sb_runtime *rt) {
  for (int i = 0; i < rt->n_zygotes; i++) zygote_close(&rt->zygotes[i]);
  free(rt->zygotes);
  rt->zygotes = NULL;
  rt->n_zygotes = 0;
}

json_object *sb_runtime_warm_json(const sb_runtime *rt) {
  json_object *o = json_object_new_object();
  int running = 0;
  int successors = 0;
  for (int i = 0; i < rt->n_zygotes; i++) *(i % 2 ? &successors : &running) += rt->zygotes[i].sock >= 0;
  json_object_object_add(o, "zygotes", json_object_new_int(running));
  json_object_object_add(o, "successors", json_object_new_int(successors));
  json_object_object_add(o, "restarts", json_object_new_int64((int64_t)rt->zygote_restarts));
  char off[SB_ERR_MAX];
  int n = snprintf(off, sizeof off, "%d zygotes in a row died before they were ready:", SB_WARM_EARLY_DEATHS), refused = 0;
  for (int i = 0; i < SB_WARM_N_INTERPS && n > 0 && (size_t)n < sizeof off; i++)
    if (rt->warm_interps[i].early_deaths >= SB_WARM_EARLY_DEATHS) {
      n += snprintf(off + n, sizeof off - (size_t)n, "%s %s (uid %u's start-up)", refused ? "," : "",
                    rt->warm_interps[i].argv0, (unsigned)rt->warm_interps[i].client);
      refused++;
    }
  json_object_object_add(o, "off", refused ? json_object_new_string(off) : NULL);
  return o;
}
