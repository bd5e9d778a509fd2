/* surgebox verify --benchmark cruxeval: every generation the rules keep runs
 * as its own sandboxed Python program through the daemon (the shared pump),
 * then CRUXEval's scored file.
 *
 * Identical programs (same code, output and generation: models repeat
 * themselves at temperature 0.2) run once and share the verdict. Resume:
 * verdicts go to OUT.progress, keyed by the SHA-256 of the program text, so
 * a run that was interrupted (or met a machinery failure) runs only what is
 * left; the file is removed once OUT is written.
 *
 * --shard I/N runs only this shard's programs (keyed by their hash, balanced
 * by count): OUT is not written, OUT.progress keeps the shard's verdicts and
 * OUT.shard.json says what it belongs to; `surgebox merge` scores them all
 * (this file again, with every verdict known and no daemon). */
#include "atomic_write.h"
#include "client.h"
#include "cliopt.h"
#include "cruxeval.h"
#include "pump.h"
#include "sha256.h"
#include "shard.h"
#include "sandbox.h"

#include <errno.h>
#include <nettle/sha2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef SBX_DEFAULT_DATA
#define SBX_DEFAULT_DATA "../shared/cruxeval/cruxeval.jsonl"
#endif

typedef struct {
  char hash[65];
  char *text;
  size_t len;
  int verdict; /* 1, 0, -1 not known yet */
  bool other;  /* another shard's */
} program;

typedef struct {
  program *progs;
  size_t n;
  const char *progress_path;
  size_t ran, machinery_failed;
  time_t last_save; /* saved at most once a second */
} run_state;

static volatile sig_atomic_t interrupted;
static void on_sigint(int s) {
  (void)s;
  interrupted = 1;
}

static int cmp_prog(const void *a, const void *b) {
  return strcmp(((const program *)a)->hash, ((const program *)b)->hash);
}

static program *find_prog(run_state *rs, const char *hash) {
  program key;
  snprintf(key.hash, sizeof key.hash, "%s", hash);
  return bsearch(&key, rs->progs, rs->n, sizeof key, cmp_prog);
}

static void save_progress(void *ctx) {
  run_state *rs = ctx;
  if (!rs->progress_path) return;
  json_object *o = json_object_new_object(), *v = json_object_new_object();
  json_object_object_add(o, "benchmark", json_object_new_string("cruxeval"));
  for (size_t i = 0; i < rs->n; i++)
    if (rs->progs[i].verdict >= 0 && !rs->progs[i].other) json_object_object_add(v, rs->progs[i].hash, json_object_new_boolean(rs->progs[i].verdict));
  json_object_object_add(o, "verdicts", v);
  if (sbu_write_json_atomic(rs->progress_path, o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) < 0)
    fprintf(stderr, "verify: cannot write %s\n", rs->progress_path);
  json_object_put(o);
  rs->last_save = time(NULL);
}

static void load_progress(run_state *rs) {
  json_object *o = rs->progress_path ? json_object_from_file(rs->progress_path) : NULL, *v;
  if (!o) return;
  size_t reused = 0;
  if (json_object_object_get_ex(o, "verdicts", &v) && json_object_is_type(v, json_type_object)) {
    json_object_object_foreach(v, hash, val) {
      program *p = json_object_is_type(val, json_type_boolean) ? find_prog(rs, hash) : NULL;
      if (p) p->verdict = json_object_get_boolean(val), reused++;
    }
  }
  json_object_put(o);
  fprintf(stderr, "verify: %zu verdicts from an earlier run (%s)\n", reused, rs->progress_path);
}

static json_object *make_request(size_t i, void *ctx) {
  run_state *rs = ctx;
  return rs->progs[i].verdict >= 0 || rs->progs[i].other ? NULL : sbx_request(rs->progs[i].text, rs->progs[i].len);
}

static bool on_response(size_t i, json_object *resp, void *ctx) {
  run_state *rs = ctx;
  int v = sbx_verdict(resp);
  rs->progs[i].verdict = v;
  if (v >= 0) rs->ran++;
  else rs->machinery_failed++;
  if (time(NULL) != rs->last_save) save_progress(rs);
  return v < 0;
}

