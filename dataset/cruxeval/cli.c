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
 * (sbx_verify_run again, with every verdict known and no daemon). */
#include "protocol.h"
#include "cliopt.h"
#include "verify.h"
#include "cruxeval.h"
#include "driver.h"
#include "progress.h"

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
  const sbr_driver *d;
  const char *progress_path;
  size_t ran, machinery_failed;
  time_t last_save; /* saved at most once a second */
  bool warm;        /* --warm */
} run_state;



static program *find_prog(run_state *rs, const char *hash) {
  return sbr_progress_find(rs->progs, rs->n, sizeof *rs->progs, hash);
}

static void save_progress(void *ctx) {
  run_state *rs = ctx;
  if (!rs->progress_path) return;
  json_object *v = json_object_new_object();
  for (size_t i = 0; i < rs->n; i++)
    if (rs->progs[i].verdict >= 0 && !rs->progs[i].other) json_object_object_add(v, rs->progs[i].hash, json_object_new_boolean(rs->progs[i].verdict));
  sbr_progress_save(rs->progress_path, "cruxeval", "verdicts", v, &rs->last_save);
}

/* an earlier run's verdict of a program (sbr_progress_resume) */
static bool take_verdict(void *ctx, const char *hash, json_object *val) {
  program *p = find_prog(ctx, hash);
  if (p) p->verdict = json_object_get_boolean(val);
  return p != NULL;
}

static json_object *make_request(size_t i, void *ctx) {
  run_state *rs = ctx;
  if (rs->progs[i].verdict >= 0 || rs->progs[i].other) return NULL;
  json_object *req = sbx_request(rs->progs[i].text, rs->progs[i].len);
  if (rs->warm) json_object_object_add(req, "warm", json_object_new_boolean(true));
  sbr_driver_profile(rs->d, req);
  return req;
}

static bool on_response(size_t i, const sbc_result *r, json_object *resp, void *ctx) {
  (void)resp;
  run_state *rs = ctx;
  int v = sbx_verdict(r);
  rs->progs[i].verdict = v;
  if (v >= 0) rs->ran++;
  else rs->machinery_failed++;
  if (time(NULL) != rs->last_save) save_progress(rs);
  return v < 0;
}

enum { O_MODE = 256 };
#define AT(F) SBO_AT(sbx_verify_opts, F)
static const sbo_opt verify_opts[] = {
    SBR_VERIFY_BENCHMARK_OPT("cruxeval"),
    {"mode", O_MODE, "output|input", "which CRUXEval task the generations answer (required)", SBO_STR, AT(mode)},
    {"generations", 0, "GENS.json", "the model's generations (required)", SBO_STR, AT(gens)},
    {"out", 0, "SCORED.json", "CRUXEval's scored file; an interrupted run resumes from SCORED.json.progress", SBO_STR, AT(out)},
    {"data", 0, "CRUXEVAL.jsonl", "the benchmark's data (default $CRUXEVAL_DATA, else " SBX_DEFAULT_DATA ")", SBO_STR, AT(data)},
    SBR_CACHE_DIR_OPT(sbx_verify_opts),
    SBX_SUBSET_OPTS(sbx_verify_opts, "a smoke test: only these samples (indices or ids; pass@k over them only)",
                    "a smoke test: only the first N samples (pass@k over them only)"),
    {"warm", 0, NULL, "each check from a warm Python interpreter, same isolation (PROTOCOL.md \"Warm starts\")", SBO_FLAG, AT(warm)},
    {NULL, 0, NULL, NULL}};
#undef AT
static const sbo_cmd verify_cmd = {"surgebox verify", "--benchmark cruxeval --mode output|input --generations GENS.json [options]",
                                   "Run CRUXEval generations sandboxed and score them as its authors do.",
                                   verify_opts, NULL,
                                   "exit: 0 scored, 1 bad arguments, 2 a failure (also a failure of surgebox for any "
                                   "program: nothing scored, no verdict kept for it), 130 interrupted\n",
                                   false, sbr_run_groups};

