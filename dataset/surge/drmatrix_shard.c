/* dr-matrix --shard I/N: the cells (snippet, configuration) of this shard,
 * its manifest <out>.shard.json, and the merge of the shards' JSON Lines.
 *
 * The unit is the cell, not the snippet: the compile cache keys on the
 * compile command, which holds the compiler, -std and -O, so two
 * configurations of one snippet never share a compile and nothing is lost
 * by running them on different machines; cells cost about the same, so
 * the shards are balanced by count (40 configurations x 105 snippets
 * spread evenly, where snippets would be lumps of 40). A cell's key hashes
 * the snippet's text and the configuration's name. */
#include "atomic_write.h"
#include "drmatrix_shard.h"

#include "regen.h"
#include "regen_shard.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sbs_drmatrix_shard_plan(const sbr_shard *sh, const sbs_drmatrix_plan_args *run, json_object *toolchains,
                            const char *const *questions, size_t n_snips, const char *const *configs, size_t n_cfg,
                            bool *mine) {
  size_t n = 0, *where = calloc(n_snips * n_cfg + 1, sizeof *where);
  uint64_t *keys = calloc(n_snips * n_cfg + 1, sizeof *keys);
  char **names = calloc(n_snips * n_cfg + 1, sizeof *names);
  bool *packed = calloc(n_snips * n_cfg + 1, sizeof *packed);
  if (!where || !keys || !names || !packed) abort();
  for (size_t s = 0; s < n_snips; s++)
    for (size_t c = 0; c < n_cfg; c++) {
      mine[s * n_cfg + c] = false;
      if (!configs[c]) continue; /* its compiler is missing: no shard's, as no single run's */
      keys[n] = sbr_shard_key(questions[s], strlen(questions[s]), configs[c], strlen(configs[c]));
      if (asprintf(&names[n], "%zu/%s", s, configs[c]) < 0) abort();
      where[n++] = s * n_cfg + c;
    }
  json_object *m = sbr_shard_manifest_new("dr-matrix", sh), *o = json_object_new_object();
  sbr_shard_add_file(m, "data", run->dr_json);
  json_object_object_add(o, "compilers", json_object_new_string(run->compilers));
  json_object_object_add(o, "stds", json_object_new_string(run->stds));
  json_object_object_add(o, "opts", json_object_new_string(run->opts));
  json_object_object_add(o, "only", run->only ? json_object_new_string(run->only) : NULL);
  json_object_object_add(m, "options", o);
  char hex[65];
  sbs_toolchains_sha256(toolchains, hex);
  json_object_object_add(m, "toolchains_sha256", json_object_new_string(hex));
  int rc = sbr_shard_finish_by_count(sh, m, "cells", keys, (const char *const *)names, n, packed, run->out, "dr-matrix");
  for (size_t i = 0; i < n; i++) {
    mine[where[i]] = packed[i];
    free(names[i]);
  }
  free(names);
  free(keys);
  free(where);
  free(packed);
  return rc;
}

/* the position of configuration cfg in the matrix's order (compilers x
 * standards x levels, as drmatrix.c enumerates them), or -1 */
static long config_pos(json_object *opts, const char *cfg) {
  char lists[3][256];
  const char *field[3] = {"compilers", "stds", "opts"};
  for (int f = 0; f < 3; f++)
    snprintf(lists[f], sizeof lists[f], "%s", json_object_get_string(json_object_object_get(opts, field[f])));
  long pos = 0;
  char *sc, *ss, *so;
  for (char *c = strtok_r(lists[0], ",", &sc); c; c = strtok_r(NULL, ",", &sc)) {
    char stds[256];
    snprintf(stds, sizeof stds, "%s", lists[1]);
    for (char *s = strtok_r(stds, ",", &ss); s; s = strtok_r(NULL, ",", &ss)) {
      char lv[256];
      snprintf(lv, sizeof lv, "%s", lists[2]);
      for (char *o = strtok_r(lv, ",", &so); o; o = strtok_r(NULL, ",", &so), pos++) {
        char key[64];
        snprintf(key, sizeof key, "%s-C++%s--%s", c, s, o);
        if (!strcmp(key, cfg)) return pos;
      }
    }
  }
  return -1;
}

typedef struct {
  long snippet, config;
  char *line;
} cell;

static int by_position(const void *a, const void *b) {
  const cell *x = a, *y = b;
  if (x->snippet != y->snippet) return x->snippet < y->snippet ? -1 : 1;
  return (x->config > y->config) - (x->config < y->config);
}