enum { O_BENCH = 256, O_MODE, O_GENS, O_OUT, O_DATA, O_SOCKET, O_CACHE, O_DUMP, O_JOBS, O_NO_AUTOSTART, O_SHARD, O_SHARDS };
static const sbo_opt verify_opts[] = {
    {"benchmark", O_BENCH, "cruxeval", "this benchmark (surgebox verify's dispatch)"},
    {"mode", O_MODE, "output|input", "which CRUXEval task the generations answer (required)"},
    {"generations", O_GENS, "GENS.json", "the model's generations (required)"},
    {"out", O_OUT, "SCORED.json", "CRUXEval's scored file; an interrupted run resumes from SCORED.json.progress"},
    {"data", O_DATA, "CRUXEVAL.jsonl", "the benchmark's data (default $CRUXEVAL_DATA, else " SBX_DEFAULT_DATA ")"},
    {"jobs", O_JOBS, "N", "jobs in flight"},
    {"cache-dir", O_CACHE, "DIR", "the private daemon's compile cache"},
    {"dump-requests", O_DUMP, "FILE", "write the exec requests as JSON Lines and run nothing"},
    {"socket", O_SOCKET, "PATH", "the daemon's socket"},
    {"no-autostart", O_NO_AUTOSTART, NULL, "fail instead of starting a private daemon"},
    {"shard", O_SHARD, "I/N|auto", "only shard I of N of the programs; surgebox merge scores the shards' --out"},
    {"shards", O_SHARDS, "N", "N for --shard auto on Kubernetes (else $SURGEBOX_SHARDS)"},
    {NULL, 0, NULL, NULL}};
static const sbo_cmd verify_cmd = {"surgebox verify", "--benchmark cruxeval --mode output|input --generations GENS.json [options]",
                                   "Run CRUXEval generations sandboxed and score them as its authors do.",
                                   verify_opts, NULL, NULL, false, NULL};

typedef struct {
  const char *mode, *gens, *out, *data, *socket, *cache_dir, *dump, *shard, *shards;
  int jobs;
  bool autostart;
} opts;

static int parse(int argc, char **argv, opts *o) {
  memset(o, 0, sizeof *o);
  o->autostart = true;
  sbo_parser p;
  sbo_init(&p, &verify_cmd, argc, argv);
  int k, rc = 0;
  const char *v;
  long n;
  while (rc == 0 && (k = sbo_next(&p, &v)) > 0) {
    switch (k) {
    case O_BENCH: break; /* the dispatcher's */
    case O_MODE: o->mode = v; break;
    case O_GENS: o->gens = v; break;
    case O_OUT: o->out = v; break;
    case O_DATA: o->data = v; break;
    case O_SOCKET: o->socket = v; break;
    case O_CACHE: o->cache_dir = v; break;
    case O_DUMP: o->dump = v; break;
    case O_JOBS:
      if (sbo_parse_long(v, 0, 4096, &n) < 0) rc = sbo_bad_value(&p, k, v);
      o->jobs = (int)n;
      break;
    case O_NO_AUTOSTART: o->autostart = false; break;
    case O_SHARD: o->shard = v; break;
    case O_SHARDS: o->shards = v; break;
    }
  }
  if (rc == 0 && k == SBO_STOP) rc = p.status ? p.status : -1;
  if (rc == 0) rc = sbo_no_args(&p);
  if (rc == 0 && (!o->mode || (strcmp(o->mode, "output") && strcmp(o->mode, "input")) || !o->gens))
    rc = sbo_usage_error(&p, "--mode output|input and --generations FILE are required");
  sbo_done(&p);
  if (rc) return rc;
  if (!o->data) o->data = getenv("CRUXEVAL_DATA") ? getenv("CRUXEVAL_DATA") : SBX_DEFAULT_DATA;
  return 0;
}

/* Programs of the kept generations, deduplicated; gen_prog[i][j] is the
 * hash index's program for generation j of sample i, or NULL when dropped. */
