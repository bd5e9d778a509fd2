/* surgebox merge SHARD_OUT...: the --out directories of the shards of one
 * run (regen --shard I/N ...) joined into what one machine would have
 * written.
 *
 * Each shard's shard.json says which run it belongs to (command, data
 * hashes, options, profile, toolchain identity) and which items it owns.
 * Shards that disagree on any of these, the same shard twice, a missing
 * shard or an item owned twice are refused, naming the shards. */
#include "merge.h"
#include "protocol.h"

#include "cruxeval/cruxeval.h"
#include "surge/drmatrix_shard.h"
#include "tests/tests_bench.h"
#include "traces/traces.h"

#include "cliopt.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* fields that are the shard's own; every other field must be equal */
static bool own_field(const char *k) {
  size_t n = strlen(k); /* paths: where each machine mounts the same files (their hashes are compared) */
  return !strcmp(k, "shard") || !strcmp(k, "items") || !strcmp(k, "expected_share") ||
         (n > 5 && !strcmp(k + n - 5, "_path"));
}

static int check_same_run(sbr_merge_shard *sh, size_t n) {
  int rc = 0;
  for (size_t i = 1; i < n; i++) {
    json_object_object_foreach(sh[0].manifest, k, v) {
      if (own_field(k)) continue;
      json_object *w = json_object_object_get(sh[i].manifest, k);
      if (!json_object_equal(v, w)) {
        fprintf(stderr, "merge: %s and %s are not shards of the same run: their \"%s\" differ (%s vs %s)\n", sh[0].dir,
                sh[i].dir, k, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
                json_object_to_json_string_ext(w, JSON_C_TO_STRING_PLAIN));
        rc = -1;
      }
    }
    json_object_object_foreach(sh[i].manifest, k2, v2) {
      (void)v2;
      if (!own_field(k2) && !json_object_object_get_ex(sh[0].manifest, k2, NULL)) {
        fprintf(stderr, "merge: %s has \"%s\", %s has not: not shards of the same run\n", sh[i].dir, k2, sh[0].dir);
        rc = -1;
      }
    }
  }
  return rc;
}

/* every shard 0..N-1 exactly once */
static int check_complete(sbr_merge_shard *sh, size_t n, int count) {
  int rc = 0;
  const char **seen = calloc((size_t)count, sizeof *seen);
  for (size_t i = 0; i < n; i++) {
    int k = sh[i].index;
    if (seen[k]) {
      fprintf(stderr, "merge: %s and %s are both shard %d/%d\n", seen[k], sh[i].dir, k, count);
      rc = -1;
    } else {
      seen[k] = sh[i].dir;
    }
  }
  for (int k = 0; k < count; k++)
    if (!seen[k]) {
      fprintf(stderr, "merge: shard %d/%d is missing\n", k, count);
      rc = -1;
    }
  free(seen);
  return rc;
}

/* no item owned by two shards: {"<part>": [indices or hashes]} */
static int check_disjoint(sbr_merge_shard *sh, size_t n) {
  int rc = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++) {
      json_object *a = json_object_object_get(sh[i].manifest, "items"), *b = json_object_object_get(sh[j].manifest, "items");
      json_object_object_foreach(a, part, ia) {
        json_object *ib = json_object_object_get(b, part);
        for (size_t x = 0; ib && x < json_object_array_length(ia); x++)
          for (size_t y = 0; y < json_object_array_length(ib); y++)
            if (json_object_equal(json_object_array_get_idx(ia, x), json_object_array_get_idx(ib, y))) {
              fprintf(stderr, "merge: %s item %s is in both %s and %s\n", part,
                      json_object_get_string(json_object_array_get_idx(ia, x)), sh[i].dir, sh[j].dir);
              rc = -1;
            }
      }
    }
  return rc;
}

static const sbo_opt merge_opts[] = {
    {"out", 'o', "OUT", "where the merged output goes (a directory for regen and trace-dataset, a file for verify, batch and dr-matrix)"},
    {"summary", 's', "FILE", "regen: the fidelity report as JSON"},
    {NULL, 0, NULL, NULL}};
static const sbo_cmd merge_cmd = {
    "surgebox merge", "--out OUT [--summary FILE] SHARD_OUT...",
    "Join the --out of each shard into what one machine would have written:\n"
    "  regen --shard I/N --out DIR (OUT: a directory),\n"
    "  verify --benchmark cruxeval --shard I/N --out FILE (OUT: the scored file),\n"
    "  verify --benchmark surge --shard I/N --out DIR (OUT: the scored report, as verify --json prints it),\n"
    "  verify --benchmark tests --shard I/N --out FILE (OUT: the result file),\n"
    "  batch IN --shard I/N --out FILE (OUT: every answer, in input order),\n"
    "  trace-dataset --shard I/N --out DIR (OUT: a directory, as one run writes it).\n"
    "Refuses shards of different runs (data, options, profile, toolchains), a shard given twice or a\n"
    "missing one, and says which.",
    merge_opts, NULL, NULL, false, NULL};

