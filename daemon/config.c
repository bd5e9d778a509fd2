/* surgeboxd's command line. */
#include "internal.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sbd_config_default(sbd_config *c) {
  memset(c, 0, sizeof *c);
  c->max_queue = 10000;
  c->grace_s = 30;
  c->max_line = SBP_DEFAULT_MAX_LINE;
  c->ready_fd = -1;
  c->cache_max_mib = 4096;
  sb_runtime_options_default(&c->runtime);
}

/* sb_host_euid: an unprivileged runtime is uid 0 of its own user namespace. */
void sbd_default_socket(char *out, size_t cap) {
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  if (sb_host_euid() == 0) snprintf(out, cap, "/run/surgebox/surgebox.sock");
  else if (xdg && *xdg) snprintf(out, cap, "%s/surgebox.sock", xdg);
  else snprintf(out, cap, "/tmp/surgebox-%u/surgebox.sock", (unsigned)sb_host_euid());
}

void sbd_default_cache_dir(char *out, size_t cap) {
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (sb_host_euid() == 0) snprintf(out, cap, "/var/cache/surgebox");
  else if (xdg && *xdg) snprintf(out, cap, "%s/surgebox", xdg);
  else snprintf(out, cap, "%s/.cache/surgebox", home && *home ? home : "/tmp");
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: surgeboxd [--socket PATH] [--jobs N] [--max-queue N] [--allow-uid UID]...\n"
          "                 [--allow-gid GID]... [--log-json] [--grace S] [--max-line BYTES]\n"
          "                 [--cgroup auto|v2|v1|none] [--state-dir DIR] [--quiet]\n"
          "                 [--toolchains DIR] [--cache-dir DIR] [--cache-max-mib N] [--no-cache]\n"
          "                 [--profiles-dir DIR] [--profile NAME] [--uid-range FIRST-LAST]\n"
          "  --socket PATH    default /run/surgebox/surgebox.sock as root, else $XDG_RUNTIME_DIR/surgebox.sock\n"
          "  --jobs N         sandboxes at once (default: number of CPUs)\n"
          "  --max-queue N    queued jobs beyond the running ones before 'busy' (default 10000)\n"
          "  --allow-uid/gid  peers allowed besides the daemon's own uid and root\n"
          "  --grace S        on SIGTERM, how long running jobs may finish (default 30)\n"
          "  --toolchains DIR toolchain files (default $SURGEBOX_TOOLCHAINS, else the installed ones)\n"
          "  --cache-dir DIR  compile cache and toolchain detection cache (default /var/cache/surgebox as root)\n"
          "  --profile NAME   default root file system of jobs (default host; see surgebox profile)\n"
          "  --uid-range F-L  as root, one uid per concurrent job from F-L (default 1879048192-1879052287)\n"
          "  --pool N         prepared sandbox roots kept per worker (default 8, or $SURGEBOX_POOL; 0: each job builds its own)\n"
          "  SIGHUP           detect toolchains again\n");
}

static int parse_ul(const char *s, unsigned long max, unsigned long *out) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || end == s || *end || s[0] == '-' || v > max) return -1;
  *out = v;
  return 0;
}

