/* surgebox status, toolchains and ping: one request each, a human form by
 * default and the daemon's answer under --json. */
#include "cli.h"
#include "client.h"

#include <stdio.h>
#include <string.h>

enum { O_JSON = 256 };
static const sbo_opt json_opt[] = {{"json", O_JSON, NULL, "print the daemon's answer (and errors) as JSON on stdout"},
                                   {NULL, 0, NULL, NULL}};
static const sbo_cmd status_cmd = {"surgebox status", "[--json]", "The daemon's state and counters.", json_opt,
                                   sbc_socket_opts, NULL, false, NULL};
static const sbo_cmd toolchains_cmd = {
    "surgebox toolchains", "[--json]",
    "The toolchains the daemon found, their options (default first) and what to install for the others.", json_opt,
    sbc_daemon_opts, NULL, false, NULL};
static const sbo_cmd ping_cmd = {"surgebox ping", "[--json]",
                                 "Check that a daemon answers (never starts one: exit 2 when none listens).", json_opt,
                                 sbc_socket_opts, NULL, false, NULL};

static const char *str(json_object *o, const char *key) {
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : NULL;
}

/* Parse [--json] plus the global options that apply (flags: SBC_CMD_*);
 * true to go on, else *rc is the exit. */
static bool parse(const sbo_cmd *cmd, unsigned flags, sbc_ctx *g, int argc, char **argv, bool *json, int *rc) {
  sbo_parser p;
  sbo_init(&p, cmd, argc, argv);
  *json = p.json;
  int k = SBO_END;
  const char *v;
  *rc = 0;
  while (*rc == 0 && (k = sbo_next(&p, &v)) > 0) {
    if (k == O_JSON) continue;
    sbc_ctx g2 = {0};
    sbc_ctx_apply(&g2, k, v);
    const char *bad = sbc_refused_option(g2.given, flags);
    if (bad) *rc = sbc_refuse(&p, bad, argv[0], flags);
    else sbc_ctx_apply(g, k, v);
  }
  if (*rc == 0) *rc = k == SBO_STOP ? p.status : p.n_pos || p.dashdash ? sbo_usage_error(&p, "takes no arguments") : 0;
  bool go = k != SBO_STOP && *rc == 0;
  sbo_done(&p);
  return go;
}

/* A field as text for people: "?" when the daemon did not send it. */
static const char *sv(json_object *o, const char *key) {
  const char *v = str(o, key);
  return v ? v : "?";
}

static void print_queue_time(json_object *r) {
  json_object *q = NULL;
  if (!json_object_object_get_ex(r, "queue_time", &q) || !q) return;
  if (str(q, "p50_s"))
    printf("queue time: p50 %s s, p99 %s s (the last %s jobs started within %s s)\n", sv(q, "p50_s"), sv(q, "p99_s"),
           sv(q, "window_jobs"), sv(q, "window_s"));
  else
    printf("queue time: no job started in the last %s s\n", sv(q, "window_s"));
}

static void print_status(json_object *r) {
  json_object *ur = NULL, *w = NULL, *dr = NULL;
  bool draining = json_object_object_get_ex(r, "draining", &dr) && json_object_get_boolean(dr);
  printf("surgeboxd %s (pid %s), up %s s%s\n", sv(r, "version"), sv(r, "pid"), sv(r, "uptime_s"),
         draining ? ", draining" : "");
  printf("jobs: %s running, %s queued (at most %s and %s); %s done, %s refused as busy\n", sv(r, "running"),
         sv(r, "queued"), sv(r, "max_running"), sv(r, "max_queued"), sv(r, "jobs_done"), sv(r, "rejected_busy"));
  print_queue_time(r);
  if (str(r, "connections")) printf("connections: %s open, %s since start\n", sv(r, "connections"), sv(r, "connections_total"));
  printf("cgroup: %s\n", sv(r, "cgroup"));
  if (json_object_object_get_ex(r, "uid_range", &ur) && ur)
    printf("uids: %s from %s, %s in use\n", sv(ur, "count"), sv(ur, "first"), sv(ur, "in_use"));
  else
    printf("uids: one (the daemon is not root)\n");
  json_object *sp = NULL;
  if (str(r, "pool")) printf("pool: %s\n", sv(r, "pool"));
  if (json_object_object_get_ex(r, "self_proof", &sp) && sp)
    printf("self-proof at start: %s ms (cgroup %s, uid range %s)\n", sv(sp, "ms"), sv(sp, "cgroup"), sv(sp, "uid_range"));
  json_object *tot = NULL;
  if (json_object_object_get_ex(r, "totals", &tot) && tot && json_object_is_type(tot, json_type_object)) {
    printf("finished:");
    json_object_object_foreach(tot, key, val) printf(" %s %s", key, json_object_get_string(val));
    printf("\n");
  }
  json_object_object_get_ex(r, "warnings", &w);
  for (size_t i = 0; w && i < json_object_array_length(w); i++)
    printf("warning: %s\n", json_object_get_string(json_object_array_get_idx(w, i)));
}