/* 0 parsed; -1 after --help; else the exit status of a mistake. */
static int parse(int argc, char **argv, sbc_ctx *ctx, sbx_verify_opts *o) {
  memset(o, 0, sizeof *o);
  sbr_run_opts run = {0};
  sbo_parser p;
  int rc = sbr_parse(&p, &verify_cmd, argc, argv, ctx, &run, NULL, o);
  if (rc == 0) rc = sbo_no_args(&p);
  static const char *const modes[] = {"output", "input", NULL};
  if (rc == 0 && o->mode) rc = sbo_check_choice(&p, O_MODE, o->mode, modes);
  if (rc == 0 && (!o->mode || !o->gens))
    rc = sbo_usage_error(&p, "%s is required", !o->mode ? "--mode output|input" : "--generations FILE");
  if (rc == 0) rc = sbx_subset_given(&p, o->samples, o->limit);
  if (rc == 0 && (o->samples || o->limit) && (run.shard.shard || run.shard.shards))
    rc = sbo_usage_error(&p, "--samples and --limit are for a smoke test on one machine, not with --shard");
  sbo_done(&p);
  o->jobs = run.jobs;
  o->dump = run.dump;
  if (rc == 0) rc = sbr_run_shard("verify", &run, o->out != NULL, "--out (the shard's verdicts go to OUT.progress)", &o->shard);
  if (rc == 0 && !o->data) o->data = getenv("CRUXEVAL_DATA") ? getenv("CRUXEVAL_DATA") : SBX_DEFAULT_DATA;
  return rc;
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
  qsort(rs->progs, rs->n, sizeof *rs->progs, sbr_progress_by_hash);
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
static int shard_begin(const sbr_shard *sh, const sbx_verify_opts *o, run_state *rs) {
  const char **hashes = malloc((rs->n + 1) * sizeof *hashes);
  bool *mine = calloc(rs->n + 1, sizeof *mine);
  for (size_t i = 0; i < rs->n; i++) hashes[i] = rs->progs[i].hash;
  int rc = sbx_shard_plan(sh, o->out, o->mode, o->data, o->gens, hashes, rs->n, mine);
  for (size_t i = 0; i < rs->n; i++) rs->progs[i].other = !mine[i];
  free(hashes);
  free(mine);
  return rc;
}

/* The data and the generations (cut to --samples/--limit), checked before
 * anything runs: 0, 1 (a --samples item is not a sample) or 2. */
static int load(const sbx_verify_opts *o, sbx_data *d, json_object **gens) {
  char err[512];
  if (sbx_data_load(o->data, d, err, sizeof err) < 0) {
    fprintf(stderr, "verify: %s\n", err);
    return 2;
  }
  char why[600];
  if (!(*gens = sbp_json_file(o->gens, why, sizeof why))) {
    fprintf(stderr, "verify: %s: %s\n", o->gens, why);
    return 2;
  }
  size_t all = d->n;
  if (sbx_subset(d, gens, o->samples, o->limit, err, sizeof err) < 0) {
    fprintf(stderr, "verify: %s; nothing ran\n", err);
    return 1;
  }
  if (d->n < all)
    fprintf(stderr, "verify: a smoke test on %zu of the %zu samples (%s): pass@k is over these only\n", d->n, all,
            o->samples ? "--samples" : "--limit");
  if (sbx_generations_check(*gens, d, err, sizeof err) < 0) {
    fprintf(stderr, "verify: %s: %s; nothing ran\n", o->gens, err);
    return 2;
  }
  return 0;
}

/* The programs without a verdict through the driver: 0, 2 or 130. */
static int run_programs(sbr_driver *d, const sbx_verify_opts *o, run_state *rs) {
  size_t pending = 0;
  for (size_t i = 0; i < rs->n; i++) pending += rs->progs[i].verdict < 0 && !rs->progs[i].other;
  sbr_pump pump = {.total = rs->n, .make = make_request, .done = on_response, .checkpoint = save_progress, .ctx = rs};
  if (o->dump) return sbr_driver_dump(d, &pump, o->dump); /* bench/ replays these without a sandbox */
  int rc = 0;
  if (!pending) fprintf(stderr, "verify: every verdict is known, nothing to run\n"); /* resumed, or merged shards */
  if (pending || d->ctx.profile) rc = sbr_driver_connect(d); /* the profile is checked before anything runs */
  time_t t0 = time(NULL);
  if (pending && !rc) rc = sbr_driver_pump(d, &pump);
  if (rc && rc != 130) return rc;
  fprintf(stderr, "verify: %zu programs ran in %llds\n", rs->ran, (long long)(time(NULL) - t0));
  size_t unknown = 0;
  for (size_t i = 0; i < rs->n; i++) unknown += rs->progs[i].verdict < 0 && !rs->progs[i].other;
  if (rc == 130) fprintf(stderr, "verify: interrupted with %zu programs left%s\n", unknown, o->out ? ": run again to resume" : "");
  else if (unknown)
    fprintf(stderr, "verify: %zu programs got no verdict (the sandbox or the daemon failed); nothing scored%s\n", unknown,
            o->out ? ": run again to retry them" : "");
  return rc ? rc : unknown ? 2 : 0;
}

/* Every verdict known: the scored file to --out, pass@k to stdout. 0 or 2. */
static int score(const sbx_verify_opts *o, json_object *gens, const sbx_data *d, run_state *rs) {
  json_object **lists = score_lists(gens, d, strcmp(o->mode, "input") ? SBX_OUTPUT : SBX_INPUT, rs);
  json_object *scored = sbx_scored_file(gens, d, lists);
  free(lists);
  int rc = 0;
  if (o->out && sbr_write_json_atomic_ext(o->out, scored, JSON_C_TO_STRING_SPACED) < 0) {
    fprintf(stderr, "verify: cannot write %s\n", o->out);
    rc = 2;
  } else if (o->out) {
    unlink(rs->progress_path);
  }
  json_object *note = json_object_object_get(scored, "pass_at_k_note");
  printf("pass@1: %.1f pass@5: %.1f%s%s%s\n", json_object_get_double(json_object_object_get(scored, "pass_at_1")),
         json_object_get_double(json_object_object_get(scored, "pass_at_5")), note ? " (" : "",
         note ? json_object_get_string(note) : "", note ? ")" : "");
  json_object_put(scored);
  return rc;
}

SBR_COMMAND(sbx_verify_cmdline, sbx_verify_opts, parse, sbx_verify_run)

int sbx_verify_run(const sbc_ctx *ctx, const sbx_verify_opts *o) {
  sbr_driver d;
  sbr_driver_init(&d, "verify", ctx, o->jobs);
  d.cache_dir = o->cache_dir;
  sbx_data data = {0};
  json_object *gens = NULL;
  run_state rs = {.d = &d, .warm = o->warm};
  char progress[4200];
  int rc = load(o, &data, &gens);
  if (rc) goto out;
  size_t n_gens, n_dropped;
  build_programs(gens, &data, strcmp(o->mode, "input") ? SBX_OUTPUT : SBX_INPUT, &rs, &n_gens, &n_dropped);
  if (o->out) {
    snprintf(progress, sizeof progress, "%s.progress", o->out);
    rs.progress_path = progress;
    sbr_progress_resume(progress, "verdicts", json_type_boolean, "verdicts", take_verdict, &rs);
  }
  if (o->shard.count && shard_begin(&o->shard, o, &rs) < 0) {
    rc = 2;
    goto out;
  }
  fprintf(stderr, "verify: cruxeval %s mode: %zu samples, %zu generations, %zu dropped by the rules, %zu distinct programs to run\n",
          o->mode, data.n, n_gens, n_dropped, rs.n);
  if ((rc = run_programs(&d, o, &rs)) || o->dump) goto out;
  if (o->shard.count) {
    save_progress(&rs);
    fprintf(stderr, "verify: shard %u/%u done: its verdicts are in %s; surgebox merge scores the shards\n", o->shard.index,
            o->shard.count, progress);
  } else {
    rc = score(o, gens, &data, &rs);
  }
out:
  for (size_t i = 0; i < rs.n; i++) free(rs.progs[i].text);
  free(rs.progs);
  json_object_put(gens);
  sbx_data_free(&data);
  return sbr_driver_finish(&d, rc);
}
