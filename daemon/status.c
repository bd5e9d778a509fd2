/* The counters a job's end adds to, and the status request's answer: what
 * the server holds, read by the connection, the dispatcher and a job alike
 * (kept out of server.c, which calls them, so that none of them calls up). */
#include "clock.h"
#include "internal.h"
#include "json_seconds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const sbd_status_names[SBD_N_STATUS] = {
    SBP_STATUS_OK, SBP_STATUS_COMPILE_ERROR, SBP_STATUS_RUNTIME_ERROR, SBP_STATUS_SIGNALED, SBP_STATUS_TIMEOUT,
    SBP_STATUS_MEMORY_LIMIT, SBP_STATUS_OUTPUT_LIMIT, SBP_STATUS_INTERNAL_ERROR, SBP_STATUS_CANCELLED,
    SBP_STATUS_TOOLCHAIN_MISSING, SBP_STATUS_UNSUPPORTED, SBP_STATUS_CASES_FAILED};

void sbd_count_status(sbd_server *srv, const char *status) {
  srv->jobs_done++;
  for (int i = 0; i < SBD_N_STATUS; i++)
    if (strcmp(status, sbd_status_names[i]) == 0) srv->totals[i]++;
}

json_object *sbd_status_json(sbd_server *srv, json_object *id) {
  json_object *o = sbp_response_new(id, "status");
  if (!o) return NULL;
  json_object_object_add(o, "version", json_object_new_string(SURGEBOX_VERSION));
  json_object_object_add(o, "pid", json_object_new_int(getpid()));
  json_object_object_add(o, "cgroup", json_object_new_string(sb_cgroup_kind_name(sb_runtime_cgroup(srv->rt))));
  const char *w = sb_runtime_warning(srv->rt);
  json_object *warnings = json_object_new_array();
  if (w) json_object_array_add(warnings, json_object_new_string(w));
  json_object_object_add(o, "warnings", warnings);
  json_object_object_add(o, "workers", json_object_new_int(srv->n_slots));
  json_object_object_add(o, "running", json_object_new_int(srv->running));
  json_object_object_add(o, "queued", json_object_new_int64((int64_t)srv->queued));
  json_object_object_add(o, "max_running", json_object_new_int(srv->n_slots));
  json_object_object_add(o, "max_queued", json_object_new_int64((int64_t)srv->cfg->max_queue));
  json_object_object_add(o, "draining", json_object_new_boolean(srv->draining));
  json_object_object_add(o, "loop_busy_max_s", sbu_json_seconds(srv->loop_busy_max));
  json_object_object_add(o, "queue_time", sbd_queuetime_json(&srv->queue_time, sbu_now_ns()));
  int conns = 0;
  for (sbd_conn *c = srv->conns; c; c = c->next) conns++;
  json_object_object_add(o, "connections", json_object_new_int(conns));
  json_object_object_add(o, "connections_total", json_object_new_int64((int64_t)srv->connections_total));
  json_object_object_add(o, "jobs_done", json_object_new_int64((int64_t)srv->jobs_done));
  json_object_object_add(o, "rejected_busy", json_object_new_int64((int64_t)srv->rejected_busy));
  json_object *t = json_object_new_object();
  for (int i = 0; i < SBD_N_STATUS; i++)
    json_object_object_add(t, sbd_status_names[i], json_object_new_int64((int64_t)srv->totals[i]));
  json_object_object_add(o, "totals", t);
  json_object_object_add(o, "toolchains", json_object_new_int64(srv->have_toolchains ? (int64_t)srv->toolchains.n_tcs : 0));
  json_object_object_add(o, "cache", sbd_cache_stats(srv->cache));
  uid_t first;
  uint32_t count, in_use;
  json_object *ur = NULL;
  if (sb_runtime_uid_range(srv->rt, &first, &count, &in_use)) {
    ur = json_object_new_object();
    json_object_object_add(ur, "first", json_object_new_int64((int64_t)first));
    json_object_object_add(ur, "count", json_object_new_int64((int64_t)count));
    json_object_object_add(ur, "in_use", json_object_new_int64((int64_t)in_use));
  }
  uint64_t netns_rebuilds, template_rebuilds;
  uint32_t held;
  sb_runtime_slot_rebuilds(srv->rt, &netns_rebuilds, &template_rebuilds, &held);
  if (ur) json_object_object_add(ur, "held", json_object_new_int64((int64_t)held));
  json_object_object_add(o, "uid_range", ur);
  json_object *sr = json_object_new_object(); /* a run left something in flight (runners/namespaces.c, pool.c) */
  json_object_object_add(sr, "netns", json_object_new_int64((int64_t)netns_rebuilds));
  json_object_object_add(sr, "template", json_object_new_int64((int64_t)template_rebuilds));
  json_object_object_add(o, "slot_rebuilds", sr);
  const char *pool_off = sb_runtime_pool_off(srv->rt);
  char pool[SB_ERR_MAX + 8];
  snprintf(pool, sizeof pool, pool_off ? "off: %s" : "on", pool_off);
  json_object_object_add(o, "pool", json_object_new_string(pool));
  json_object_object_add(o, "self_proof", sbd_prove_json(srv));
  pid_t spid;
  const char *why;
  uint64_t restarts = sb_runtime_spawner(srv->rt, &spid, &why);
  json_object *sp = json_object_new_object();
  json_object_object_add(sp, "pid", json_object_new_int(spid));
  json_object_object_add(sp, "restarts", json_object_new_int64((int64_t)restarts));
  json_object_object_add(sp, "last_restart", restarts ? json_object_new_string(why) : NULL);
  json_object_object_add(o, "spawner", sp);
  json_object_object_add(o, "warm", sb_runtime_warm_json(srv->rt));
  char up[32];
  snprintf(up, sizeof up, "%.3f", (double)(uv_hrtime() - srv->start_ns) / 1e9);
  json_object_object_add(o, "uptime_s", json_object_new_double_s(strtod(up, NULL), up));
  return o;
}
