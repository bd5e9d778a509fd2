/* surgebox verify --benchmark surge (alias: surgebox eval --execute): SURGE
 * predictions scored against references regenerated here, for users who do
 * not trust the shipped ones.
 *   1. arguments, the data and the predictions are checked before anything
 *      runs (exit 1, nothing run);
 *   2. only the items that have a prediction run: per subset, `surgebox regen
 *      --only` into --out DIR (or a private directory), which resumes;
 *   3. an item whose reference was not regenerated here (toolchain missing,
 *      timeout, failure) is left out of the scores and counted by reason;
 *   4. the rest is scored by the evaluator against the regenerated references.
 * Under --json stdout holds one JSON document; progress goes to stderr.
 * With --shard I/N only this shard's predicted items run into --out DIR
 * (verify_shard.c); nothing is scored until `surgebox merge` joins them. */
#include "protocol.h"
#include "cliopt.h"
#include "eval_cli.h"
#include "eval_run.h"
#include "regen.h"
#include "fs_tree.h"
#include "verify_surge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_BENCHMARK = 0x7100 };

/* The options of eval that apply here (not --references: the references
 * are regenerated), --out, and the daemon's and shard groups. eval --execute
 * also takes --execute (its own flag) and --references (refused with why);
 * neither is listed in verify's --help. */
static int no_references(const sbo_parser *p, const sbo_opt *o, const char *v, void *arg) {
  return sbo_usage_error(p, "--references is not for --execute (the references are regenerated)");
}

#define AT(F) SBO_AT(sbs_vs_opts, F)
static const sbo_opt vs_opts[] = {
    {"data", SBE_O_DATA, "DIR", "DIR/ml.json ... DIR/fl.json: the SURGE data to run", SBO_PATH, AT(data)},
    SBE_SCORING_OPTS(sbs_vs_opts, SBO_PATH),
    {"subset", SBE_O_SUBSET, "LIST", "the subsets to run (default all)", SBO_STR, AT(subsets)},
    {"jobs", SBE_O_JOBS, "N", "jobs in flight", SBO_INT, AT(jobs), .min = 1, .max = 4096},
    {"strict", SBE_O_STRICT, NULL, "exit 2 when a prediction line was not scored (unmatched, malformed, duplicate, "
     "excluded: an item not regenerated) or nothing was", SBO_FLAG, AT(strict)},
    {"out", 'o', "DIR", "keep the regenerated <subset>.json there; a second run reuses them", SBO_PATH, AT(out)},
    {NULL, 0, NULL, NULL}};
#undef AT
static const sbo_opt vs_verify_more[] = {
    {"benchmark", O_BENCHMARK, "surge", NULL, SBO_SKIP}, /* surgebox verify's dispatch */
    {"references", SBE_O_REFS, "FILE...", NULL, SBO_CALL, .call = no_references},
    {NULL, 0, NULL, NULL}};
static const sbo_opt vs_eval_more[] = {
    {"execute", SBE_O_EXECUTE, NULL, "score against references regenerated right then (runs the items)", SBO_SKIP},
    {"references", SBE_O_REFS, "FILE...", NULL, SBO_CALL, .call = no_references},
    {NULL, 0, NULL, NULL}};
#define VS_ABOUT                                                                                                       \
  "Run only the SURGE items that have a prediction, in the sandbox, and score the\n"                                   \
  "predictions against those references. Items not regenerated here (a toolchain\n"                                   \
  "missing, a timeout, a failure of surgebox) are excluded and counted. Under --json\n"                               \
  "stdout holds one JSON document; progress goes to stderr. With --shard I/N only this\n"                             \
  "shard's predicted items run into --out DIR; surgebox merge scores the shards."
#define VS_FOOTER                                                                                                      \
  "exit: 0 scored, 1 bad arguments (nothing ran), 2 an input that cannot be read or a failure while running "          \
  "(also a failure of surgebox for any item: the rest is scored), 130 interrupted\n"
static const sbo_cmd vs_cmd = {"surgebox verify --benchmark surge",
                               "--data DIR --predictions FILE [--out DIR] [options]\n"
                               "(surgebox eval --execute takes the same arguments)",
                               VS_ABOUT, vs_opts, vs_verify_more, VS_FOOTER, false, sbr_shardable_groups};
