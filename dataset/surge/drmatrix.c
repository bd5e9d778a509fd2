/* surgebox dr-matrix: every DR snippet under every configuration.
 *
 *   surgebox dr-matrix --data DIR [--compilers g++,clang++] [--stds 03,11,14,17]
 *                      [--opts O0,O1,O2,O3,Os] [--out FILE] [--jobs N] [--only I,J,...]
 *                      [--shard I/N|auto [--shards N]]
 *
 * SURGE built DR by keeping the snippets whose output changes with the
 * configuration; custom_features.dependencies says which of compiler /
 * standard / optimisation matter. This runs each distinct snippet under
 * compilers x standards x levels (SURGE's 200 items x 40 configurations are
 * 8,000 pairs, but items share snippets: 105 distinct x 40 = 4,200
 * compile-and-run jobs by default; compiles go through the daemon's compile
 * cache), writes every output as JSON Lines to --out (resumable: lines
 * already there are not run again), and reports per snippet how many
 * distinct outputs it has and which factors change them, against the
 * published dependencies. With --shard only this shard's cells (snippet,
 * configuration) run, and <out>.shard.json says which (drmatrix_shard.c);
 * `surgebox merge` joins the shards. */
#include "adapt_internal.h"
#include "cliopt.h"
#include "drmatrix_shard.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sbs_dr_command(const sbs_env *env, const char *compiler, const char *std, const char *opt, char *cmd, size_t cap,
                   char *path, size_t pcap, char *tc_name, size_t tlen);

#define MAXV 8

typedef struct {
  const char *question;
  int items[64];
  int n_items;
  json_object *deps; /* the first item's custom_features.dependencies */
} snippet;

typedef struct {
  snippet *snips;
  size_t n_snips;
  char comp[MAXV][16], std[MAXV][16], opt[MAXV][8];
  int nc, ns, no;
  char ***outputs; /* [snippet][config] */
  const sbs_env *env;
  FILE *out;
  json_object *done; /* "snippet/config" -> output, from an earlier run */
  bool *mine;        /* [snippet * n_configs + config]: this shard's; NULL: all */
  const sbr_driver *d;
  size_t failed;     /* cells a failure of surgebox left without an output */
} matrix;

static size_t n_configs(const matrix *m) { return (size_t)(m->nc * m->ns * m->no); }

static void config_of(const matrix *m, size_t c, int *ci, int *si, int *oi) {
  *oi = (int)(c % (size_t)m->no);
  *si = (int)(c / (size_t)m->no % (size_t)m->ns);
  *ci = (int)(c / (size_t)(m->no * m->ns));
}

static void config_key(const matrix *m, size_t c, char *out, size_t cap) {
  int ci, si, oi;
  config_of(m, c, &ci, &si, &oi);
  snprintf(out, cap, "%s-C++%s--%s", m->comp[ci], m->std[si], m->opt[oi]);
}

static json_object *make(size_t i, void *ctx) {
  matrix *m = ctx;
  size_t s = i / n_configs(m), c = i % n_configs(m);
  if (m->outputs[s][c] || (m->mine && !m->mine[i])) return NULL; /* resumed, or another shard's */
  int ci, si, oi;
  config_of(m, c, &ci, &si, &oi);
  char key[64], std[16], cmd[1024], path[512], tc[64];
  config_key(m, c, key, sizeof key);
  snprintf(std, sizeof std, "c++%s", m->std[si]);
  if (sbs_dr_command(m->env, m->comp[ci], std, m->opt[oi], cmd, sizeof cmd, path, sizeof path, tc, sizeof tc) < 0)
    return NULL;
  /* the same request the DR adapter builds for this key */
  char item[128];
  snprintf(item, sizeof item, "{\"custom_features\":{\"key\":\"%s\"},\"question\":\"\"}", key);
  json_object *it = json_tokener_parse(item);
  json_object_object_add(it, "question", json_object_new_string(m->snips[s].question));
  sbs_job job;
  char err[128];
  json_object *req = NULL;
  if (sbs_adapt(SBS_DR, 0, it, m->env, &job, err, sizeof err) == 0 && job.request) req = json_object_get(job.request);
  sbs_job_free(&job);
  json_object_put(it);
  if (req) sbr_driver_profile(m->d, req);
  return req;
}

