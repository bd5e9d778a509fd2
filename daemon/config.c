/* surgeboxd's command line and config file. */
#include "internal.h"

#include "cliopt.h"
#include "runtime_paths.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void sbd_config_default(sbd_config *c) {
  memset(c, 0, sizeof *c);
  c->max_queue = 10000;
  c->grace_s = 30;
  c->max_line = SBP_DEFAULT_MAX_LINE;
  c->ready_fd = -1;
  c->cache_max_mib = 4096;
  c->socket_mode = -1;
  sb_runtime_options_default(&c->runtime);
  sbh_limits_default(&c->http.limits);
  c->http.warm = true;
}

void sbd_default_state_dir(char *out, size_t cap) {
  char dir[4096];
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  if (sbu_runtime_dir(sb_host_euid(), dir, sizeof dir) < 0) snprintf(dir, sizeof dir, "/tmp/surgebox-%u", (unsigned)geteuid());
  /* the layout runners/runtime.c has always used: $XDG_RUNTIME_DIR/surgebox/state */
  if (sb_host_euid() != 0 && xdg && strcmp(dir, xdg) == 0) snprintf(out, cap, "%s/surgebox/state", dir);
  else snprintf(out, cap, "%s/state", dir);
}

/* dir exists (or was made) and we may write there */
static bool usable(const char *dir) { return sb_mkdir_p(dir, 0755) == 0 && access(dir, W_OK | X_OK) == 0; }

/* <tmp>/surgebox-cache-UID (the uid outside our user namespace), ours
 * alone: made 0700, or found as a real directory (no symlink) we own (as
 * this namespace sees it) that nobody else may write. Another user
 * who made it first cannot feed us a detection cache. */
static bool private_tmp_dir(const char *tmp, char *out, size_t cap) {
  if (!tmp || *tmp != '/') return false;
  if ((size_t)snprintf(out, cap, "%s/surgebox-cache-%u", tmp, (unsigned)sb_host_euid()) >= cap) return false;
  if (mkdir(out, 0700) < 0 && errno != EEXIST) return false;
  struct stat st;
  return lstat(out, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022) &&
         access(out, W_OK | X_OK) == 0;
}

/* $XDG_CACHE_HOME/surgebox, ~/.cache/surgebox, then (HOME not writable: the
 * detection would run again at every start) a per-uid directory in $TMPDIR
 * or /tmp; the first usable. */
static void user_cache_dir(char *out, size_t cap) {
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (xdg && *xdg == '/') {
    snprintf(out, cap, "%s/surgebox", xdg);
    if (usable(out)) return;
  }
  if (!home || *home != '/') {
    struct passwd *pw = getpwuid(geteuid());
    home = pw && pw->pw_dir ? pw->pw_dir : "/tmp";
  }
  char first[4096];
  snprintf(first, sizeof first, "%s/.cache/surgebox", home);
  snprintf(out, cap, "%s", first);
  if (usable(out)) return;
  if (private_tmp_dir(getenv("TMPDIR"), out, cap) || private_tmp_dir("/tmp", out, cap)) return;
  snprintf(out, cap, "%s", first); /* nothing writable: the caller says so */
}

void sbd_default_cache_dir(char *out, size_t cap) {
  if (sb_host_euid() != 0) {
    user_cache_dir(out, cap);
    return;
  }
  snprintf(out, cap, "/var/cache/surgebox");
  if (sb_mkdir_p(out, 0755) == 0 && access(out, W_OK) == 0) return;
  user_cache_dir(out, cap); /* uid 0 of a user namespace: /var/cache is not ours */
}

static int parse_ul(const char *s, unsigned long max, unsigned long *out) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || end == s || *end || s[0] == '-' || v > max) return -1;
  *out = v;
  return 0;
}

static int parse_group(const char *s, gid_t *out) {
  unsigned long v;
  if (parse_ul(s, 0xfffffffe, &v) == 0) {
    *out = (gid_t)v;
    return 0;
  }
  struct group *g = getgrnam(s);
  if (!g) return -1;
  *out = g->gr_gid;
  return 0;
}

