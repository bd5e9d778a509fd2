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

static int parse_double(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v >= 0) || v > 1e9) return -1;
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

/* The options, with their help: the usage is generated from this table (the
 * order here is the order of --help). Config file keys are the same long
 * names, except the command line's own (cli_only). */
enum { O_SOCKET = 256, O_JOBS, O_QUEUE, O_UID, O_GID, O_LOGJSON, O_GRACE, O_MAXLINE, O_CGROUP, O_STATE, O_READY,
       O_QUIET, O_TCDIR, O_CACHEDIR, O_CACHEMAX, O_NOCACHE, O_PROFDIR, O_PROFILE, O_UIDRANGE, O_IDLE, O_SGROUP,
       O_SMODE, O_LOGFILE, O_CONFIG, O_VERSION, O_POOL, O_HTTP, O_HTTP_TOKEN, O_HTTP_LANGS, O_HTTP_WARM,
       O_HTTP_CONNS, O_HTTP_QUEUE, O_HTTP_BODY, O_HTTP_HEADER, O_HTTP_HTIME, O_HTTP_BTIME, O_HTTP_ITIME, O_HTTP_REQS,
       O_HTTP_MARGIN };
static const sbo_opt opts[] = {
    {"socket", O_SOCKET, "PATH", "default /run/surgebox/surgebox.sock as root, else $XDG_RUNTIME_DIR/surgebox.sock"},
    {"socket-group", O_SGROUP, "NAME", "group of the socket file (name or number); its members may connect"},
    {"socket-mode", O_SMODE, "OCTAL", "mode of the socket file (default 0660; 0666 with --allow-uid/--allow-gid)"},
    {"jobs", O_JOBS, "N", "sandboxes at once (default: number of CPUs)"},
    {"max-queue", O_QUEUE, "N", "queued jobs beyond the running ones before 'busy' (default 10000)"},
    {"allow-uid", O_UID, "UID", "a peer allowed besides the daemon's own uid and root (repeatable)"},
    {"allow-gid", O_GID, "GID", "peers whose primary group is GID are allowed (repeatable)"},
    {"log-json", O_LOGJSON, NULL, "log as JSON Lines"},
    {"log-file", O_LOGFILE, "FILE", "once listening, log to FILE instead of stderr"},
    {"quiet", O_QUIET, NULL, "warnings and errors only"},
    {"grace", O_GRACE, "S", "on SIGTERM, how long running jobs may finish (default 30)"},
    {"idle-timeout", O_IDLE, "S", "exit after S seconds with no client and no job (default 0: never)"},
    {"max-line", O_MAXLINE, "BYTES", "longest request line"},
    {"cgroup", O_CGROUP, "KIND", "auto|v2|v1|none"},
    {"state-dir", O_STATE, "DIR", "leases and state shared with other daemons"},
    {"toolchains", O_TCDIR, "DIR", "toolchain files (default $SURGEBOX_TOOLCHAINS, else the installed ones)"},
    {"cache-dir", O_CACHEDIR, "DIR", "compile and detection cache (default /var/cache/surgebox as root)"},
    {"cache-max-mib", O_CACHEMAX, "N", "compile cache bound (default 4096)"},
    {"no-cache", O_NOCACHE, NULL, "no compile cache"},
    {"profiles-dir", O_PROFDIR, "DIR", "where profiles live"},
    {"profile", O_PROFILE, "NAME", "default root file system of jobs (default host; see surgebox profile)"},
    {"uid-range", O_UIDRANGE, "F-L", "as root, one uid per concurrent job from F-L (default 1879048192-1879052287)"},
    {"pool", O_POOL, "N", "prepared sandbox roots kept per worker (default 8, or $SURGEBOX_POOL; 0: each job builds its own)"},
    {"http", O_HTTP, "ADDR:PORT", "also serve HTTP (SandboxFusion's /run_code, /v1/jobs, /metrics) on ADDR:PORT (repeatable; off by default; a non-loopback ADDR needs --http-token-file)"},
    {"http-token-file", O_HTTP_TOKEN, "FILE", "bearer token HTTP clients must send (mode 600; required for a non-loopback --http)"},
    {"http-languages", O_HTTP_LANGS, "FILE", "SandboxFusion language values -> toolchains (default: the installed http/languages.json)"},
    {"http-warm", O_HTTP_WARM, "on|off", "/run_code's Python starts warm where the request allows it (default on)"},
    {"http-max-connections", O_HTTP_CONNS, "N", "open HTTP connections (default 1024; more are closed at accept)"},
    {"http-max-queue", O_HTTP_QUEUE, "N", "HTTP requests waiting or running before 503 + Retry-After (default 1024)"},
    {"http-max-body-bytes", O_HTTP_BODY, "BYTES", "largest HTTP request body (default 67108864; larger: 413)"},
    {"http-max-header-bytes", O_HTTP_HEADER, "BYTES", "largest request line + headers (default 32768; larger: 431)"},
    {"http-header-timeout", O_HTTP_HTIME, "S", "a request's headers must arrive within S seconds (default 10)"},
    {"http-body-timeout", O_HTTP_BTIME, "S", "a request's body must arrive within S seconds (default 60)"},
    {"http-idle-timeout", O_HTTP_ITIME, "S", "an idle keep-alive HTTP connection is closed after S seconds (default 75)"},
    {"http-max-requests", O_HTTP_REQS, "N", "requests per HTTP connection, then Connection: close (default 10000)"},
    {"http-start-margin", O_HTTP_MARGIN, "S", "/run_code not started within compile + run timeouts + S: 504 (default 30)"},
    {"ready-fd", O_READY, "FD", "write \"ready\\n\" to FD once listening (not in a config file)"},
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
};