static void build_programs(json_object *gens, const sbx_data *d, sbx_mode m, run_state *rs, size_t *n_gens,
                           size_t *n_dropped) {
  size_t cap = 0;
  *n_gens = *n_dropped = 0;
  for (size_t i = 0; i < d->n; i++) {
    json_object *l = json_object_object_get(gens, d->v[i].id);
    for (size_t j = 0; j < json_object_array_length(l); j++) {
      json_object *g = json_object_array_get_idx(l, j);
      (*n_gens)++;
      if (!sbx_keeps(m, &d->v[i], json_object_get_string(g), (size_t)json_object_get_string_len(g))) {
        (*n_dropped)++;
        continue;
      }
      if (rs->n == cap) rs->progs = realloc(rs->progs, (cap = cap ? cap * 2 : 256) * sizeof *rs->progs);
      program *p = &rs->progs[rs->n++];
      p->text = sbx_program(&d->v[i], json_object_get_string(g), (size_t)json_object_get_string_len(g), &p->len);
      sbu_sha256_hex(p->text, p->len, p->hash);
      p->verdict = -1;
      p->other = false;
    }
  }
  qsort(rs->progs, rs->n, sizeof *rs->progs, cmp_prog);
  size_t w = 0;
  for (size_t r = 0; r < rs->n; r++) {
    if (w && !strcmp(rs->progs[w - 1].hash, rs->progs[r].hash)) {
      free(rs->progs[r].text);
      continue;
    }
    rs->progs[w++] = rs->progs[r];
  }
  rs->n = w;
}

/* The verdict of every generation (-1 dropped), then the result lists. */
static json_object **score_lists(json_object *gens, const sbx_data *d, sbx_mode m, run_state *rs) {
  json_object **lists = calloc(d->n, sizeof *lists);
  for (size_t i = 0; i < d->n; i++) {
    json_object *l = json_object_object_get(gens, d->v[i].id);
    size_t n = json_object_array_length(l);
    int *v = calloc(n, sizeof *v);
    for (size_t j = 0; j < n; j++) {
      json_object *g = json_object_array_get_idx(l, j);
      const char *s = json_object_get_string(g);
      size_t len = (size_t)json_object_get_string_len(g);
      v[j] = -1;
      if (!sbx_keeps(m, &d->v[i], s, len)) continue;
      size_t plen;
      char *text = sbx_program(&d->v[i], s, len, &plen), hash[65];
      sbu_sha256_hex(text, plen, hash);
      free(text);
      v[j] = find_prog(rs, hash)->verdict;
    }
    lists[i] = sbx_sample_list(v, n);
    free(v);
  }
  return lists;
}

/* --shard: which programs are this shard's (the others are marked), and
 * OUT.shard.json */
static int shard_begin(const sbr_shard *sh, const opts *o, run_state *rs) {
  const char **hashes = malloc((rs->n + 1) * sizeof *hashes);
  bool *mine = calloc(rs->n + 1, sizeof *mine);
  for (size_t i = 0; i < rs->n; i++) hashes[i] = rs->progs[i].hash;
  int rc = sbx_shard_plan(sh, o->out, o->mode, o->data, o->gens, hashes, rs->n, mine);
  for (size_t i = 0; i < rs->n; i++) rs->progs[i].other = !mine[i];
  free(hashes);
  free(mine);
  return rc;
}