static void print_toolchains(json_object *resp) {
  json_object *list = json_object_object_get(resp, "toolchains");
  printf("%-14s %-10s %-9s %-12s %-30s %s\n", "name", "language", "version", "available", "language level",
         "path / how to install");
  for (size_t i = 0; list && i < json_object_array_length(list); i++) {
    json_object *t = json_object_array_get_idx(list, i), *v, *opts = NULL, *defs = NULL;
    bool avail = json_object_object_get_ex(t, "available", &v) && json_object_get_boolean(v);
    const char *path = str(t, avail ? "path" : "install"), *ver = str(t, "version"), *level = str(t, "language_level");
    printf("%-14s %-10s %-9s %-12s %-30s %s\n", sv(t, "name"), sv(t, "language"), ver ? ver : "-",
           avail ? "yes" : "no", level ? level : "-", path ? path : "");
    json_object_object_get_ex(t, "options", &opts);
    json_object_object_get_ex(t, "defaults", &defs);
    if (!avail || !opts) continue;
    json_object_object_foreach(opts, name, vals) {
      const char *def = str(defs, name);
      printf("    --option %s=%s", name, def ? def : "VALUE");
      size_t n = vals && json_object_is_type(vals, json_type_array) ? json_object_array_length(vals) : 0;
      if (n) printf("   values:");
      for (size_t k = 0; k < n; k++) printf(" %s", json_object_get_string(json_object_array_get_idx(vals, k)));
      if (!vals) printf("   (free text)");
      printf("\n");
    }
  }
}

static int simple(const sbc_ctx *g0, const sbo_cmd *cmd, unsigned flags, const char *type, int argc, char **argv) {
  sbc_ctx g = *g0;
  bool json;
  int rc;
  if (!parse(cmd, flags, &g, argc, argv, &json, &rc)) return rc;
  if (!strcmp(type, "ping")) g.autostart = false; /* asking whether one runs must not start one */
  json_object *req = sbc_request_new(type), *resp = NULL;
  if (g.profile && !strcmp(type, "toolchains")) json_object_object_add(req, "profile", json_object_new_string(g.profile));
  bool started = false;
  rc = sbc_roundtrip_started(&g, cmd->name, json, req, &resp, &started);
  if (rc == 0 && started && !strcmp(type, "status")) { /* a status call that started what it reports on */
    if (json) json_object_object_add(resp, "started_by_this_call", json_object_new_boolean(true));
    else
      fprintf(stderr, "surgebox status: no daemon was running at the default socket: this call started a private one "
                      "(it stops when idle; surgebox ping asks without starting one)\n");
  }
  if (rc == 0) {
    if (json) sbc_print_json(resp);
    else if (!strcmp(type, "toolchains")) print_toolchains(resp);
    else if (!strcmp(type, "status")) print_status(resp);
    else printf("pong (surgeboxd %s)\n", sv(resp, "version"));
  }
  json_object_put(req);
  json_object_put(resp);
  return rc;
}

/* flags as in cli/surgebox.c's table: which global options apply after the name too */
int sbc_status_main(const sbc_ctx *g, int argc, char **argv) {
  return simple(g, &status_cmd, SBC_CMD_DAEMON | SBC_CMD_AUTOSTART, "status", argc, argv);
}
int sbc_toolchains_main(const sbc_ctx *g, int argc, char **argv) {
  return simple(g, &toolchains_cmd, SBC_CMD_DAEMON | SBC_CMD_AUTOSTART | SBC_CMD_PROFILE, "toolchains", argc, argv);
}
int sbc_ping_main(const sbc_ctx *g, int argc, char **argv) {
  return simple(g, &ping_cmd, SBC_CMD_DAEMON, "ping", argc, argv);
}
