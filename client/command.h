/* Commands as entries (tmux's cmd_entry is the model): every `surgebox`
 * command is a name, a summary, flags saying which global option groups
 * apply to it, and a main that parses its argv into the command's own
 * options struct and calls its X_run(ctx, opts). Commands never call one
 * another's main: a command that needs another's work calls its X_run with
 * an options struct. cli/surgebox.c holds the table. Prefix sbc_. */
#ifndef SURGEBOX_COMMAND_H
#define SURGEBOX_COMMAND_H

#include "cliopt.h"

#include <stdbool.h>

/* The global options, as given before or after a command's name. */
typedef struct {
  const char *socket;   /* --socket PATH, else $SURGEBOX_SOCKET, else NULL (the default socket);
                         * a named one: never start a daemon beside it */
  bool autostart;       /* false after --no-autostart */
  const char *profile;  /* --profile NAME, else NULL (the daemon's default root) */
  const char *endpoints; /* --endpoints FILE|LIST, else $SURGEBOX_ENDPOINTS, else NULL: a fleet
                          * (client/fleet.h) for the commands that take one (SBC_CMD_FLEET) */
  const char *answer_margin, *probe_timeout; /* --answer-margin S, --probe-timeout S: the fleet's, as given */
  unsigned given;       /* SBC_GIVEN_* bits: which of them the user wrote */
} sbc_ctx;

enum { SBC_GIVEN_SOCKET = 1u << 0, SBC_GIVEN_NO_AUTOSTART = 1u << 1, SBC_GIVEN_PROFILE = 1u << 2,
       SBC_GIVEN_ENDPOINTS = 1u << 3 };

/* What a command is, for the table and for refusing global options that do not apply. */
enum {
  SBC_CMD_DAEMON = 1u << 0,    /* talks to a daemon: takes --socket and --no-autostart */
  SBC_CMD_AUTOSTART = 1u << 1, /* may start a private daemon when the default socket has none */
  SBC_CMD_PROFILE = 1u << 2,   /* its jobs run in a root file system: takes --profile */
  SBC_CMD_SHARDABLE = 1u << 3, /* takes --shard I/N|auto and --shards N */
  SBC_CMD_FLEET = 1u << 4,     /* may run its jobs on a fleet: takes --endpoints (issue 39) */
};

typedef struct {
  const char *name, *summary;
  unsigned flags;
  int (*main)(const sbc_ctx *ctx, int argc, char **argv); /* argv[0] is the command's name */
} sbc_command;

/* The daemon group (--socket, --no-autostart, --profile), declared once:
 * put it in a command's sbo_cmd.groups, and hand every key sbo_next returns
 * to sbc_ctx_apply. */
enum { SBC_O_SOCKET = 0x7000, SBC_O_NO_AUTOSTART, SBC_O_PROFILE, SBC_O_ENDPOINTS, SBC_O_ANSWER_MARGIN,
       SBC_O_PROBE_TIMEOUT };
extern const sbo_opt sbc_daemon_opts[];
/* That group alone as an sbo_cmd.groups (its keys: sbc_ctx_key). */
extern const sbo_opt *const sbc_daemon_groups[];
/* --endpoints FILE|LIST (issue 39), its own group: only the commands that
 * may run on a fleet (SBC_CMD_FLEET: the benchmark driver's) list it; its key
 * goes to sbc_ctx_apply too. */
extern const sbo_opt sbc_endpoints_opts[];
/* --answer-margin S and --probe-timeout S, the fleet's timing: only the
 * benchmark driver's commands list this group (after --endpoints'). */
extern const sbo_opt sbc_fleet_timing_opts[];
/* --socket and --no-autostart (and --profile hidden, to be refused with
 * sbc_refuse): commands that run no jobs (status, ping, metrics). */
extern const sbo_opt sbc_socket_opts[];
/* Which of the global options in `given` (SBC_GIVEN_*) does not apply to a
 * command with these flags (SBC_CMD_*): "--socket", ..., or NULL. */
const char *sbc_refused_option(unsigned given, unsigned flags);
/* The usage error for it: "OPT does not apply to 'CMD' (it ...); drop it". */
int sbc_refuse(const sbo_parser *p, const char *opt, const char *cmd, unsigned flags);
/* The ctx every command starts from: $SURGEBOX_SOCKET and
 * $SURGEBOX_ENDPOINTS read, autostart on. */
void sbc_ctx_init(sbc_ctx *ctx);
/* Apply one of sbc_daemon_opts; false if key is not one of them. */
bool sbc_ctx_apply(sbc_ctx *ctx, int key, const char *val);
/* The same as sbo_parse's key callback (ctx: the sbc_ctx). */
int sbc_ctx_key(sbo_parser *p, void *ctx, int key, const char *val);

#endif
