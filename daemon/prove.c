/* The daemon proves itself before it takes work (issue 21): a trivial job
 * through the pool, the cgroup backend and the uid range (runners'
 * sb_runtime_prove). A pool that fails is turned off there; a cgroup backend
 * chosen by `--cgroup auto` that fails is replaced by none (the runtime is
 * opened again without it); what is turned off is logged, answered by
 * `status` (self_proof) and said in each result (enforced.pool, warnings).
 * When no job can run at all the daemon refuses to start, in one line. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void prove_uid_range(sbd_server *srv) {
  uid_t first;
  uint32_t count, in_use;
  if (sb_runtime_uid_range(srv->rt, &first, &count, &in_use))
    snprintf(srv->proof_uids, sizeof srv->proof_uids, "on: %u-%u", (unsigned)first, (unsigned)(first + count - 1));
  else
    snprintf(srv->proof_uids, sizeof srv->proof_uids, "off: user-namespace mode (one mapped uid for every job)");
}

int sbd_prove(sbd_server *srv) {
  uint64_t t0 = uv_hrtime();
  char err[SB_ERR_MAX] = "";
  int rc = sb_runtime_prove(srv->rt, err);
  sb_cgroup_kind kind = sb_runtime_cgroup(srv->rt);
  /* -ERANGE: the uid range is unmapped, which no cgroup backend changes */
  if (rc < 0 && rc != -ERANGE && kind != SB_CGROUP_NONE && srv->cfg->runtime.cgroup == SB_CGROUP_AUTO) {
    char first[SB_ERR_MAX], oerr[SB_ERR_MAX] = "";
    snprintf(first, sizeof first, "%s", err);
    sb_runtime_close(srv->rt);
    srv->rt = NULL;
    srv->cfg->runtime.cgroup = SB_CGROUP_NONE;
    if (sb_runtime_open(&srv->cfg->runtime, &srv->rt, oerr) < 0) {
      fprintf(stderr, "surgeboxd: cannot run a job here: %s; without cgroups: %s\n", first, oerr);
      return -1;
    }
    rc = sb_runtime_prove(srv->rt, err);
    if (rc == 0) {
      snprintf(srv->proof_cgroup, sizeof srv->proof_cgroup, "off: cgroup %s failed a trivial job (%.*s); none used",
               sb_cgroup_kind_name(kind), SB_ERR_MAX - 80, first);
      sb_runtime_add_warning(srv->rt, srv->proof_cgroup + 5);
    }
  }
  if (rc < 0) {
    fprintf(stderr, "surgeboxd: cannot run a job here: %s (`surgebox doctor` checks each mechanism)\n", err);
    return -1;
  }
  if (!srv->proof_cgroup[0])
    snprintf(srv->proof_cgroup, sizeof srv->proof_cgroup, "on: %s", sb_cgroup_kind_name(sb_runtime_cgroup(srv->rt)));
  prove_uid_range(srv);
  srv->proof_ms = (double)(uv_hrtime() - t0) / 1e6;
  return 0;
}

void sbd_prove_log(sbd_server *srv) {
  const char *off = sb_runtime_pool_off(srv->rt);
  /* a warning when a failure turned it off; as configured (--pool 0, not root) it is news only */
  bool failed = off && !strncmp(off, "a trivial job failed", 20);
  if (off) sbd_log(srv, failed ? "warn" : "info", "pool off: %s", off);
  if (strncmp(srv->proof_cgroup, "off:", 4) == 0) sbd_log(srv, "warn", "cgroup %s", srv->proof_cgroup);
  sbd_log(srv, "info", "self-proof: a trivial job ran in %.1f ms (pool %s, cgroup %s, uids %s)", srv->proof_ms,
          off ? "off" : "on", srv->proof_cgroup, srv->proof_uids);
}

json_object *sbd_prove_json(sbd_server *srv) {
  json_object *o = json_object_new_object();
  const char *off = sb_runtime_pool_off(srv->rt);
  char pool[SB_ERR_MAX + 8];
  snprintf(pool, sizeof pool, off ? "off: %s" : "on", off);
  json_object_object_add(o, "pool", json_object_new_string(pool));
  json_object_object_add(o, "cgroup", json_object_new_string(srv->proof_cgroup));
  json_object_object_add(o, "uid_range", json_object_new_string(srv->proof_uids));
  char ms[32];
  snprintf(ms, sizeof ms, "%.1f", srv->proof_ms);
  json_object_object_add(o, "ms", json_object_new_double_s(srv->proof_ms, ms));
  return o;
}