int sbx_verify_main(const sbc_ctx *ctx, int argc, char **argv) {
  opts o;
  int rc = parse(argc, argv, &o);
  if (rc) return rc < 0 ? 0 : 1;
  sbx_mode mode = strcmp(o.mode, "input") ? SBX_OUTPUT : SBX_INPUT;
  sbr_shard shard;
  if (sbr_shard_from_args("verify", o.shard, o.shards, &shard) < 0) return 1;
  if (shard.count && !o.out) {
    fprintf(stderr, "verify: --shard needs --out (the shard's verdicts go to OUT.progress)\n");
    return 1;
  }
  /* everything is checked before anything runs */
  char err[512];
  sbx_data d;
  if (sbx_data_load(o.data, &d, err, sizeof err) < 0) {
    fprintf(stderr, "verify: %s\n", err);
    return 2;
  }
  json_object *gens = json_object_from_file(o.gens);
  if (!gens) {
    fprintf(stderr, "verify: cannot read %s: %s\n", o.gens, json_util_get_last_err());
    sbx_data_free(&d);
    return 2;
  }
  if (sbx_generations_check(gens, &d, err, sizeof err) < 0) {
    fprintf(stderr, "verify: %s: %s; nothing ran\n", o.gens, err);
    json_object_put(gens);
    sbx_data_free(&d);
    return 2;
  }
  run_state rs = {0};
  size_t n_gens, n_dropped;
  build_programs(gens, &d, mode, &rs, &n_gens, &n_dropped);
  char progress[4200];
  if (o.out) {
    snprintf(progress, sizeof progress, "%s.progress", o.out);
    rs.progress_path = progress;
    load_progress(&rs);
  }
  if (shard.count && shard_begin(&shard, &o, &rs) < 0) {
    rc = 2;
    goto out;
  }
  fprintf(stderr, "verify: cruxeval %s mode: %zu samples, %zu generations, %zu dropped by the rules, %zu distinct programs to run\n",
          o.mode, d.n, n_gens, n_dropped, rs.n);
  char jobs_arg[16];
  snprintf(jobs_arg, sizeof jobs_arg, "%d", o.jobs > 0 ? o.jobs : (int)sysconf(_SC_NPROCESSORS_ONLN));
  const char *extra[] = {"--jobs", jobs_arg, o.cache_dir ? "--cache-dir" : NULL, o.cache_dir, NULL};
  sbr_pump pump = {.total = rs.n,
                   .window = (size_t)atoi(jobs_arg) * 2 + 2,
                   .make = make_request,
                   .done = on_response,
                   .checkpoint = save_progress,
                   .ctx = &rs,
                   .label = "verify",
                   .interrupted = &interrupted};
  sbc_conn c;
  rc = 0;
  if (o.dump) { /* bench/ replays these without a sandbox */
    FILE *f = strcmp(o.dump, "-") ? fopen(o.dump, "w") : stdout;
    pump.dump = f;
    rc = f ? sbr_pump_run(NULL, &pump) : -1;
    if (f && f != stdout && fclose(f) != 0) rc = -1;
    if (rc < 0) fprintf(stderr, "verify: cannot write %s: %s\n", o.dump, strerror(errno));
    rc = rc < 0 ? 2 : 0;
    goto out;
  }
  size_t pending = 0;
  for (size_t i = 0; i < rs.n; i++) pending += rs.progs[i].verdict < 0 && !rs.progs[i].other;
  if (!pending) { /* all known (a resumed run, or merge scoring the shards): no daemon */
    fprintf(stderr, "verify: every verdict is known, nothing to run\n");
  } else if (sbc_open(&c, o.socket, o.autostart, extra, err, sizeof err) < 0) {
    fprintf(stderr, "verify: %s\n", err);
    rc = 2;
    goto out;
  }
  signal(SIGINT, on_sigint);
  signal(SIGTERM, on_sigint);
  time_t t0 = time(NULL);
  if (pending) {
    sbr_pump_run(&c, &pump);
    sbc_close(&c);
  }
  fprintf(stderr, "verify: %zu programs ran in %llds\n", rs.ran, (long long)(time(NULL) - t0));
  size_t unknown = 0;
  for (size_t i = 0; i < rs.n; i++) unknown += rs.progs[i].verdict < 0 && !rs.progs[i].other;
  if (interrupted || unknown) {
    if (interrupted) fprintf(stderr, "verify: interrupted with %zu programs left%s\n", unknown, o.out ? ": run again to resume" : "");
    else fprintf(stderr, "verify: %zu programs got no verdict (the sandbox or the daemon failed); nothing scored%s\n", unknown,
                 o.out ? ": run again to retry them" : "");
    rc = interrupted ? 130 : 2;
    goto out;
  }
  if (shard.count) {
    save_progress(&rs);
    fprintf(stderr, "verify: shard %u/%u done: its verdicts are in %s; surgebox merge scores the shards\n", shard.index,
            shard.count, progress);
    goto out;
  }
  json_object **lists = score_lists(gens, &d, mode, &rs);
  json_object *scored = sbx_scored_file(gens, &d, lists);
  free(lists);
  if (o.out) {
    if (sbu_write_json_atomic(o.out, scored, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE) < 0) {
      fprintf(stderr, "verify: cannot write %s\n", o.out);
      rc = 2;
    } else {
      unlink(progress);
    }
  }
  printf("pass@1: %.1f pass@5: %.1f\n", json_object_get_double(json_object_object_get(scored, "pass_at_1")),
         json_object_get_double(json_object_object_get(scored, "pass_at_5")));
  json_object_put(scored);
out:
  for (size_t i = 0; i < rs.n; i++) free(rs.progs[i].text);
  free(rs.progs);
  json_object_put(gens);
  sbx_data_free(&d);
  return rc;
}