static const sbo_cmd ee_cmd = {"surgebox eval", "--execute --data DIR --predictions FILE [--out DIR] [options]\n"
                               "(surgebox verify --benchmark surge takes the same arguments)",
                               VS_ABOUT, vs_opts, vs_eval_more, VS_FOOTER, false, sbr_shardable_groups};

/* Who speaks in messages: the command the user typed. */
static const char *who(const sbs_vs_opts *o) { return o->via_eval ? "eval" : "verify"; }

/* --subset LIST (or all) into o->want: 0, or a usage error. */
static int want_subsets(const sbo_parser *p, const char *subsets, sbs_vs_opts *o) {
  if (!strcmp(subsets, "all")) {
    for (int s = 0; s < SBS_N_SUBSETS; s++) o->want[s] = true;
    return 0;
  }
  o->subsets_given = true;
  char buf[128];
  snprintf(buf, sizeof buf, "%s", subsets);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    sbs_subset s;
    if (sbs_subset_parse(tok, &s) < 0) return sbo_usage_error(p, "unknown subset %s (ml cl rl sc tc bg dr fl, or all)", tok);
    o->want[s] = true;
  }
  return 0;
}

/* 0 parsed; otherwise the exit status (0 after --help is returned as -1). */
static int parse(int argc, char **argv, sbc_ctx *ctx, sbs_vs_opts *o, bool via_eval) {
  memset(o, 0, sizeof *o);
  o->via_eval = via_eval;
  sbr_run_opts run = {0};
  sbo_parser p;
  int rc = sbr_parse(&p, via_eval ? &ee_cmd : &vs_cmd, argc, argv, ctx, &run, NULL, o);
  if (rc) {
    sbo_done(&p);
    return rc;
  }
  if (rc == 0) rc = sbo_no_args(&p);
  if (rc == 0 && (!o->data || !o->preds)) rc = sbo_usage_error(&p, "--data DIR and --predictions FILE are required");
  if (rc == 0 && o->by && strcmp(o->by, "language") && strcmp(o->by, "difficulty") && strcmp(o->by, "config"))
    rc = sbo_bad_value(&p, SBE_O_BY, o->by);
  if (rc == 0) rc = want_subsets(&p, o->subsets ? o->subsets : "all", o);
  sbo_done(&p);
  if (rc == 0) rc = sbr_run_shard(who(o), &run, o->out != NULL, "--out DIR (what surgebox merge reads)", &o->shard);
  if (rc == 0 && o->shard.count && o->items) { /* a shard scores nothing; the merge writes the report alone */
    fprintf(stderr, "%s: --items is not for --shard (surgebox merge writes the scored report only)\n", who(o));
    rc = 1;
  }
  return rc;
}

static sbe_category cat_of(sbs_subset s) { return sbe_subset_category(sbs_subset_name(s)); }

/* The published data: every wanted <subset>.json of DIR into run->refs, its
 * items at their positions (regen's --only indices). 0 or -1 (said why). */
static int load_data(const sbs_vs_opts *o, sbe_run *run, json_object **published) {
  int found = 0;
  for (int s = 0; s < SBS_N_SUBSETS; s++) {
    if (!o->want[s]) continue;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", o->data, sbs_subset_name((sbs_subset)s));
    if (access(path, F_OK) != 0 && !o->subsets_given) continue;
    char why[600] = "not a list";
    published[s] = sbp_json_file(path, why, sizeof why);
    if (!published[s] || !json_object_is_type(published[s], json_type_array)) {
      fprintf(stderr, "%s: %s: %s (SURGE's data is a JSON list of items)\n", who(o), path, why);
      return -1;
    }
    sbe_category c = cat_of((sbs_subset)s);
    if (sbe_refs_load_file(&run->refs, path) != 0) return -1;
    if (run->refs.count[c] != json_object_array_length(published[s])) {
      fprintf(stderr, "%s: %s: %zu of its %zu items are not %s items\n", who(o), path,
              json_object_array_length(published[s]) - run->refs.count[c], json_object_array_length(published[s]),
              sbs_subset_name((sbs_subset)s));
      return -1;
    }
    found++;
  }
  if (!found) fprintf(stderr, "%s: %s: no ml.json ... fl.json found\n", who(o), o->data);
  return found ? 0 : -1;
}