static bool done(size_t i, const sbc_result *r, json_object *resp, void *ctx) {
  (void)resp;
  matrix *m = ctx;
  size_t s = i / n_configs(m), c = i % n_configs(m);
  if (sbr_failure_of(r, NULL, 0)) { /* never an output: no line, the cell runs again on a resume */
    m->failed++;
    return true;
  }
  sbs_job job = {.mode = SBS_OUT_CONCAT};
  char *out = sbs_reference(&job, r, NULL);
  const char *status = r->status;
  m->outputs[s][c] = out ? out : strdup("");
  char key[64];
  config_key(m, c, key, sizeof key);
  if (m->out) {
    json_object *line = json_object_new_object();
    json_object_object_add(line, "snippet", json_object_new_int((int)s));
    json_object *items = json_object_new_array();
    for (int k = 0; k < m->snips[s].n_items; k++) json_object_array_add(items, json_object_new_int(m->snips[s].items[k]));
    json_object_object_add(line, "items", items);
    json_object_object_add(line, "config", json_object_new_string(key));
    json_object_object_add(line, "status", json_object_new_string(status ? status : "error"));
    json_object_object_add(line, "output", json_object_new_string(m->outputs[s][c]));
    fprintf(m->out, "%s\n", json_object_to_json_string_ext(line, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(line);
  }
  return false;
}

static void flush_out(void *ctx) {
  matrix *m = ctx;
  if (m->out) fflush(m->out);
}

static int split_list(const char *arg, char dst[][16], int cap, size_t width) {
  int n = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", arg);
  for (char *t = strtok(buf, ","); t && n < cap; t = strtok(NULL, ",")) snprintf(dst[n++], width, "%s", t);
  return n;
}

/* Does factor f (0 compiler, 1 standard, 2 level) change the output: two
 * configurations differing only in it, with different outputs? */
static bool factor_matters(const matrix *m, size_t s, int f) {
  size_t nc = n_configs(m);
  for (size_t a = 0; a < nc; a++)
    for (size_t b = a + 1; b < nc; b++) {
      int ca, sa, oa, cb, sb, ob;
      config_of(m, a, &ca, &sa, &oa);
      config_of(m, b, &cb, &sb, &ob);
      int diff[3] = {ca != cb, sa != sb, oa != ob};
      if (!diff[f] || diff[(f + 1) % 3] || diff[(f + 2) % 3]) continue;
      if (m->outputs[s][a] && m->outputs[s][b] && strcmp(m->outputs[s][a], m->outputs[s][b])) return true;
    }
  return false;
}

/* The distinct snippets of dr.json (one question may carry several
 * configurations) and the configurations: 0, or 2 (said why). */
static int load(const sbs_drmatrix_opts *o, matrix *m, json_object **dr) {
  m->nc = split_list(o->compilers, m->comp, MAXV, sizeof m->comp[0]);
  m->ns = split_list(o->stds, m->std, MAXV, sizeof m->std[0]);
  char ob[MAXV][16];
  m->no = split_list(o->opts, ob, MAXV, sizeof ob[0]);
  for (int k = 0; k < m->no; k++) snprintf(m->opt[k], sizeof m->opt[k], "%s", ob[k]);
  char path[4200];
  snprintf(path, sizeof path, "%s/dr.json", o->data);
  *dr = json_object_from_file(path);
  if (!*dr || !json_object_is_type(*dr, json_type_array)) {
    fprintf(stderr, "dr-matrix: cannot read %s\n", path);
    return 2;
  }
  size_t n = json_object_array_length(*dr);
  m->snips = calloc(n + 1, sizeof *m->snips);
  for (size_t i = 0; i < n; i++) {
    json_object *it = json_object_array_get_idx(*dr, i);
    const char *q = sbs_item_str(it, "question");
    if (!q || !sbs_in_only(o->only, i)) continue;
    size_t s = 0;
    while (s < m->n_snips && strcmp(m->snips[s].question, q)) s++;
    if (s == m->n_snips) {
      m->snips[m->n_snips].question = q;
      json_object *f = json_object_object_get(it, "custom_features");
      m->snips[m->n_snips++].deps = f ? json_object_object_get(f, "dependencies") : NULL;
    }
    if (m->snips[s].n_items < 64) m->snips[s].items[m->snips[s].n_items++] = (int)i;
  }
  m->outputs = calloc(m->n_snips + 1, sizeof *m->outputs);
  for (size_t s = 0; s < m->n_snips; s++) m->outputs[s] = calloc(n_configs(m), sizeof(char *));
  return 0;
}

/* Resume: the cells an earlier run wrote to --out. Returns how many. */
static size_t resume(const char *out_path, matrix *m) {
  size_t resumed = 0;
  FILE *prev = out_path ? fopen(out_path, "r") : NULL;
  char *line = NULL;
  size_t cap = 0;
  while (prev && getline(&line, &cap, prev) > 0) {
    json_object *o = json_tokener_parse(line);
    if (!o) continue;
    size_t s = (size_t)json_object_get_int(json_object_object_get(o, "snippet"));
    const char *cfg = json_object_get_string(json_object_object_get(o, "config"));
    for (size_t c = 0; s < m->n_snips && cfg && c < n_configs(m); c++) {
      char key[64];
      config_key(m, c, key, sizeof key);
      if (!strcmp(key, cfg) && !m->outputs[s][c]) {
        m->outputs[s][c] = strdup(json_object_get_string(json_object_object_get(o, "output")));
        resumed++;
      }
    }
    json_object_put(o);
  }
  free(line);
  if (prev) fclose(prev);
  return resumed;
}

/* --shard: this shard's cells, and its manifest before anything runs: 0 or 2. */
static int shard_begin(const sbs_drmatrix_opts *o, matrix *m, json_object *toolchains) {
  size_t nc = n_configs(m);
  const char **qs = calloc(m->n_snips + 1, sizeof *qs), **cfgs = calloc(nc + 1, sizeof *cfgs);
  char(*keys)[64] = calloc(nc + 1, sizeof *keys);
  m->mine = calloc(m->n_snips * nc + 1, sizeof *m->mine);
  if (!qs || !cfgs || !keys || !m->mine) return 2;
  for (size_t s = 0; s < m->n_snips; s++) qs[s] = m->snips[s].question;
  for (size_t k = 0; k < nc; k++) {
    int ci, si, oi;
    char cmd[1024], pth[512], tc[64];
    config_of(m, k, &ci, &si, &oi);
    config_key(m, k, keys[k], sizeof keys[k]);
    cfgs[k] = sbs_dr_command(m->env, m->comp[ci], "c++11", m->opt[oi], cmd, sizeof cmd, pth, sizeof pth, tc, sizeof tc) < 0
                  ? NULL /* its compiler is missing: make() runs none of its cells */
                  : keys[k];
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/dr.json", o->data);
  sbs_drmatrix_plan_args run = {path, o->compilers, o->stds, o->opts, o->only, o->out};
  int rc = sbs_drmatrix_shard_plan(&o->shard, &run, toolchains, qs, m->n_snips, cfgs, nc, m->mine);
  free(qs);
  free(cfgs);
  free(keys);
  return rc < 0 ? 2 : 0;
}

/* The cells without an output through the driver: 0, 2 or 130. */
static int run_cells(sbr_driver *d, const sbs_drmatrix_opts *o, matrix *m, sbs_env *env, size_t resumed) {
  int rc = sbr_driver_connect(d);
  if (rc) return rc;
  char err[256];
  sbs_env_init(env, d->toolchains, err, sizeof err);
  m->env = env;
  if (o->shard.count && (rc = shard_begin(o, m, d->toolchains))) return rc;
  fprintf(stderr, "dr-matrix: %zu snippets x %zu configurations (%zu resumed), g++ = %s, clang++ = %s\n", m->n_snips,
          n_configs(m), resumed, env->gxx_name, env->clang_name);
  sbr_pump pump = {.total = m->n_snips * n_configs(m), .make = make, .done = done, .checkpoint = flush_out, .ctx = m};
  if (o->dump) return sbr_driver_dump(d, &pump, o->dump);
  if (o->out && !(m->out = fopen(o->out, "a"))) {
    fprintf(stderr, "dr-matrix: cannot write %s\n", o->out);
    return 2;
  }
  rc = sbr_driver_pump(d, &pump);
  if (m->out && fclose(m->out) != 0 && !rc) rc = 2;
  m->out = NULL;
  return rc;
}

static void report(const matrix *m) {
  static const char *const factor[] = {"compiler", "standard", "optimisation"};
  int varying = 0, agree = 0, with_deps = 0, factor_count[3] = {0};
  printf("%-8s %-6s %-9s %-36s %s\n", "snippet", "items", "distinct", "changed by", "published dependencies");
  for (size_t s = 0; s < m->n_snips; s++) {
    int distinct = 0;
    for (size_t a = 0; a < n_configs(m); a++) {
      if (!m->outputs[s][a]) continue;
      bool seen = false;
      for (size_t b = 0; b < a && !seen; b++) seen = m->outputs[s][b] && !strcmp(m->outputs[s][a], m->outputs[s][b]);
      distinct += !seen;
    }
    varying += distinct > 1;
    bool mat[3];
    char changed[64] = "";
    for (int f = 0; f < 3; f++) {
      mat[f] = factor_matters(m, s, f);
      factor_count[f] += mat[f];
      if (mat[f]) snprintf(changed + strlen(changed), sizeof changed - strlen(changed), "%s%s", changed[0] ? "," : "", factor[f]);
    }
    char deps[64] = "-";
    json_object *dp = m->snips[s].deps;
    if (dp && json_object_is_type(dp, json_type_array) && json_object_array_length(dp) == 3) {
      deps[0] = '\0';
      bool same = true;
      for (int f = 0; f < 3; f++) {
        bool d = json_object_get_boolean(json_object_array_get_idx(dp, (size_t)f));
        same &= d == mat[f];
        if (d) snprintf(deps + strlen(deps), sizeof deps - strlen(deps), "%s%s", deps[0] ? "," : "", factor[f]);
      }
      with_deps++;
      agree += same;
    }
    printf("%-8zu %-6d %-9d %-36s %s\n", s, m->snips[s].n_items, distinct, changed[0] ? changed : "(none)", deps[0] ? deps : "(none)");
  }
  printf("\n%zu snippets: %d with more than one distinct output; changed by compiler %d, standard %d, optimisation %d;\n"
         "%d of %d agree with custom_features.dependencies on all three factors\n",
         m->n_snips, varying, factor_count[0], factor_count[1], factor_count[2], agree, with_deps);
  if (m->failed)
    printf("%zu cells not run: a failure of surgebox (class %s), no output recorded for them\n", m->failed,
           SBR_FAILURE_CLASS);
}

static void matrix_free(matrix *m) {
  for (size_t s = 0; s < m->n_snips; s++) {
    for (size_t k = 0; m->outputs && k < n_configs(m); k++) free(m->outputs[s][k]);
    if (m->outputs) free(m->outputs[s]);
  }
  free(m->outputs);
  free(m->snips);
  free(m->mine);
}

int sbs_drmatrix_run(const sbc_ctx *ctx, const sbs_drmatrix_opts *o) {
  sbr_driver d;
  sbr_driver_init(&d, "dr-matrix", ctx, o->jobs);
  matrix m = {.d = &d};
  sbs_env env = {0};
  json_object *dr = NULL;
  int rc = load(o, &m, &dr);
  size_t resumed = rc ? 0 : resume(o->out, &m);
  bool all = resumed == m.n_snips * n_configs(&m);
  if (!rc && !all && o->offline) {
    fprintf(stderr, "dr-matrix: %s lacks %zu cell(s)\n", o->out, m.n_snips * n_configs(&m) - resumed);
    rc = 2;
  }
  /* every cell known (a finished run, or merged shards): no daemon, unless a profile asks to be checked */
  if (!rc && (o->shard.count || !all || o->dump)) rc = run_cells(&d, o, &m, &env, resumed);
  else if (!rc && ctx->profile) rc = sbr_driver_connect(&d);
  if ((!rc || rc == 130) && !o->dump) report(&m);
  matrix_free(&m);
  sbs_env_free(&env);
  json_object_put(dr);
  return sbr_driver_finish(&d, rc);
}

/* ---- the command line ---- */
#define AT(F) SBO_AT(sbs_drmatrix_opts, F)
static const sbo_opt drmatrix_opts[] = {
    {"data", 0, "DIR", "SURGE's data (dr.json; required)", SBO_STR, AT(data)},
    {"compilers", 0, "LIST", "toolchains (default g++,clang++)", SBO_STR, AT(compilers)},
    {"stds", 0, "LIST", "C++ standards (default 03,11,14,17)", SBO_STR, AT(stds)},
    {"opts", 0, "LIST", "optimisation levels (default O0,O1,O2,O3,Os)", SBO_STR, AT(opts)},
    {"out", 0, "FILE", "the matrix as JSON Lines (an interrupted run resumes; --shard needs it)", SBO_STR, AT(out)},
    SBS_ONLY_OPT(sbs_drmatrix_opts),
    {NULL, 0, NULL, NULL}};
#undef AT
static const sbo_cmd drmatrix_cmd = {"surgebox dr-matrix", "--data DIR [options]",
                                     "Every DR snippet under every compiler, standard and optimisation level.",
                                     drmatrix_opts, NULL,
                                     "exit: 0 done, 1 bad arguments, 2 a failure (also a failure of surgebox for any "
                                     "cell: no output recorded for it), 130 interrupted\n",
                                     false, sbr_run_groups};

void sbs_drmatrix_opts_init(sbs_drmatrix_opts *o) {
  memset(o, 0, sizeof *o);
  o->compilers = "g++,clang++";
  o->stds = "03,11,14,17";
  o->opts = "O0,O1,O2,O3,Os";
}

int sbs_drmatrix_main(const sbc_ctx *ctx, int argc, char **argv) {
  sbc_ctx c = *ctx;
  sbs_drmatrix_opts o;
  sbs_drmatrix_opts_init(&o);
  sbr_run_opts run = {0};
  sbo_parser p;
  int rc = sbr_parse(&p, &drmatrix_cmd, argc, argv, &c, &run, NULL, &o);
  if (rc == 0) rc = sbo_no_args(&p);
  if (rc == 0 && !o.data) rc = sbo_usage_error(&p, "--data DIR is required");
  sbo_done(&p);
  if (rc) return rc < 0 ? 0 : rc;
  o.jobs = run.jobs;
  o.dump = run.dump;
  if (sbr_run_shard("dr-matrix", &run, o.out != NULL, "--out FILE (what surgebox merge reads)", &o.shard)) return 1;
  return sbs_drmatrix_run(&c, &o);
}