/* shard i's lines: "snippet/config" -> the line (the last one wins, as a
 * resumed run reads them) */
static json_object *read_lines(const sbr_merge_shard *sh) {
  FILE *f = fopen(sh->dir, "r");
  if (!f) return NULL;
  json_object *by = json_object_new_object();
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) > 0) {
    json_object *o = json_tokener_parse(line), *s, *c, *out;
    if (o && json_object_object_get_ex(o, "snippet", &s) && json_object_is_type(s, json_type_int) &&
        json_object_object_get_ex(o, "config", &c) && json_object_is_type(c, json_type_string) &&
        json_object_object_get_ex(o, "output", &out) && json_object_is_type(out, json_type_string)) {
      char key[128];
      snprintf(key, sizeof key, "%d/%s", json_object_get_int(s), json_object_get_string(c));
      if (line[len - 1] == '\n') line[len - 1] = '\0';
      json_object_object_add(by, key, json_object_new_string(line));
    }
    if (o) json_object_put(o);
  }
  free(line);
  fclose(f);
  return by;
}

static int write_cells(const char *out, cell *cells, size_t n) {
  sbu_atomic a;
  if (sbu_atomic_open(&a, out, 0666) < 0) return -1;
  for (size_t i = 0; i < n; i++) fprintf(a.f, "%s\n", cells[i].line);
  return sbu_atomic_commit(&a);
}

int sbs_drmatrix_merge(const sbr_merge_shard *sh, size_t n, const char *out) {
  json_object *m = sh[0].manifest, *opts = json_object_object_get(m, "options");
  const char *data = json_object_get_string(json_object_object_get(m, "data_path"));
  char hex[65];
  if (!data || sbu_sha256_file_hex(data, hex) < 0 ||
      strcmp(hex, json_object_get_string(json_object_object_get(m, "data_sha256")))) {
    fprintf(stderr, "merge: %s is unreadable or changed since the shards ran (data_sha256 differs)\n", data ? data : "?");
    return 2;
  }
  size_t total = 0;
  for (size_t i = 0; i < n; i++)
    total += json_object_array_length(json_object_object_get(json_object_object_get(sh[i].manifest, "items"), "cells"));
  cell *cells = calloc(total + 1, sizeof *cells);
  size_t k = 0;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    json_object *lines = read_lines(&sh[i]);
    json_object *owned = json_object_object_get(json_object_object_get(sh[i].manifest, "items"), "cells");
    for (size_t j = 0; j < json_object_array_length(owned) && !rc; j++) {
      const char *name = json_object_get_string(json_object_array_get_idx(owned, j)), *slash = name ? strchr(name, '/') : NULL;
      json_object *line = lines && name ? json_object_object_get(lines, name) : NULL;
      long pos = slash ? config_pos(opts, slash + 1) : -1;
      if (!line || pos < 0) {
        fprintf(stderr, "merge: shard %d/%d (%s) is unfinished: cell %s has no output (run it again to resume)\n",
                sh[i].index, sh[i].count, sh[i].dir, name ? name : "?");
        rc = 2;
      } else {
        cells[k++] = (cell){strtol(name, NULL, 10), pos, strdup(json_object_get_string(line))};
      }
    }
    if (lines) json_object_put(lines);
  }
  if (!rc) {
    qsort(cells, k, sizeof *cells, by_position);
    if (write_cells(out, cells, k) < 0) {
      fprintf(stderr, "merge: cannot write %s\n", out);
      rc = 2;
    }
  }
  for (size_t i = 0; i < k; i++) free(cells[i].line);
  free(cells);
  if (rc) return rc;
  /* the single run's own report, every cell resumed from out: nothing runs
   * (offline: a cell missing fails rather than runs) */
  char dir[4200];
  snprintf(dir, sizeof dir, "%s", data);
  sbs_drmatrix_opts o;
  sbs_drmatrix_opts_init(&o);
  o.data = dirname(dir);
  o.out = out;
  o.only = json_object_get_string(json_object_object_get(opts, "only"));
  o.compilers = json_object_get_string(json_object_object_get(opts, "compilers"));
  o.stds = json_object_get_string(json_object_object_get(opts, "stds"));
  o.opts = json_object_get_string(json_object_object_get(opts, "opts"));
  o.offline = true;
  printf("%zu shards merged into %s\n\n", n, out);
  fflush(stdout);
  sbc_ctx ctx;
  sbc_ctx_init(&ctx);
  ctx.autostart = false;
  return sbs_drmatrix_run(&ctx, &o) ? 2 : 0;
}
