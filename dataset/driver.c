/* The benchmark driver: options, connection, pump, failures, files. */
#include "driver.h"
#include "atomic_write.h"

#include "protocol.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const sbo_opt sbr_jobs_opts[] = {
    {"jobs", SBR_O_JOBS, "N", "jobs in flight (default: the CPUs)"},
    {"dump-requests", SBR_O_DUMP, "FILE", "write the exec requests as JSON Lines and run nothing"},
    {NULL, 0, NULL, NULL}};
const sbo_opt *const sbr_run_groups[] = {sbc_daemon_opts, sbc_endpoints_opts, sbc_fleet_timing_opts, sbr_shard_opts,
                                         sbr_jobs_opts, NULL};
const sbo_opt *const sbr_shardable_groups[] = {sbc_daemon_opts, sbc_endpoints_opts, sbc_fleet_timing_opts, sbr_shard_opts,
                                               NULL};

bool sbr_run_apply(const sbo_parser *p, sbc_ctx *ctx, sbr_run_opts *o, int key, const char *val, int *rc) {
  if (key == SBR_O_JOBS) {
    long n;
    if (sbo_parse_long(val, 0, 4096, &n) < 0) *rc = sbo_bad_value(p, key, val);
    else o->jobs = (int)n;
    return true;
  }
  if (key == SBR_O_DUMP) {
    o->dump = val;
    return true;
  }
  return sbc_ctx_apply(ctx, key, val) || sbr_shard_apply(&o->shard, key, val);
}

typedef struct {
  sbc_ctx *ctx;
  sbr_run_opts *run;
  sbr_option_fn option;
  void *opts;
} run_keys;

/* A key of the shared groups (into ctx and run), else the command's own callback's. */
static int run_key(sbo_parser *p, void *arg, int key, const char *val) {
  run_keys *r = arg;
  int rc = 0;
  if (sbr_run_apply(p, r->ctx, r->run, key, val, &rc)) return rc;
  return r->option ? r->option(p, r->opts, key, val) : 0;
}

int sbr_parse(sbo_parser *p, const sbo_cmd *cmd, int argc, char **argv, sbc_ctx *ctx, sbr_run_opts *run,
              sbr_option_fn option, void *opts) {
  run_keys r = {ctx, run, option, opts};
  return sbo_parse(p, cmd, argc, argv, opts, run_key, &r);
}

int sbr_run_shard(const char *prog, const sbr_run_opts *run, bool has_out, const char *needs, sbr_shard *shard) {
  if (sbr_shard_from_args(prog, run->shard.shard, run->shard.shards, shard) < 0) return 1;
  if (shard->count && !has_out) {
    fprintf(stderr, "%s: --shard needs %s\n", prog, needs);
    return 1;
  }
  return 0;
}

int sbr_run_jobs(int jobs) {
  long n = jobs > 0 ? jobs : sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : (int)n;
}

static volatile sig_atomic_t interrupted;
bool sbr_driver_interrupted(void) { return interrupted != 0; }
void sbr_driver_stop(void) { interrupted = 1; }

void sbr_driver_init(sbr_driver *d, const char *label, const sbc_ctx *ctx, int jobs) {
  memset(d, 0, sizeof *d);
  d->label = label;
  d->ctx = *ctx;
  d->jobs = sbr_run_jobs(jobs);
  d->conn.fd = -1;
}

static const char *error_text(json_object *resp) {
  json_object *e = json_object_object_get(resp, "error");
  const char *m = json_object_get_string(json_object_object_get(e, "message"));
  return m ? m : json_object_get_string(e);
}

json_object *sbr_driver_ask(sbr_driver *d, json_object *req) {
  if (d->fleet) {
    char err[512];
    json_object *resp = sbc_fleet_ask(d->fleet, req, err, sizeof err);
    if (!resp) fprintf(stderr, "%s: %s\n", d->label, err);
    return resp;
  }
  return sbc_send(&d->conn, req) == 0 ? sbc_recv(&d->conn) : NULL;
}

/* --endpoints (or $SURGEBOX_ENDPOINTS without --socket): a fleet. 0, or 2 (said). */
static int connect_fleet(sbr_driver *d) {
  if (d->ctx.given & SBC_GIVEN_SOCKET && d->ctx.given & SBC_GIVEN_ENDPOINTS) {
    fprintf(stderr, "%s: --socket names one daemon, --endpoints a fleet: give one of them\n", d->label);
    return 2;
  }
  char err[700];
  sbc_fleet_opts fo = {.label = d->label};
  const char *given[2] = {d->ctx.answer_margin, d->ctx.probe_timeout}, *names[2] = {"--answer-margin", "--probe-timeout"};
  double *into[2] = {&fo.answer_margin_s, &fo.probe_timeout_s};
  for (int i = 0; i < 2; i++) {
    char *end = NULL;
    if (!given[i]) continue;
    *into[i] = strtod(given[i], &end);
    if (end == given[i] || *end || !(*into[i] > 0) || *into[i] > 86400) {
      fprintf(stderr, "%s: %s '%s': give seconds, a number above 0 (at most 86400)\n", d->label, names[i], given[i]);
      return 2;
    }
  }
  if (!(d->fleet = sbc_fleet_open(d->ctx.endpoints, &fo, err, sizeof err))) {
    fprintf(stderr, "%s: %s\n", d->label, err);
    return 2;
  }
  return 0;
}