/* The predictions, read and matched to the data by the evaluator; any line
 * it could not place is an error here (it would otherwise be run for nothing
 * or silently dropped). */
static int check_predictions(const sbs_vs_opts *o, const char *path, sbe_run *run) {
  if (sbe_run_predictions(run, path) != 0) return -1;
  const sbe_pred_stats *st = &run->stats;
  size_t bad = st->unknown_subset + st->bad_index + st->question_not_found + st->question_ambiguous + st->malformed +
               st->duplicates;
  if (bad) {
    fprintf(stderr,
            "%s: %s: %zu prediction(s) do not name one item of the data (unknown subset %zu, index outside "
            "%zu, question not found %zu, ambiguous %zu, malformed %zu, duplicate %zu); nothing was run\n",
            who(o), path, bad, st->unknown_subset, st->bad_index, st->question_not_found, st->question_ambiguous,
            st->malformed, st->duplicates);
    return -1;
  }
  size_t n = 0;
  for (size_t m = 0; m < run->nmodels; m++) n += run->models[m].nscored;
  if (!n) {
    fprintf(stderr, "%s: %s: no predictions; nothing was run\n", who(o), path);
    return -1;
  }
  return 0;
}

/* Arguments' data and predictions, checked: 0, or -1 (said why). */
static int prepare(const sbs_vs_opts *o, sbe_run *check, sbs_vs_items *items, json_object **published) {
  if (load_data(o, check, published) != 0 || check_predictions(o, o->preds, check) != 0) return -1;
  return sbs_vs_items_init(items, check, published);
}

/* The predictions scored against the references regenerated in out (the
 * excluded left out), printed to f as the options say: 0, or 2. */
