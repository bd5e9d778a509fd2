/* The self-proof: before a daemon takes work, one trivial job through every
 * mechanism a job will use (issue 21). A file written into a workspace is
 * read back by a shell in /app, so the run covers the root (pooled: the
 * template, the workspace's detached tree moved to /app; else the fresh
 * root), the leased uid of the range, the cgroup backend (created, attached,
 * destroyed), the network namespace slot, seccomp and the capability drop.
 * A pool that fails where a fresh root works is turned off, saying why; any
 * other failure is the caller's to report (it cannot run a job here). */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define PROOF_TEXT "surgebox self-proof"

/* Root in a user namespace that maps only some ids (a container's 65536, or
 * only 0): a uid of the range outside the map cannot own a workspace or be
 * switched to. Said by name, before a job fails on it less clearly. */
static int range_mapped(const char *map_file, const char *what, uint64_t first, uint64_t count, char err[SB_ERR_MAX]) {
  char map[1024];
  if (sb_read_file(map_file, map, sizeof map) <= 0) return 0; /* no /proc: the job will tell */
  unsigned long long inner, outer, len;
  int used;
  for (const char *p = map; sscanf(p, "%llu %llu %llu%n", &inner, &outer, &len, &used) == 3; p += used)
    if (first >= inner && first + count <= inner + len) return 0;
  for (char *nl = strchr(map, '\n'); nl; nl = strchr(nl, '\n')) *nl = nl[1] ? ';' : '\0';
  sb_err(err, "the uid range %llu-%llu: its %ss are not all mapped in this user namespace (%s: %s); pick mapped ones "
         "with --uid-range FIRST-LAST", (unsigned long long)first, (unsigned long long)(first + count - 1), what,
         map_file, map);
  return -ERANGE;
}

static int run_once(sb_runtime *rt, sb_result *r, char err[SB_ERR_MAX]) {
  sb_workspace *ws = NULL;
  int rc = sb_workspace_create(rt, 1, &ws, err);
  if (rc < 0) return rc;
  rc = sb_workspace_write(ws, "proof.txt", PROOF_TEXT "\n", sizeof PROOF_TEXT, 0644, err);
  if (rc < 0) {
    sb_workspace_destroy(ws);
    return rc;
  }
  static const char *const argv[] = {"/bin/sh", "-c", "read -r line < proof.txt && echo \"$line\"", NULL};
  sb_spec spec;
  sb_spec_init(&spec);
  spec.argv = argv;
  spec.workspace = ws;
  spec.netns_slot = 0;
  spec.limits.wall_time_s = 30;
  spec.limits.cpu_time_s = 10;
  sb_run(rt, &spec, r);
  sb_workspace_destroy(ws);
  if (r->status != SB_OK || r->out.len != sizeof PROOF_TEXT || memcmp(r->out.data, PROOF_TEXT "\n", r->out.len) != 0) {
    if (r->error[0]) sb_err(err, "%s", r->error);
    else
      sb_err(err, "a trivial job ended %s (exit %d), stdout \"%.80s\", stderr \"%.160s\"", sb_status_name(r->status),
             r->exit_code, r->out.data ? (const char *)r->out.data : "", r->err.data ? (const char *)r->err.data : "");
    return -EIO;
  }
  return 0;
}

int sb_runtime_prove(sb_runtime *rt, char err[SB_ERR_MAX]) {
  if (!rt->userns) {
    int mapped = range_mapped("/proc/self/uid_map", "uid", rt->opts.uid_first, rt->opts.uid_count, err);
    if (!mapped) mapped = range_mapped("/proc/self/gid_map", "gid", rt->opts.uid_first, rt->opts.uid_count, err);
    if (mapped < 0) return mapped;
  }
  sb_result r;
  int rc = run_once(rt, &r, err);
  bool pool_on = sb_runtime_pool_off(rt) == NULL;
  bool pool_failed = pool_on && (rc < 0 || strcmp(r.pool, "used") != 0);
  char why[SB_ERR_MAX];
  snprintf(why, sizeof why, "%s", rc < 0 ? err : r.pool);
  sb_result_free(&r);
  if (!pool_failed) return rc;
  /* Does a fresh root work? Then the pool was what failed. */
  char first[SB_ERR_MAX];
  snprintf(first, sizeof first, "a trivial job failed with it (%.*s)", SB_ERR_MAX - 48, why);
  sb_runtime_pool_disable(rt, first);
  rc = run_once(rt, &r, err);
  sb_result_free(&r);
  return rc;
}
