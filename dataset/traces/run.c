/* trace-dataset's run: every item not already in OUT traced through the
 * daemon (the driver's pump), with trace.check, one trace and one record per
 * item as it arrives (so an interrupted run resumes), then OUT/index.jsonl
 * and the summary.
 *
 * OUT/traces/ID.jsonl   the trace as the daemon returned it
 * OUT/items/ID.json     the item's record (written last: its presence, with
 *                       the request's hash, is what "done" means)
 * OUT/index.jsonl       the records in input order (this shard's with --shard)
 * OUT/summary.json      the counts (sbtd_summarize)
 * OUT/shard.json        with --shard: the run it belongs to, its items */
#include "traces.h"
#include "atomic_write.h"
#include "base64.h"
#include "driver.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>

typedef struct {
  const sbtd_opts *o;
  sbtd_items items;
  json_object **rec; /* rec[i]: item i's record once traced (owned), else NULL */
  bool *other;       /* another shard's */
  const sbr_driver *d;
  bool write_failed; /* OUT could not be written: the run stopped */
  size_t ran;        /* answers recorded this run */
  /* --programs: a refusal of the user's request (a toolchain without a
   * tracer, an unknown one) is that item's answer, recorded without a trace;
   * CRUXEval's requests are ours, so a refusal is a failure of surgebox */
  bool (*failure_of)(const sbc_result *r, char *why, size_t why_len);
} run_state;

static void item_path(char *buf, size_t len, const char *out, const char *dir, const char *id, const char *ext) {
  snprintf(buf, len, "%s/%s/%s%s", out, dir, id, ext);
}

