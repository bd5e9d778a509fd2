/* surgeboxd: the libuv daemon (prefix sbd_).
 *
 * Ownership, libuv style: the server owns connections and jobs; a
 * connection owns its queued jobs; a running job holds a reference on its
 * connection so a disconnect never frees what a callback still uses. Every
 * handle is closed with uv_close and freed in its close callback. */
#ifndef SURGEBOX_DAEMON_H
#define SURGEBOX_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox.h"
#include "http.h"

#define SBD_MAX_ALLOW 32

typedef struct {
  const char *socket_path;  /* NULL: default (see sbu_default_socket) */
  int jobs;                 /* concurrent sandboxes; 0: number of CPUs */
  size_t max_queue;         /* queued jobs beyond the running ones */
  uid_t allow_uid[SBD_MAX_ALLOW];
  size_t n_allow_uid;
  gid_t allow_gid[SBD_MAX_ALLOW];
  size_t n_allow_gid;
  bool log_json;
  double grace_s;           /* SIGTERM: how long running jobs may finish */
  size_t max_line;          /* request line cap */
  sb_runtime_options runtime;
  int ready_fd;             /* >= 0: write "ready\n" there once listening, then close */
  bool quiet;               /* warnings and errors only (the embedded daemon) */
  const char *toolchains_dir; /* NULL: sbt_default_dir() */
  const char *cache_dir;    /* NULL: default (see sbd_default_cache_dir) */
  uint64_t cache_max_mib;   /* compile cache bound */
  bool no_cache;
  const char *profiles_dir; /* NULL: sbf_default_dir() */
  const char *profile;      /* the default profile of jobs that name none (NULL: host) */
  double idle_timeout_s;    /* > 0: exit after this long with no client and no job */
  const char *socket_group; /* --socket-group as given */
  gid_t socket_gid;         /* resolved; valid when has_socket_gid */
  bool has_socket_gid;
  int socket_mode;          /* --socket-mode; -1: 0660, or 0666 with extra allow entries */
  const char *log_file;     /* once listening, stderr goes here (the lingering private daemon) */
  const char *config_file;  /* the file that was read, NULL if none */
  sbh_options http;         /* --http ADDR:PORT ... (n_listen 0: no HTTP front) */
} sbd_config;

void sbd_config_default(sbd_config *c);
/* Parse surgeboxd's command line, after the config file (--config FILE, or
 * /etc/surgebox/surgeboxd.conf when it exists and no --config is given;
 * flags override it). Returns 0, 1 for a usage error (one line printed), or
 * -1 when --help or --version was printed. */
int sbd_config_parse(sbd_config *c, int argc, char **argv);
#define SBD_SYSTEM_CONFIG "/etc/surgebox/surgeboxd.conf"

/* The runtime directory and default socket: common/runtime_paths.h (sbu_). */
/* Leases shared with other surgebox processes: <runtime dir>/state
 * ($XDG_RUNTIME_DIR/surgebox/state when that is the runtime dir). */
void sbd_default_state_dir(char *out, size_t cap);

/* /var/cache/surgebox as root, else $XDG_CACHE_HOME/surgebox or ~/.cache/surgebox;
 * when that cannot be written (root of a user namespace), the user's one. */
void sbd_default_cache_dir(char *out, size_t cap);

/* Run until SIGTERM/SIGINT. Returns the process exit code. */
int sbd_run(sbd_config *c);

#endif