int sbd_config_parse(sbd_config *c, int argc, char **argv) {
  enum { O_SOCKET = 256, O_JOBS, O_QUEUE, O_UID, O_GID, O_LOGJSON, O_GRACE, O_MAXLINE, O_CGROUP, O_STATE, O_READY, O_QUIET, O_TCDIR, O_CACHEDIR, O_CACHEMAX, O_NOCACHE, O_PROFDIR, O_PROFILE, O_UIDRANGE, O_HELP, O_POOL };
  static const struct option opts[] = {
      {"socket", required_argument, 0, O_SOCKET},   {"jobs", required_argument, 0, O_JOBS},
      {"max-queue", required_argument, 0, O_QUEUE}, {"allow-uid", required_argument, 0, O_UID},
      {"allow-gid", required_argument, 0, O_GID},   {"log-json", no_argument, 0, O_LOGJSON},
      {"grace", required_argument, 0, O_GRACE},     {"max-line", required_argument, 0, O_MAXLINE},
      {"cgroup", required_argument, 0, O_CGROUP},   {"state-dir", required_argument, 0, O_STATE},
      {"ready-fd", required_argument, 0, O_READY},  {"quiet", no_argument, 0, O_QUIET},
      {"toolchains", required_argument, 0, O_TCDIR}, {"cache-dir", required_argument, 0, O_CACHEDIR},
      {"cache-max-mib", required_argument, 0, O_CACHEMAX}, {"no-cache", no_argument, 0, O_NOCACHE},
      {"profiles-dir", required_argument, 0, O_PROFDIR}, {"profile", required_argument, 0, O_PROFILE},
      {"uid-range", required_argument, 0, O_UIDRANGE},
      {"pool", required_argument, 0, O_POOL},
      {"help", no_argument, 0, O_HELP},             {0, 0, 0, 0}};
  /* The daemon's own uid and root are always allowed. */
  c->allow_uid[c->n_allow_uid++] = geteuid();
  if (geteuid() != 0) c->allow_uid[c->n_allow_uid++] = 0;
  int o;
  unsigned long v;
  optind = 1;
  while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    bool bad = false;
    switch (o) {
    case O_SOCKET: c->socket_path = optarg; break;
    case O_JOBS: bad = parse_ul(optarg, 4096, &v) < 0 || v == 0; c->jobs = (int)v; break;
    case O_QUEUE: bad = parse_ul(optarg, 100000000, &v) < 0; c->max_queue = v; break;
    case O_UID:
      bad = parse_ul(optarg, 0xfffffffe, &v) < 0 || c->n_allow_uid >= SBD_MAX_ALLOW;
      if (!bad) c->allow_uid[c->n_allow_uid++] = (uid_t)v;
      break;
    case O_GID:
      bad = parse_ul(optarg, 0xfffffffe, &v) < 0 || c->n_allow_gid >= SBD_MAX_ALLOW;
      if (!bad) c->allow_gid[c->n_allow_gid++] = (gid_t)v;
      break;
    case O_LOGJSON: c->log_json = true; break;
    case O_GRACE: {
      char *end;
      c->grace_s = strtod(optarg, &end);
      bad = *end || end == optarg || c->grace_s < 0;
      break;
    }
    case O_MAXLINE: bad = parse_ul(optarg, (unsigned long)SBP_DEFAULT_MAX_LINE * 16, &v) < 0 || v < 1024; c->max_line = v; break;
    case O_CGROUP: bad = sb_cgroup_kind_parse(optarg, &c->runtime.cgroup) < 0; break;
    case O_STATE: c->runtime.state_dir = optarg; break;
    case O_READY: bad = parse_ul(optarg, 65535, &v) < 0; c->ready_fd = (int)v; break;
    case O_QUIET: c->quiet = true; break;
    case O_TCDIR: c->toolchains_dir = optarg; break;
    case O_CACHEDIR: c->cache_dir = optarg; break;
    case O_CACHEMAX: bad = parse_ul(optarg, 1ul << 30, &v) < 0 || v == 0; c->cache_max_mib = v; break;
    case O_NOCACHE: c->no_cache = true; break;
    case O_PROFDIR: c->profiles_dir = optarg; break;
    case O_PROFILE: c->profile = optarg; break;
    case O_UIDRANGE: bad = sb_uid_range_parse(optarg, &c->runtime.uid_first, &c->runtime.uid_count) < 0; break;
    case O_POOL: bad = parse_ul(optarg, 1024, &v) < 0; c->runtime.pool = (int)v; break;
    case O_HELP: usage(stdout); return -1;
    default: usage(stderr); return 1;
    }
    if (bad) {
      fprintf(stderr, "surgeboxd: bad value for an option: %s\n", optarg);
      return 1;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "surgeboxd: unexpected argument %s\n", argv[optind]);
    return 1;
  }
  return 0;
}