int sbr_merge_main(const sbc_ctx *ctx, int argc, char **argv) {
  const char *out = NULL, *summary = NULL;
  sbo_parser p;
  sbo_init(&p, &merge_cmd, argc, argv);
  int k, bad = 0;
  const char *val;
  while ((k = sbo_next(&p, &val)) > 0) {
    if (k == 'o') out = val;
    else if (k == 's') summary = val;
  }
  if (k == SBO_STOP) bad = p.status;
  else if (!out) bad = sbo_usage_error(&p, "--out OUT is required");
  else if (p.n_pos == 0) bad = sbo_usage_error(&p, "no SHARD_OUT given");
  if (k == SBO_STOP || bad) {
    sbo_done(&p);
    return bad;
  }
  size_t n = (size_t)p.n_pos;
  char **shard_dirs = p.pos; /* into argv */
  sbo_done(&p);
  sbr_merge_shard *sh = calloc(n, sizeof *sh);
  int rc = 0;
  bool said = false; /* the one line already says nothing was written */
  for (size_t i = 0; i < n; i++) {
    char path[4200];
    sh[i].dir = shard_dirs[i];
    struct stat st; /* regen's --out is a directory, verify's a file */
    bool dir = stat(sh[i].dir, &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(path, sizeof path, dir ? "%s/shard.json" : "%s.shard.json", sh[i].dir);
    if (!dir && access(path, F_OK) != 0) { /* neither regen's directory nor verify's file */
      fprintf(stderr, "merge: no such directory: %s (give each shard's --out); nothing written\n", sh[i].dir);
      rc = 2;
      said = true;
      break;
    }
    char why[600] = "not a shard manifest";
    sh[i].manifest = sbp_json_file(path, why, sizeof why);
    json_object *v;
    if (!sh[i].manifest || !json_object_object_get_ex(sh[i].manifest, "surgebox_shard", &v)) {
      fprintf(stderr, "merge: %s: %s: %s; not the --out of a --shard run\n", sh[i].dir, path, why);
      rc = 2;
      continue;
    }
    sh[i].index = json_object_get_int(json_object_object_get(sh[i].manifest, "shard"));
    sh[i].count = json_object_get_int(json_object_object_get(sh[i].manifest, "shards"));
    if (sh[i].count < 1 || sh[i].count > 1000000 || sh[i].index < 0 || sh[i].index >= sh[i].count) {
      fprintf(stderr, "merge: %s/shard.json: shard %d of %d is out of range\n", sh[i].dir, sh[i].index, sh[i].count);
      rc = 2;
    }
  }
  if (!rc && check_same_run(sh, n) < 0) rc = 2;
  if (!rc && check_complete(sh, n, sh[0].count) < 0) rc = 2;
  if (!rc && check_disjoint(sh, n) < 0) rc = 2;
  if (!rc) {
    const char *cmd = json_object_get_string(json_object_object_get(sh[0].manifest, "command"));
    if (cmd && !strcmp(cmd, "regen")) rc = sbs_regen_merge(sh, n, out, summary);
    else if (cmd && !strcmp(cmd, "verify-cruxeval")) rc = sbx_merge(sh, n, out);
    else if (cmd && !strcmp(cmd, "verify-surge")) rc = sbs_vs_merge(sh, n, out);
    else if (cmd && !strcmp(cmd, "verify-tests")) rc = sbtb_merge(sh, n, out);
    else if (cmd && !strcmp(cmd, "batch")) rc = sbr_batch_merge(sh, n, out);
    else if (cmd && !strcmp(cmd, "dr-matrix")) rc = sbs_drmatrix_merge(sh, n, out);
    else if (cmd && !strcmp(cmd, "trace-dataset")) rc = sbtd_merge(sh, n, out);
    else {
      fprintf(stderr, "merge: %s: shards of \"%s\" cannot be merged\n", sh[0].dir, cmd ? cmd : "?");
      rc = 2;
    }
  }
  if (rc && !said) fprintf(stderr, "merge: nothing written\n");
  for (size_t i = 0; i < n; i++)
    if (sh[i].manifest) json_object_put(sh[i].manifest);
  free(sh);
  return rc;
}