/* One option's value into c: 0, or 1 for a bad value. */
static int apply(sbd_config *c, int o, const char *arg) {
  unsigned long v = 0;
  bool bad = false;
  switch (o) {
  case O_SOCKET: c->socket_path = arg; break;
  case O_JOBS: bad = parse_ul(arg, 4096, &v) < 0 || v == 0; c->jobs = (int)v; break;
  case O_QUEUE: bad = parse_ul(arg, 100000000, &v) < 0; c->max_queue = v; break;
  case O_UID:
    bad = parse_ul(arg, 0xfffffffe, &v) < 0 || c->n_allow_uid >= SBD_MAX_ALLOW;
    if (!bad) c->allow_uid[c->n_allow_uid++] = (uid_t)v;
    break;
  case O_GID:
    bad = parse_ul(arg, 0xfffffffe, &v) < 0 || c->n_allow_gid >= SBD_MAX_ALLOW;
    if (!bad) c->allow_gid[c->n_allow_gid++] = (gid_t)v;
    break;
  case O_LOGJSON: c->log_json = true; break;
  case O_GRACE: bad = parse_double(arg, &c->grace_s) < 0; break;
  case O_MAXLINE: bad = parse_ul(arg, (unsigned long)SBP_DEFAULT_MAX_LINE * 16, &v) < 0 || v < 1024; c->max_line = v; break;
  case O_CGROUP: bad = sb_cgroup_kind_parse(arg, &c->runtime.cgroup) < 0; break;
  case O_STATE: c->runtime.state_dir = arg; break;
  case O_READY: bad = parse_ul(arg, 65535, &v) < 0; c->ready_fd = (int)v; break;
  case O_QUIET: c->quiet = true; break;
  case O_TCDIR: c->toolchains_dir = arg; break;
  case O_CACHEDIR: c->cache_dir = arg; break;
  case O_CACHEMAX: bad = parse_ul(arg, 1ul << 30, &v) < 0 || v == 0; c->cache_max_mib = v; break;
  case O_NOCACHE: c->no_cache = true; break;
  case O_PROFDIR: c->profiles_dir = arg; break;
  case O_PROFILE: c->profile = arg; break;
  case O_UIDRANGE: bad = sb_uid_range_parse(arg, &c->runtime.uid_first, &c->runtime.uid_count) < 0; break;
  case O_IDLE: bad = parse_double(arg, &c->idle_timeout_s) < 0; break;
  case O_SGROUP:
    bad = parse_group(arg, &c->socket_gid) < 0;
    c->has_socket_gid = !bad;
    c->socket_group = arg;
    break;
  case O_SMODE: {
    char *end;
    errno = 0;
    long m = strtol(arg, &end, 8);
    bad = errno || end == arg || *end || m < 0 || m > 0777;
    c->socket_mode = (int)m;
    break;
  }
  case O_LOGFILE: c->log_file = arg; break;
  case O_POOL: bad = parse_ul(arg, 1024, &v) < 0; c->runtime.pool = (int)v; break;
  case O_HTTP:
    bad = c->http.n_listen >= SBH_MAX_LISTEN;
    if (!bad) c->http.listen[c->http.n_listen++] = arg;
    break;
  case O_HTTP_TOKEN: c->http.token_file = arg; break;
  case O_HTTP_LANGS: c->http.languages_file = arg; break;
  case O_HTTP_WARM:
    bad = strcmp(arg, "on") != 0 && strcmp(arg, "off") != 0;
    c->http.warm = strcmp(arg, "on") == 0;
    break;
  case O_HTTP_CONNS: bad = parse_ul(arg, 1000000, &v) < 0 || v == 0; c->http.limits.max_connections = v; break;
  case O_HTTP_QUEUE: bad = parse_ul(arg, 100000000, &v) < 0 || v == 0; c->http.limits.max_queue = v; break;
  case O_HTTP_BODY: bad = parse_ul(arg, 1ul << 30, &v) < 0 || v < 1024; c->http.limits.max_body_bytes = v; break;
  case O_HTTP_HEADER: bad = parse_ul(arg, 1ul << 20, &v) < 0 || v < 1024; c->http.limits.max_header_bytes = v; break;
  case O_HTTP_HTIME: bad = parse_double(arg, &c->http.limits.header_timeout_s) < 0 || !(c->http.limits.header_timeout_s > 0); break;
  case O_HTTP_BTIME: bad = parse_double(arg, &c->http.limits.body_timeout_s) < 0 || !(c->http.limits.body_timeout_s > 0); break;
  case O_HTTP_ITIME: bad = parse_double(arg, &c->http.limits.idle_timeout_s) < 0 || !(c->http.limits.idle_timeout_s > 0); break;
  case O_HTTP_REQS: bad = parse_ul(arg, 100000000, &v) < 0 || v == 0; c->http.limits.max_requests_per_conn = v; break;
  case O_HTTP_MARGIN: bad = parse_double(arg, &c->http.limits.start_margin_s) < 0; break;
  case O_CONFIG: break; /* read before everything else */
  case O_VERSION: break; /* answered while the command line is read */
  }
  return bad ? 1 : 0;
}

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
      else if (on) apply(c, o->key, NULL);
      continue;
    }
    if (!val || !*val) {
      rc = sbo_usage_error(p, "%s:%d: %s needs a value ('%s = VALUE')", path, lineno, key, key);
      break;
    }
    char *keep = conf_text + len;
    memcpy(keep, val, strlen(val) + 1);
    len += strlen(val) + 1;
    if (apply(c, o->key, keep) != 0) rc = sbo_usage_error(p, "%s:%d: bad value '%s' for %s", path, lineno, val, key);
  }
  fclose(f);
  if (!conf_text) return sbo_fail(cmd.name, false, SBO_EXIT_FAILURE, "out of memory reading %s", path);
  if (rc == 0) c->config_file = path;
  return rc;
}