static int score(const sbs_vs_opts *o, sbs_vs_items *items, const char *out, FILE *f) {
  sbe_run run = {0};
  int status = 2;
  if (sbs_vs_exclusions(items, out) != 0) goto done;
  run.options = o->fl_extract ? SBE_SCORE_FL_EXTRACT : 0;
  for (int s = 0; s < SBS_N_SUBSETS; s++) {
    if (!items->n_needed[s]) continue;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", out, sbs_subset_name((sbs_subset)s));
    if (sbe_refs_load_file(&run.refs, path) != 0) goto done;
    run.exclude[cat_of((sbs_subset)s)] = items->excluded[s];
  }
  if (sbe_run_predictions(&run, o->preds) != 0) goto done;
  if (o->items && sbe_write_items(&run, o->items) != 0) goto done;
  if (o->json) {
    json_object *root = sbe_json(&run, o->by);
    json_object_object_add(root, "benchmark", json_object_new_string("surge"));
    sbs_vs_report_json(items, root, o->out);
    fprintf(f, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(root);
  } else {
    sbe_print_table(&run, f);
    if (o->by) sbe_print_by(&run, o->by, f);
    sbs_vs_report_text(items, f, o->out);
  }
  status = fflush(f) == 0 ? 0 : 2;
  if (!status && o->strict) status = sbe_strict_status(&run, o->via_eval ? "eval" : "verify", stderr);
done:
  sbe_run_free(&run);
  return status;
}

/* A shard's own report: what it owns and ran, not scores (a part of the
 * predictions would score differently from the whole). */
static int shard_report(const sbs_vs_opts *o, const sbr_shard *sh, const sbs_vs_items *items, const char *out) {
  if (o->json) {
    json_object *r = json_object_new_object();
    json_object_object_add(r, "benchmark", json_object_new_string("surge"));
    json_object_object_add(r, "shard", json_object_new_int((int)sh->index));
    json_object_object_add(r, "shards", json_object_new_int((int)sh->count));
    json_object_object_add(r, "predicted_items", json_object_new_int64((int64_t)items->total_needed));
    json_object_object_add(r, "attempted", json_object_new_int64((int64_t)items->ran));
    json_object_object_add(r, "reused", json_object_new_int64((int64_t)items->reused));
    json_object_object_add(r, "dir", json_object_new_string(out));
    printf("%s\n", json_object_to_json_string_ext(r, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(r);
  } else {
    printf("shard %u/%u: %zu predicted item(s) of this shard, %zu attempted now, %zu reused, in %s\n", sh->index,
           sh->count, items->total_needed, items->ran, items->reused, out);
  }
  fprintf(stderr, "%s: shard %u/%u done; surgebox merge --out FILE over every shard's --out scores them\n", who(o),
          sh->index, sh->count);
  return fflush(stdout) == 0 ? 0 : 2;
}

static int cmdline(const sbc_ctx *ctx, int argc, char **argv, bool via_eval) {
  sbc_ctx c = *ctx;
  sbs_vs_opts o;
  int rc = parse(argc, argv, &c, &o, via_eval);
  if (rc) return rc < 0 ? 0 : rc;
  return sbs_verify_surge_run(&c, &o);
}

/* The run's directory: --out (created), else a private one in tmp. 0 or -1. */
static int out_dir(const sbs_vs_opts *o, char *tmp, const char **out) {
  *out = o->out;
  if (o->out && sb_mkdir_p(o->out, 0755) < 0) {
    fprintf(stderr, "%s: cannot create %s: %s\n", who(o), o->out, strerror(errno));
    return -1;
  }
  if (!o->out && !mkdtemp(tmp)) {
    fprintf(stderr, "%s: mkdtemp: %s\n", who(o), strerror(errno));
    return -1;
  }
  if (!o->out) *out = tmp;
  return 0;
}

int sbs_verify_surge_run(const sbc_ctx *ctx, const sbs_vs_opts *o) {
  sbr_driver d;
  sbr_driver_init(&d, who(o), ctx, o->jobs);
  sbe_run check = {0};
  sbs_vs_items items = {0};
  json_object *published[SBS_N_SUBSETS] = {0};
  char tmp[] = "/tmp/surgebox-verify-XXXXXX";
  const char *out = NULL;
  int status = 1; /* bad input until everything is checked */
  /* an input that cannot be read is exit 2, as for every command */
  if (access(o->data, R_OK | X_OK) != 0 || access(o->preds, R_OK) != 0) {
    const char *bad = access(o->data, R_OK | X_OK) != 0 ? o->data : o->preds;
    fprintf(stderr, "%s: cannot read %s: %s; nothing ran\n", who(o), bad, errno == ENOENT ? "no such file or directory" : strerror(errno));
    status = 2;
    goto done;
  }
  if (prepare(o, &check, &items, published) != 0 || out_dir(o, tmp, &out) != 0) goto done;
  if (o->shard.count && sbs_vs_shard_begin(&d, o, &items, published, out) != 0) goto done;
  if (sbs_vs_items_resume(&items, out, published) != 0) goto done; /* --out from another dataset */
  /* the profile is checked (and the daemon reached) before anything runs, even when nothing is left to run */
  if (ctx->profile && (status = sbr_driver_connect(&d))) goto done;
  status = sbs_vs_regenerate(&d, o, &items, out);
  /* failures of surgebox are excluded from the scores (the rest is scored) and make the exit status 2 */
  if (!status) status = o->shard.count ? shard_report(o, &o->shard, &items, out) : score(o, &items, out, stdout);
done:
  if (out == tmp) sbs_vs_remove_dir(tmp);
  sbs_vs_items_free(&items);
  for (int s = 0; s < SBS_N_SUBSETS; s++) json_object_put(published[s]);
  sbe_run_free(&check);
  return sbr_driver_finish(&d, status);
}

int sbs_vs_score_dir(const sbs_vs_opts *o, const char *dir, FILE *f) {
  sbe_run check = {0};
  sbs_vs_items items = {0};
  json_object *published[SBS_N_SUBSETS] = {0};
  int status = 2;
  if (prepare(o, &check, &items, published) == 0 && sbs_vs_items_resume(&items, dir, published) == 0) {
    size_t missing = 0;
    for (int s = 0; s < SBS_N_SUBSETS; s++) missing += items.n_to_run[s];
    if (missing) fprintf(stderr, "%s: %zu predicted item(s) have no regenerated record in %s\n", who(o), missing, dir);
    else status = score(o, &items, dir, f);
  }
  sbs_vs_items_free(&items);
  for (int s = 0; s < SBS_N_SUBSETS; s++) json_object_put(published[s]);
  sbe_run_free(&check);
  return status;
}

int sbs_verify_surge_cmdline(const sbc_ctx *ctx, int argc, char **argv) { return cmdline(ctx, argc, argv, false); }
int sbs_eval_execute_main(const sbc_ctx *ctx, int argc, char **argv) { return cmdline(ctx, argc, argv, true); }