static const char *str_of(json_object *o, const char *k) {
  json_object *v;
  return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* the records an earlier run left (same request, trace file present) */
static size_t load_done(run_state *rs) {
  size_t done = 0;
  for (size_t i = 0; i < rs->items.n; i++) {
    char p[4400], t[4400];
    item_path(p, sizeof p, rs->o->out, "items", rs->items.v[i].id, ".json");
    item_path(t, sizeof t, rs->o->out, "traces", rs->items.v[i].id, ".jsonl");
    json_object *r = json_object_from_file(p);
    const char *sha = r ? str_of(r, "program_sha256") : NULL;
    struct stat st;
    if (r && sha && !strcmp(sha, rs->items.v[i].sha) && str_of(r, "trace_status") && stat(t, &st) == 0) {
      rs->rec[i] = r;
      done += !rs->other[i];
    } else {
      json_object_put(r);
    }
  }
  return done;
}

static json_object *make_request(size_t i, void *ctx) {
  run_state *rs = ctx;
  if (rs->rec[i] || rs->other[i]) return NULL;
  json_object *req = json_object_new_object(), *steps, *topt = json_object_new_object();
  json_object_object_foreach(rs->items.v[i].req, k, v) json_object_object_add(req, k, json_object_get(v));
  if (rs->o->trace) {
    json_object_object_foreach(rs->o->trace, tk, tv) json_object_object_add(topt, tk, json_object_get(tv));
  }
  json_object_object_add(topt, "check", json_object_new_boolean(true));
  /* a raw step (CRUXEval's, as verify sends it) carries the option itself */
  if (json_object_object_get_ex(req, "steps", &steps)) {
    json_object *s0 = json_object_array_get_idx(steps, 0), *copy = json_object_new_object(), *arr = json_object_new_array();
    json_object_object_foreach(s0, sk, sv) json_object_object_add(copy, sk, json_object_get(sv));
    json_object_object_add(copy, "trace", topt);
    json_object_array_add(arr, copy);
    json_object_object_add(req, "steps", arr);
  } else {
    json_object_object_add(req, "trace", topt);
  }
  sbr_driver_profile(rs->d, req);
  return req;
}

/* the end record's cap and event count, from the trace's last line */
static void end_fields(const char *trace, size_t len, json_object *rec) {
  const char *last = len > 1 ? memrchr(trace, '\n', len - 1) : NULL;
  json_object *end = json_tokener_parse(last ? last + 1 : trace), *v;
  if (end && json_object_object_get_ex(end, "cap", &v)) json_object_object_add(rec, "cap", json_object_get(v));
  if (end && json_object_object_get_ex(end, "events", &v)) json_object_object_add(rec, "events", json_object_get(v));
  if (end && json_object_object_get_ex(end, "by", &v)) json_object_object_add(rec, "end_by", json_object_get(v));
  json_object_put(end);
}

/* the trace's bytes to OUT/traces/ID.jsonl; -1 said */
static int write_trace(const run_state *rs, size_t i, json_object *step) {
  const char *text = str_of(step, "trace"), *b64 = str_of(step, "trace_b64");
  unsigned char *bytes = NULL;
  size_t len = text ? strlen(text) : 0;
  if (!text && b64 && sbu_base64_decode(b64, strlen(b64), &bytes, &len, NULL) != SBU_B64_OK) bytes = NULL, len = 0;
  char p[4400];
  item_path(p, sizeof p, rs->o->out, "traces", rs->items.v[i].id, ".jsonl");
  int rc = sbu_write_atomic(p, text ? (const void *)text : bytes, len, 0644);
  if (rc < 0) fprintf(stderr, "trace-dataset: cannot write %s: %s\n", p, strerror(errno));
  free(bytes);
  return rc;
}

/* How a run ended beyond its status, where there is something to say: its
 * signal, the limit that fired, surgebox's error (an ordinary run has none,
 * and its record stays as it was). A crashed trace or a traced run unlike
 * the untraced one is then told apart from the record alone. */
static void add_why(json_object *rec, json_object *run) {
  static const char *const keys[] = {"signal", "limit_hit", "error", NULL};
  for (size_t k = 0; keys[k]; k++) {
    const char *v = str_of(run, keys[k]);
    if (v && *v) json_object_object_add(rec, keys[k], json_object_new_string(v));
  }
}

static bool on_response(size_t i, const sbc_result *r, json_object *resp, void *ctx) {
  run_state *rs = ctx;
  char why[512];
  if (rs->failure_of(r, why, sizeof why)) return true; /* counted by the pump: nothing recorded */
  json_object *steps = NULL, *step = NULL, *v;
  json_object_object_get_ex(resp, "steps", &steps);
  size_t n = steps ? json_object_array_length(steps) : 0;
  step = n ? json_object_array_get_idx(steps, n - 1) : NULL;
  json_object *rec = json_object_new_object();
  json_object_object_add(rec, "id", json_object_new_string(rs->items.v[i].id));
  json_object_object_add(rec, "program_sha256", json_object_new_string(rs->items.v[i].sha));
  json_object_object_foreach(rs->items.v[i].info, ik, iv) json_object_object_add(rec, ik, json_object_get(iv));
  json_object_object_add(rec, "status", json_object_new_string(r->status ? r->status : r->error_code ? r->error_code : "?"));
  const sbc_step *ps = sbc_result_last_step(r);
  json_object_object_add(rec, "exit_code", ps && ps->has_exit_code ? json_object_new_int(ps->exit_code) : NULL);
  const char *tstatus = step ? str_of(step, "trace_status") : NULL;
  json_object_object_add(rec, "trace_status", tstatus ? json_object_new_string(tstatus) : NULL);
  if (tstatus) {
    char rel[300];
    snprintf(rel, sizeof rel, "traces/%s.jsonl", rs->items.v[i].id);
    json_object_object_add(rec, "trace", json_object_new_string(rel));
    const char *text = str_of(step, "trace");
    if (text) end_fields(text, strlen(text), rec);
    static const char *const keep[] = {"trace_sha256", "trace_truncated", "trace_bytes", "trace_check", NULL};
    for (size_t k = 0; keep[k]; k++)
      if (json_object_object_get_ex(step, keep[k], &v)) json_object_object_add(rec, keep[k], json_object_get(v));
    add_why(rec, step);
    if (json_object_object_get_ex(step, "untraced", &v)) {
      json_object *u = json_object_new_object(), *x;
      if (json_object_object_get_ex(v, "status", &x)) json_object_object_add(u, "status", json_object_get(x));
      if (json_object_object_get_ex(v, "exit_code", &x)) json_object_object_add(u, "exit_code", json_object_get(x));
      add_why(u, v);
      json_object_object_add(rec, "untraced", u);
    }
    if (write_trace(rs, i, step) < 0) {
      json_object_put(rec);
      rs->write_failed = true;
      sbr_driver_stop();
      return false;
    }
  } else {
    const char *e = sbc_result_why(r);
    json_object_object_add(rec, "error", json_object_new_string(e ? e : "the answer has no trace"));
  }
  char p[4400];
  item_path(p, sizeof p, rs->o->out, "items", rs->items.v[i].id, ".json");
  if (sbr_write_json_atomic_ext(p, rec, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) < 0) {
    fprintf(stderr, "trace-dataset: cannot write %s\n", p);
    rs->write_failed = true;
    sbr_driver_stop();
  }
  /* kept for the summary; without a trace_status it is not "done": the
   * next run tries it again */
  rs->rec[i] = rec;
  rs->ran++;
  return false;
}

static int mkdirs(const char *out) {
  char p[4400];
  const char *sub[] = {"", "/traces", "/items"};
  for (size_t k = 0; k < 3; k++) {
    snprintf(p, sizeof p, "%s%s", out, sub[k]);
    if (mkdir(p, 0755) < 0 && errno != EEXIST) {
      fprintf(stderr, "trace-dataset: cannot create %s: %s\n", p, strerror(errno));
      return -1;
    }
  }
  return 0;
}

static int load_items(const sbtd_opts *o, sbtd_items *items) {
  char err[1024];
  int rc = o->programs ? sbtd_programs_load(o->programs, items, err, sizeof err)
                       : sbtd_cruxeval_load(o->data, o->samples, o->limit, items, err, sizeof err);
  if (rc < 0) fprintf(stderr, "trace-dataset: %s; nothing ran\n", err);
  return rc;
}

/* --shard: which items are this shard's, and OUT/shard.json */
static int shard_begin(const sbtd_opts *o, run_state *rs) {
  size_t n = rs->items.n;
  uint64_t *keys = calloc(n + 1, sizeof *keys);
  const char **names = calloc(n + 1, sizeof *names);
  bool *mine = calloc(n + 1, sizeof *mine);
  for (size_t i = 0; i < n; i++) {
    names[i] = rs->items.v[i].id;
    keys[i] = sbr_shard_key(names[i], strlen(names[i]), rs->items.v[i].sha, 64);
  }
  json_object *m = sbr_shard_manifest_new("trace-dataset", &o->shard);
  if (o->programs) sbr_shard_add_file(m, "programs", o->programs);
  else sbr_shard_add_file(m, "data", o->data);
  /* the same cut on every machine: the merge reloads these items */
  json_object_object_add(m, "samples", o->samples ? json_object_new_string(o->samples) : NULL);
  json_object_object_add(m, "limit", json_object_new_int64(o->limit));
  json_object_object_add(m, "trace_limits", o->trace ? json_object_get(o->trace) : NULL);
  json_object_object_add(m, "profile", rs->d->ctx.profile ? json_object_new_string(rs->d->ctx.profile) : NULL);
  char path[4400];
  snprintf(path, sizeof path, "%s/shard.json", o->out);
  int rc = sbr_shard_finish_by_count_at(&o->shard, m, "items", keys, names, n, mine, path, "trace-dataset");
  for (size_t i = 0; i < n; i++) rs->other[i] = !mine[i];
  free(keys), free(names), free(mine);
  return rc;
}

/* OUT/index.jsonl: the records of this run's items, in input order */
static json_object *write_index(const run_state *rs) {
  json_object *all = json_object_new_array();
  char p[4400];
  snprintf(p, sizeof p, "%s/index.jsonl", rs->o->out);
  sbu_atomic a;
  FILE *f = sbu_atomic_open(&a, p, 0644) == 0 ? a.f : NULL;
  for (size_t i = 0; i < rs->items.n; i++) {
    if (rs->other[i] || !rs->rec[i]) continue;
    json_object_array_add(all, json_object_get(rs->rec[i]));
    if (f) fprintf(f, "%s\n", json_object_to_json_string_ext(rs->rec[i], JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
  }
  if (!f || sbu_atomic_commit(&a) < 0) fprintf(stderr, "trace-dataset: cannot write %s\n", p);
  return all;
}

int sbtd_run(const sbc_ctx *ctx, const sbtd_opts *o) {
  sbr_driver d;
  sbr_driver_init(&d, "trace-dataset", ctx, o->jobs);
  d.cache_dir = o->cache_dir;
  run_state rs = {.o = o, .d = &d, .failure_of = o->programs ? sbr_failure_of_request : sbr_failure_of};
  int rc = 0;
  /* a file that cannot be read is exit 2, as for every command; bad content 1 */
  if (load_items(o, &rs.items) < 0) return sbr_driver_finish(&d, o->programs && access(o->programs, R_OK) != 0 ? 2 : 1);
  rs.rec = calloc(rs.items.n + 1, sizeof *rs.rec);
  rs.other = calloc(rs.items.n + 1, sizeof *rs.other);
  sbr_pump pump = {.total = rs.items.n, .make = make_request, .done = on_response, .ctx = &rs, .failure_of = rs.failure_of};
  if (o->dump) {
    rc = sbr_driver_dump(&d, &pump, o->dump);
    goto out;
  }
  if (mkdirs(o->out) < 0 || (o->shard.count && shard_begin(o, &rs) < 0)) {
    rc = 2;
    goto out;
  }
  size_t mine = 0, done = load_done(&rs);
  for (size_t i = 0; i < rs.items.n; i++) mine += !rs.other[i];
  if (done) fprintf(stderr, "trace-dataset: resuming: %zu of %zu items already traced in %s\n", done, mine, o->out);
  else fprintf(stderr, "trace-dataset: %zu items to trace into %s\n", mine, o->out);
  time_t t0 = time(NULL);
  if (done < mine && !(rc = sbr_driver_connect(&d))) rc = sbr_driver_pump(&d, &pump);
  if (rs.write_failed) rc = 2; /* said where it happened; not an interrupt */
  if (rc && rc != 130) goto out;
  fprintf(stderr, "trace-dataset: %zu items ran in %llds\n", rs.ran, (long long)(time(NULL) - t0));
  json_object *all = write_index(&rs);
  int s = sbtd_summarize(o->out, all, mine - json_object_array_length(all), "trace-dataset");
  json_object_put(all);
  if (!rc) rc = s;
  if (rc == 130) fprintf(stderr, "trace-dataset: interrupted: run the same command again to resume\n");
out:
  for (size_t i = 0; i < rs.items.n; i++) json_object_put(rs.rec[i]);
  free(rs.rec);
  free(rs.other);
  sbtd_items_free(&rs.items);
  return sbr_driver_finish(&d, rc);
}