static bool on_fleet(const sbr_driver *d) {
  return d->ctx.endpoints && ((d->ctx.given & SBC_GIVEN_ENDPOINTS) || !(d->ctx.given & SBC_GIVEN_SOCKET));
}

int sbr_driver_connect(sbr_driver *d) {
  if (d->connected) return 0;
  char jobs[16], err[512];
  snprintf(jobs, sizeof jobs, "%d", d->jobs);
  const char *extra[] = {"--jobs", jobs, d->cache_dir ? "--cache-dir" : NULL, d->cache_dir, NULL};
  if (on_fleet(d)) {
    int frc = connect_fleet(d);
    if (frc) return frc;
  } else if (d->ctx.answer_margin || d->ctx.probe_timeout) {
    fprintf(stderr, "%s: %s applies to a fleet (--endpoints) only; drop it\n", d->label,
            d->ctx.answer_margin ? "--answer-margin" : "--probe-timeout");
    return 2;
  } else if (sbc_open(&d->conn, d->ctx.socket, d->ctx.autostart, extra, err, sizeof err) < 0) {
    fprintf(stderr, "%s: %s\n", d->label, err);
    return 2;
  }
  d->connected = true;
  /* the profile is the daemon's to know: asked before anything runs */
  json_object *req = json_object_new_object();
  json_object_object_add(req, "id", json_object_new_string("driver-toolchains"));
  json_object_object_add(req, "type", json_object_new_string("toolchains"));
  if (d->ctx.profile) json_object_object_add(req, "profile", json_object_new_string(d->ctx.profile));
  char ferr[512] = "";
  json_object *resp = d->fleet ? sbc_fleet_ask(d->fleet, req, ferr, sizeof ferr) : sbr_driver_ask(d, req);
  json_object_put(req);
  const char *code = resp ? sbp_response_error_code(resp) : NULL;
  int rc = 0;
  if (!resp && d->fleet && !d->ctx.profile) {
    /* a fleet of HTTP endpoints serves exec only: no toolchains to ask (batch needs none) */
  } else if (!resp || code) {
    if (!resp && d->fleet)
      fprintf(stderr, "%s: --profile %s is checked with a Unix-socket daemon of the fleet (%s): list one\n", d->label,
              d->ctx.profile, ferr);
    else if (!resp) fprintf(stderr, "%s: no answer from the daemon at %s\n", d->label, d->conn.socket_path);
    else if (d->ctx.profile)
      fprintf(stderr, "%s: profile '%s': %s: %s\n", d->label, d->ctx.profile,
              code, error_text(resp));
    else fprintf(stderr, "%s: %s: %s\n", d->label, code, error_text(resp));
    rc = 2;
  } else {
    d->toolchains = json_object_get(json_object_object_get(resp, "toolchains"));
  }
  json_object_put(resp);
  return rc;
}

void sbr_driver_profile(const sbr_driver *d, json_object *req) {
  if (d->ctx.profile && !json_object_object_get_ex(req, "profile", NULL))
    json_object_object_add(req, "profile", json_object_new_string(d->ctx.profile));
}

static void fill(sbr_driver *d, sbr_pump *p) {
  /* a fleet: the window of one daemon for each */
  if (!p->window) p->window = ((size_t)d->jobs * 2 + 2) * (d->fleet ? sbc_fleet_size(d->fleet) : 1);
  if (!p->parallel) p->parallel = d->jobs > 0 ? d->jobs : 1;
  if (!p->label) p->label = d->label;
  p->interrupted = &interrupted;
  p->failures = &d->failures;
}

int sbr_driver_pump(sbr_driver *d, sbr_pump *p) {
  int rc = sbr_driver_connect(d);
  if (rc) return rc;
  fill(d, p);
  sbr_catch_interrupts(&interrupted);
  p->fleet = d->fleet;
  rc = sbr_pump_run(&d->conn, p);
  if (d->fleet) sbc_fleet_say(d->fleet, stderr);
  return interrupted ? 130 : rc < 0 ? 2 : 0;
}

int sbr_driver_dump(sbr_driver *d, sbr_pump *p, const char *path) {
  fill(d, p);
  FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
  p->dump = f;
  int rc = f ? sbr_pump_run(NULL, p) : -1;
  if (f && f != stdout && fclose(f) != 0) rc = -1;
  if (rc < 0) fprintf(stderr, "%s: cannot write %s: %s\n", d->label, path, strerror(errno));
  else fprintf(stderr, "%s: the requests are in %s (nothing ran)\n", d->label, path);
  return rc < 0 ? 2 : 0;
}

int sbr_driver_finish(sbr_driver *d, int rc) {
  if (d->connected && !d->fleet) sbc_close(&d->conn);
  sbc_fleet_close(d->fleet);
  d->fleet = NULL;
  d->connected = false;
  json_object_put(d->toolchains);
  d->toolchains = NULL;
  int frc = sbr_failures_report(&d->failures, d->label);
  if (rc) return rc;
  return frc ? frc : interrupted ? 130 : 0;
}

int sbr_write_json_atomic_ext(const char *path, json_object *o, int flags) {
  return sbu_write_json_atomic(path, o, flags | JSON_C_TO_STRING_NOSLASHESCAPE);
}

int sbr_write_json_atomic(const char *path, json_object *o) {
  return sbr_write_json_atomic_ext(path, o, JSON_C_TO_STRING_PRETTY);
}