/* The odd values (SBO_CALL): -1 for a bad one, said by the caller. */
static int allow(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)p;
  sbd_config *c = opts;
  unsigned long v;
  bool uid = !strcmp(o->name, "allow-uid");
  size_t *n = uid ? &c->n_allow_uid : &c->n_allow_gid;
  if (parse_ul(val, 0xfffffffe, &v) < 0 || *n >= SBD_MAX_ALLOW) return -1;
  if (uid) c->allow_uid[(*n)++] = (uid_t)v;
  else c->allow_gid[(*n)++] = (gid_t)v;
  return 0;
}
static int socket_group(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)p, (void)o;
  sbd_config *c = opts;
  c->has_socket_gid = parse_group(val, &c->socket_gid) == 0;
  c->socket_group = val;
  return c->has_socket_gid ? 0 : -1;
}
static int socket_mode(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)p, (void)o;
  char *end;
  errno = 0;
  long m = strtol(val, &end, 8);
  ((sbd_config *)opts)->socket_mode = (int)m;
  return errno || end == val || *end || m < 0 || m > 0777 ? -1 : 0;
}
static int cgroup_kind(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)p, (void)o;
  return sb_cgroup_kind_parse(val, &((sbd_config *)opts)->runtime.cgroup) < 0 ? -1 : 0;
}
static int uid_range(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)p, (void)o;
  sb_runtime_options *r = &((sbd_config *)opts)->runtime;
  return sb_uid_range_parse(val, &r->uid_first, &r->uid_count) < 0 ? -1 : 0;
}

/* The options, with their help and where each value goes: the usage is
 * generated from this table (the order here is the order of --help), the
 * command line and the config file store through it. Config file keys are
 * the same long names, except the command line's own (cli_only). */