/* The command line is read first (--help, --version and mistakes answered
 * before any file is opened), then the config file, then the flags applied
 * over it in their order. */
int sbd_config_parse(sbd_config *c, int argc, char **argv) {
  /* The daemon's own uid and root are always allowed. */
  c->allow_uid[c->n_allow_uid++] = geteuid();
  if (geteuid() != 0) c->allow_uid[c->n_allow_uid++] = 0;
  int *keys = calloc((size_t)argc + 1, sizeof *keys);
  const char **vals = calloc((size_t)argc + 1, sizeof *vals);
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return sbo_fail(cmd.name, false, SBO_EXIT_FAILURE, "out of memory");
  }
  sbo_parser p;
  sbo_init(&p, &cmd, argc, argv);
  int n = 0, k, rc = 0;
  const char *val, *conf = NULL;
  while ((k = sbo_next(&p, &val)) > 0) {
    if (k == O_VERSION) {
      printf("surgeboxd %s\n", SURGEBOX_VERSION);
      break;
    }
    if (k == O_CONFIG) conf = val;
    keys[n] = k;
    vals[n++] = val;
  }
  if (k == SBO_STOP) rc = p.status == SBO_EXIT_OK ? -1 : p.status;
  else if (k == O_VERSION) rc = -1;
  else rc = sbo_no_args(&p);
  if (rc == 0) rc = read_config(c, &p, conf ? conf : SBD_SYSTEM_CONFIG, conf != NULL);
  for (int i = 0; rc == 0 && i < n; i++)
    if (apply(c, keys[i], vals[i]) != 0) rc = sbo_bad_value(&p, keys[i], vals[i]);
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
  free(keys);
  free(vals);
  return rc;
}
