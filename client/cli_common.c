/* What every daemon-talking command shares: global options, request ids, the
 * round trip and its error reporting. */
#include "cli.h"
#include "client.h"
#include "protocol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const sbo_opt sbc_daemon_opts[] = {
    {"socket", SBC_O_SOCKET, "PATH", "the daemon's socket (default: $SURGEBOX_SOCKET, else the system's)"},
    {"no-autostart", SBC_O_NO_AUTOSTART, NULL, "fail instead of starting a private daemon when none listens"},
    {"profile", SBC_O_PROFILE, "NAME", "run jobs in this root file system (surgebox profile)"},
    {NULL, 0, NULL, NULL}};
const sbo_opt *const sbc_daemon_groups[] = {sbc_daemon_opts, NULL};
const sbo_opt sbc_endpoints_opts[] = {
    {"endpoints", SBC_O_ENDPOINTS, "FILE|LIST",
     "run the jobs on a fleet of daemons (default: $SURGEBOX_ENDPOINTS unless --socket; docs/clusters.md)"},
    {NULL, 0, NULL, NULL}};
const sbo_opt sbc_fleet_timing_opts[] = {
    {"answer-margin", SBC_O_ANSWER_MARGIN, "S",
     "on a fleet: a job unanswered by its limits + 2 x its daemon's p99 queue time + S seconds takes the daemon out "
     "as hung (default 60)"},
    {"probe-timeout", SBC_O_PROBE_TIMEOUT, "S", "on a fleet: a daemon whose probe is unanswered for S seconds is taken "
     "out (default 3)"},
    {NULL, 0, NULL, NULL}};
const sbo_opt sbc_socket_opts[] = {
    {"socket", SBC_O_SOCKET, "PATH", "the daemon's socket (default: $SURGEBOX_SOCKET, else the system's)"},
    {"no-autostart", SBC_O_NO_AUTOSTART, NULL, "fail instead of starting a private daemon when none listens"},
    {"profile", SBC_O_PROFILE, "NAME", NULL}, /* hidden: refused with the reason (sbc_refuse) */
    {NULL, 0, NULL, NULL}};

/* The global options only some commands take: the bit in sbc_ctx.given that
 * says the user wrote one, and the commands it applies to (SBC_CMD_*). */
static const struct {
  int key;
  unsigned given, applies;
  const char *name;
} scoped_opts[] = {
    {SBC_O_SOCKET, SBC_GIVEN_SOCKET, SBC_CMD_DAEMON, "--socket"},
    {SBC_O_NO_AUTOSTART, SBC_GIVEN_NO_AUTOSTART, SBC_CMD_DAEMON, "--no-autostart"},
    {SBC_O_PROFILE, SBC_GIVEN_PROFILE, SBC_CMD_PROFILE, "--profile"},
    {SBC_O_ENDPOINTS, SBC_GIVEN_ENDPOINTS, SBC_CMD_FLEET, "--endpoints"},
};
#define N_SCOPED (sizeof scoped_opts / sizeof scoped_opts[0])

const char *sbc_refused_option(unsigned given, unsigned flags) {
  for (size_t i = 0; i < N_SCOPED; i++)
    if ((given & scoped_opts[i].given) && !(flags & scoped_opts[i].applies)) return scoped_opts[i].name;
  return NULL;
}

int sbc_refuse(const sbo_parser *p, const char *opt, const char *cmd, unsigned flags) {
  if (!strcmp(opt, "--endpoints"))
    return sbo_usage_error(p, "--endpoints does not apply to '%s' (a fleet runs the benchmark commands: batch, verify, "
                           "regen, ...); drop it", cmd);
  return sbo_usage_error(p, "%s does not apply to '%s' (it %s); drop it", opt, cmd,
                         flags & SBC_CMD_DAEMON ? "runs no jobs in a root file system" : "talks to no daemon");
}

void sbc_ctx_init(sbc_ctx *ctx) {
  memset(ctx, 0, sizeof *ctx);
  ctx->autostart = true;
  const char *env = getenv("SURGEBOX_SOCKET");
  if (env && *env) ctx->socket = env;
  env = getenv("SURGEBOX_ENDPOINTS");
  if (env && *env) ctx->endpoints = env;
}

bool sbc_ctx_apply(sbc_ctx *ctx, int key, const char *val) {
  switch (key) {
  case SBC_O_SOCKET: ctx->socket = val; break;
  case SBC_O_NO_AUTOSTART: ctx->autostart = false; break;
  case SBC_O_PROFILE: ctx->profile = val; break;
  case SBC_O_ENDPOINTS: ctx->endpoints = val; break;
  case SBC_O_ANSWER_MARGIN: ctx->answer_margin = val; break;
  case SBC_O_PROBE_TIMEOUT: ctx->probe_timeout = val; break;
  default: return false;
  }
  for (size_t i = 0; i < N_SCOPED; i++)
    if (scoped_opts[i].key == key) ctx->given |= scoped_opts[i].given;
  return true;
}

int sbc_ctx_key(sbo_parser *p, void *ctx, int key, const char *val) {
  (void)p;
  sbc_ctx_apply(ctx, key, val);
  return 0;
}

json_object *sbc_request_new(const char *type) {
  static unsigned seq;
  char id[64];
  snprintf(id, sizeof id, "%s-%ld-%u", type, (long)getpid(), ++seq);
  json_object *req = json_object_new_object();
  json_object_object_add(req, "id", json_object_new_string(id));
  json_object_object_add(req, "type", json_object_new_string(type));
  return req;
}

int sbc_roundtrip(const sbc_ctx *g, const char *name, bool json, json_object *req, json_object **resp) {
  return sbc_roundtrip_started(g, name, json, req, resp, NULL);
}

int sbc_roundtrip_started(const sbc_ctx *g, const char *name, bool json, json_object *req, json_object **resp,
                          bool *started) {
  sbc_conn c;
  char err[512];
  *resp = NULL;
  if (sbc_open_ctx(&c, g, NULL, err, sizeof err) < 0)
    return sbo_fail(name, json, SBO_EXIT_FAILURE, "%s", err);
  if (started) *started = c.started;
  int rc = sbc_send(&c, req);
  /* after a failed send too: a daemon that refused us said why before it closed */
  *resp = sbc_recv(&c);
  (void)rc;
  sbc_close(&c);
  return sbc_answer_status(name, json, resp, c.socket_path);
}

int sbc_answer_status(const char *name, bool json, json_object **resp, const char *socket_path) {
  if (!*resp) return sbo_fail(name, json, SBO_EXIT_FAILURE, "no answer from the daemon at %s", socket_path);
  const char *code = sbp_response_error_code(*resp);
  if (!code) return 0;
  json_object *e = NULL, *m = NULL;
  json_object_object_get_ex(*resp, "error", &e);
  if (e) json_object_object_get_ex(e, "message", &m);
  int rc = sbo_fail(name, json, SBO_EXIT_FAILURE, "%s: %s", code, m ? json_object_get_string(m) : "");
  json_object_put(*resp);
  *resp = NULL;
  return rc;
}

void sbc_print_json(json_object *o) {
  puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
}