enum { O_READY = 256, O_CONFIG, O_VERSION };
#define AT(F) SBO_AT(sbd_config, F)
#define SECONDS(F) AT(F), .max = 1000000000
static const sbo_opt opts[] = {
    {"socket", 0, "PATH", "default /run/surgebox/surgebox.sock as root, else $XDG_RUNTIME_DIR/surgebox.sock", SBO_STR, AT(socket_path)},
    {"socket-group", 0, "NAME", "group of the socket file (name or number); its members may connect", SBO_CALL, .call = socket_group},
    {"socket-mode", 0, "OCTAL", "mode of the socket file (default 0660; 0666 with --allow-uid/--allow-gid)", SBO_CALL, .call = socket_mode},
    {"jobs", 0, "N", "sandboxes at once (default: number of CPUs)", SBO_INT, AT(jobs), .min = 1, .max = 4096},
    {"max-queue", 0, "N", "queued jobs beyond the running ones before 'busy' (default 10000)", SBO_INT, AT(max_queue), .max = 100000000},
    {"allow-uid", 0, "UID", "a peer allowed besides the daemon's own uid and root (repeatable)", SBO_CALL, .call = allow},
    {"allow-gid", 0, "GID", "peers whose primary group is GID are allowed (repeatable)", SBO_CALL, .call = allow},
    {"log-json", 0, NULL, "log as JSON Lines", SBO_FLAG, AT(log_json)},
    {"log-file", 0, "FILE", "once listening, log to FILE instead of stderr", SBO_STR, AT(log_file)},
    {"quiet", 0, NULL, "warnings and errors only", SBO_FLAG, AT(quiet)},
    {"grace", 0, "S", "on SIGTERM, how long running jobs may finish (default 30)", SBO_NONNEG, SECONDS(grace_s)},
    {"idle-timeout", 0, "S", "exit after S seconds with no client and no job (default 0: never)", SBO_NONNEG, SECONDS(idle_timeout_s)},
    {"max-line", 0, "BYTES", "longest request line", SBO_INT, AT(max_line), .min = 1024, .max = (long)(SBP_DEFAULT_MAX_LINE * 16)},
    {"cgroup", 0, "KIND", "auto|v2|v1|none", SBO_CALL, .call = cgroup_kind},
    {"state-dir", 0, "DIR", "leases and state shared with other daemons", SBO_STR, AT(runtime.state_dir)},
    {"toolchains", 0, "DIR", "toolchain files (default $SURGEBOX_TOOLCHAINS, else the installed ones)", SBO_STR, AT(toolchains_dir)},
    {"cache-dir", 0, "DIR", "compile and detection cache (default /var/cache/surgebox as root)", SBO_STR, AT(cache_dir)},
    {"cache-max-mib", 0, "N", "compile cache bound (default 4096)", SBO_INT, AT(cache_max_mib), .min = 1, .max = 1L << 30},
    {"no-cache", 0, NULL, "no compile cache", SBO_FLAG, AT(no_cache)},
    {"profiles-dir", 0, "DIR", "where profiles live", SBO_STR, AT(profiles_dir)},
    {"profile", 0, "NAME", "default root file system of jobs (default host; see surgebox profile)", SBO_STR, AT(profile)},
    {"uid-range", 0, "F-L", "as root, one uid per concurrent job from F-L (default 1879048192-1879052287)", SBO_CALL, .call = uid_range},
    {"stall-grace", 0, "S", "a wall limit excuses up to S seconds (never more than the limit) that the program waited for a CPU other work held (default 5; 0: pure wall clock)",
     SBO_NONNEG, SECONDS(runtime.stall_grace_s)},
    {"pool", 0, "N", "prepared sandbox roots kept per worker (default 8, or $SURGEBOX_POOL; 0: each job builds its own)",
     SBO_INT, AT(runtime.pool), .max = 1024},
    {"http", 0, "ADDR:PORT", "also serve HTTP (SandboxFusion's /run_code, /v1/jobs, /metrics) on ADDR:PORT (repeatable; off by default; a non-loopback ADDR needs --http-token-file)",
     SBO_LIST, SBO_LIST_AT(sbd_config, http.listen, http.n_listen)},
    {"http-token-file", 0, "FILE", "bearer token HTTP clients must send (mode 600; required for a non-loopback --http)", SBO_STR, AT(http.token_file)},
    {"http-languages", 0, "FILE", "SandboxFusion language values -> toolchains (default: the installed http/languages.json)", SBO_STR, AT(http.languages_file)},
    {"http-warm", 0, "on|off", "/run_code's Python starts warm where the request allows it (default on)", SBO_WORD,
     AT(http.warm), .words = (const char *const[]){"on", "off"}},
    {"http-max-connections", 0, "N", "open HTTP connections (default 1024; more are closed at accept)", SBO_INT,
     AT(http.limits.max_connections), .min = 1, .max = 1000000},
    {"http-max-queue", 0, "N", "HTTP requests waiting or running before 503 + Retry-After (default 1024)", SBO_INT,
     AT(http.limits.max_queue), .min = 1, .max = 100000000},
    {"http-max-body-bytes", 0, "BYTES", "largest HTTP request body (default 67108864; larger: 413)", SBO_INT,
     AT(http.limits.max_body_bytes), .min = 1024, .max = 1L << 30},
    {"http-max-header-bytes", 0, "BYTES", "largest request line + headers (default 32768; larger: 431)", SBO_INT,
     AT(http.limits.max_header_bytes), .min = 1024, .max = 1L << 20},
    {"http-header-timeout", 0, "S", "a request's headers must arrive within S seconds (default 10)", SBO_DOUBLE, SECONDS(http.limits.header_timeout_s)},
    {"http-body-timeout", 0, "S", "a request's body must arrive within S seconds (default 60)", SBO_DOUBLE, SECONDS(http.limits.body_timeout_s)},
    {"http-idle-timeout", 0, "S", "an idle keep-alive HTTP connection is closed after S seconds (default 75)", SBO_DOUBLE,
     SECONDS(http.limits.idle_timeout_s)},
    {"http-max-requests", 0, "N", "requests per HTTP connection, then Connection: close (default 10000)", SBO_INT,
     AT(http.limits.max_requests_per_conn), .min = 1, .max = 100000000},
    {"http-start-margin", 0, "S", "/run_code not started within compile + run timeouts + S: 504 (default 30)", SBO_NONNEG,
     SECONDS(http.limits.start_margin_s)},
    {"ready-fd", O_READY, "FD", "write \"ready\\n\" to FD once listening (not in a config file)", SBO_INT, AT(ready_fd), .max = 65535},
    {"config", O_CONFIG, "FILE", "read settings from FILE (default " SBD_SYSTEM_CONFIG " if it exists)"},
    {"version", O_VERSION, NULL, "print the version and exit"},
    {NULL, 0, NULL, NULL}};

static const sbo_cmd cmd = {
    .name = "surgeboxd",
    .about = "The surgebox daemon: runs sandboxed jobs for clients of its Unix socket.",
    .opts = opts,
    .footer = "Config file: 'key = value' lines ('#' comments), keys are the long options (a flag takes\n"
              "true or false); flags given on the command line override it.\n"
              "Signals: SIGHUP detects toolchains again; SIGTERM/SIGINT drain and exit.\n"
              "Exit status: 0 stopped cleanly, 1 usage error, 2 could not start.\n",
    .terse = true,
};

static bool cli_only(int key) { return key == O_CONFIG || key == O_VERSION || key == O_READY; }

static const sbo_opt *find_opt(const char *name) {
  for (const sbo_opt *o = opts; o->name; o++)
    if (strcmp(o->name, name) == 0) return o;
  return NULL;
}

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
  return s;
}

/* The config file's values live as long as the process (the config points into them). */
static char *conf_text;

