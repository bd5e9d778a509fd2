/* verify --benchmark tests --shard I/N and the merge of such shards.
 *
 * The unit is the distinct program (what the run sends once), keyed by its
 * SHA-256, balanced by count. A shard writes OUT.progress (its programs'
 * records) and OUT.shard.json; the merge joins the records and scores them
 * with the very code a single run uses (sbtb_verify_run, nothing to run). */
#include "tests_bench.h"
#include "progress.h"

int sbtb_shard_plan(const sbr_shard *sh, const sbtb_opts *o, const char *const *hashes, size_t n, bool *mine) {
  json_object *m = sbr_shard_manifest_new("verify-tests", sh);
  /* what changes a record or the score: the same in every shard */
  json_object_object_add(m, "stop", json_object_new_string(o->stop));
  json_object_object_add(m, "k", o->k ? json_object_new_string(o->k) : NULL);
  json_object_object_add(m, "language", o->language ? json_object_new_string(o->language) : NULL);
  json_object_object_add(m, "time_limit_s", json_object_new_double(o->time_limit));
  sbr_shard_add_file(m, "problems", o->problems);
  sbr_shard_add_file(m, "solutions", o->solutions);
  return sbr_progress_shard_plan(sh, m, hashes, n, mine, o->out);
}

/* the single run's own scoring, with every record known */
static int score(const sbc_ctx *ctx, json_object *m, const char *out) {
  sbtb_opts o = {.problems = sbr_shard_file_path(m, "problems"),
                 .solutions = sbr_shard_file_path(m, "solutions"),
                 .stop = json_object_get_string(json_object_object_get(m, "stop")),
                 .k = json_object_get_string(json_object_object_get(m, "k")),
                 .language = json_object_get_string(json_object_object_get(m, "language")),
                 .time_limit = json_object_get_double(json_object_object_get(m, "time_limit_s")),
                 .out = out};
  return sbtb_verify_run(ctx, &o);
}

static const char *const inputs[] = {"problems", "solutions", NULL};
static const sbr_progress_kind progress = {"tests", "records", json_type_object, "result", inputs, score};

int sbtb_merge(const sbr_merge_shard *sh, size_t n, const char *out) { return sbr_progress_merge(sh, n, out, &progress); }
