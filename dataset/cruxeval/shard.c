/* verify --benchmark cruxeval --shard I/N and the merge of such shards.
 *
 * The unit is the distinct program (what verify runs once), keyed by the
 * SHA-256 of its text; programs cost about the same, so the shards are
 * balanced by count. A shard's output is OUT.progress (its verdicts) and
 * OUT.shard.json; the merge joins the verdicts and scores them with the
 * very code a single run uses. */
#include "cruxeval.h"
#include "progress.h"

int sbx_shard_plan(const sbr_shard *sh, const char *out, const char *mode, const char *data, const char *gens,
                   const char *const *hashes, size_t n, bool *mine) {
  json_object *m = sbr_shard_manifest_new("verify-cruxeval", sh);
  json_object_object_add(m, "mode", json_object_new_string(mode));
  sbr_shard_add_file(m, "data", data);
  sbr_shard_add_file(m, "generations", gens);
  return sbr_progress_shard_plan(sh, m, hashes, n, mine, out);
}

/* the single run's own scoring, with every verdict known */
static int score(const sbc_ctx *ctx, json_object *m, const char *out) {
  sbx_verify_opts o = {.mode = json_object_get_string(json_object_object_get(m, "mode")),
                       .gens = sbr_shard_file_path(m, "generations"),
                       .data = sbr_shard_file_path(m, "data"),
                       .out = out};
  return sbx_verify_run(ctx, &o);
}

static const char *const inputs[] = {"data", "generations", NULL};
static const sbr_progress_kind progress = {"cruxeval", "verdicts", json_type_boolean, "verdict", inputs, score};

int sbx_merge(const sbr_merge_shard *sh, size_t n, const char *out) { return sbr_progress_merge(sh, n, out, &progress); }