/* 'key = value' lines, '#' comments; keys are the long options (flags:
 * true/false). 0, or 1 with a "FILE:LINE: ..." usage error printed. */
static int read_config(sbd_config *c, const sbo_parser *p, const char *path, bool must_exist) {
  FILE *f = fopen(path, "r");
  if (!f) {
    if (!must_exist && errno == ENOENT) return 0;
    return sbo_fail(cmd.name, false, SBO_EXIT_USAGE, "cannot read config %s: %s", path, strerror(errno));
  }
  size_t cap = 0, len = 0;
  char line[4096];
  int lineno = 0, rc = 0;
  free(conf_text);
  conf_text = NULL;
  /* values are copied into one buffer that is never freed or moved: count first */
  while (fgets(line, sizeof line, f)) cap += strlen(line) + 1;
  conf_text = malloc(cap + 1);
  rewind(f);
  while (conf_text && rc == 0 && fgets(line, sizeof line, f)) {
    lineno++;
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char *s = trim(line);
    if (!*s) continue;
    char *eq = strchr(s, '=');
    char *key = s, *val = NULL;
    if (eq) {
      *eq = '\0';
      key = trim(s);
      val = trim(eq + 1);
    }
    const sbo_opt *o = find_opt(key);
    if (!o || cli_only(o->key)) {
      rc = sbo_usage_error(p, "%s:%d: unknown key '%s'", path, lineno, key);
      break;
    }
    if (!o->arg) {
      bool on = !val || !strcmp(val, "true") || !strcmp(val, "yes") || !strcmp(val, "1");
      bool off = val && (!strcmp(val, "false") || !strcmp(val, "no") || !strcmp(val, "0"));
      if (!on && !off) rc = sbo_usage_error(p, "%s:%d: %s takes true or false, not '%s'", path, lineno, key, val);
      else if (on) sbo_check(p, o, NULL, c);
      continue;
    }
    if (!val || !*val) {
      rc = sbo_usage_error(p, "%s:%d: %s needs a value ('%s = VALUE')", path, lineno, key, key);
      break;
    }
    char *keep = conf_text + len;
    memcpy(keep, val, strlen(val) + 1);
    len += strlen(val) + 1;
    if (sbo_check(p, o, keep, c) != 0) rc = sbo_usage_error(p, "%s:%d: bad value '%s' for %s", path, lineno, val, key);
  }
  fclose(f);
  if (!conf_text) return sbo_fail(cmd.name, false, SBO_EXIT_FAILURE, "out of memory reading %s", path);
  if (rc == 0) c->config_file = path;
  return rc;
}

/* --config and --version: the command line's own. */
static int own_key(sbo_parser *p, void *arg, int key, const char *val) {
  (void)p;
  if (key == O_CONFIG) *(const char **)arg = val;
  if (key == O_VERSION) printf("surgeboxd %s\n", SURGEBOX_VERSION);
  return key == O_VERSION ? -1 : 0;
}

/* The command line is read first, into a scratch copy (--help, --version
 * and mistakes answered before any file is opened), then the config file,
 * then the flags applied over it in their order. */
int sbd_config_parse(sbd_config *c, int argc, char **argv) {
  /* The daemon's own uid and root are always allowed. */
  c->allow_uid[c->n_allow_uid++] = geteuid();
  if (geteuid() != 0) c->allow_uid[c->n_allow_uid++] = 0;
  sbd_config scratch = *c;
  const char *conf = NULL;
  sbo_parser p;
  int rc = sbo_parse(&p, &cmd, argc, argv, &scratch, own_key, &conf);
  if (rc == 0) rc = sbo_no_args(&p);
  if (rc == 0) rc = read_config(c, &p, conf ? conf : SBD_SYSTEM_CONFIG, conf != NULL);
  if (rc == 0) {
    sbo_done(&p);
    rc = sbo_parse(&p, &cmd, argc, argv, c, NULL, NULL); /* checked above: only a list the file filled can be full */
  }
  /* Checked before the daemon opens anything: a descriptor it did not
   * inherit would be one of its own by the time it writes "ready" and
   * closes it (a slot's cgroup.procs: jobs then failed to join it). */
  if (rc == 0 && c->ready_fd >= 0) {
    if (fcntl(c->ready_fd, F_GETFD) < 0)
      rc = sbo_usage_error(&p, "--ready-fd %d: descriptor %d is not open in this process (give one it inherits)",
                           c->ready_fd, c->ready_fd);
    else
      (void)fcntl(c->ready_fd, F_SETFD, FD_CLOEXEC); /* not the spawner's, the zygote's or a job's */
  }
  sbo_done(&p);
  return rc;
}
