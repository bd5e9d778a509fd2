/* Loading SURGE references and predictions (JSON Lines or SURGE's own
 * layout), and scoring every prediction. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol.h"
#include "cleanup.h"
#include "eval_run.h"
#include "eval_unicode.h"

#define MAX_DETAILS 5 /* individual problems printed before only counting */

static size_t hash_str(const char *s) {
  size_t h = 1469598103934665603u;
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

static const char *item_question(json_object *item) {
  json_object *q;
  return json_object_object_get_ex(item, "question", &q) && json_object_is_type(q, json_type_string)
             ? json_object_get_string(q)
             : NULL;
}

/* Keys SURGE's files carry besides model answers, even when the references
 * given lack some of them. */
static const char *const known_keys[] = {"custom_category", "custom_categoey", "custom_features", "question",
                                         "gt", "sys_0shot", "sys_3shot", "sys_cot", "input"};

static int is_own_key(const sbe_refs *r, const char *k) {
  for (size_t i = 0; i < r->nown; i++)
    if (!strcmp(r->own_keys[i], k)) return 1;
  return 0;
}

static void add_own_key(sbe_refs *r, const char *k) {
  if (is_own_key(r, k)) return;
  r->own_keys = sbe_xrealloc(r->own_keys, (r->nown + 1) * sizeof *r->own_keys);
  r->own_keys[r->nown++] = sbe_xstrndup(k, strlen(k));
}

int sbe_refs_load_file(sbe_refs *r, const char *path) {
  if (r->nown == 0)
    for (size_t i = 0; i < sizeof known_keys / sizeof *known_keys; i++) add_own_key(r, known_keys[i]);
  char unread[600] = "not a list";
  json_object *root = sbp_json_file(path, unread, sizeof unread);
  if (!root || !json_object_is_type(root, json_type_array)) {
    fprintf(stderr, "eval: %s: %s (SURGE's data is a JSON list of items)\n", path, unread);
    json_object_put(root);
    return -1;
  }
  r->files = sbe_xrealloc(r->files, (r->nfiles + 1) * sizeof *r->files);
  r->files[r->nfiles++] = root;
  size_t n = json_object_array_length(root), skipped = 0;
  bool regen_output = sbe_regen_output(root); /* then an item without "exec" never ran here */
  for (size_t i = 0; i < n; i++) {
    json_object *item = json_object_array_get_idx(root, i);
    sbe_category c = sbe_item_category(item);
    if (c == SBE_CAT_UNKNOWN) {
      skipped++;
      continue;
    }
    json_object_object_foreach(item, key, val) {
      (void)val;
      add_own_key(r, key);
    }
    r->items[c] = sbe_xrealloc(r->items[c], (r->count[c] + 1) * sizeof *r->items[c]);
    char why[300];
    const char *nr = sbe_not_regenerated(item, regen_output, why, sizeof why);
    r->items[c][r->count[c]++] = (sbe_ref){item, hash_str(item_question(item)), nr ? sbe_xstrndup(nr, strlen(nr)) : NULL, 0};
  }
  if (skipped) fprintf(stderr, "eval: %s: %zu item(s) without a known category skipped\n", path, skipped);
  r->skipped += skipped;
  return 0;
}

int sbe_refs_load_dir(sbe_refs *r, const char *dir) {
  int found = 0;
  for (int c = 1; c < SBE_CAT_COUNT; c++) {
    size_t n = strlen(dir) + 16;
    SBU_AUTOFREE char *path = sbe_xmalloc(n);
    snprintf(path, n, "%s/%s.json", dir, sbe_category_subset((sbe_category)c));
    if (access(path, R_OK) == 0) {
      if (sbe_refs_load_file(r, path) != 0) return -1;
      found++;
    }
  }
  if (!found) fprintf(stderr, "eval: %s: no ml.json ... fl.json found\n", dir);
  return found ? 0 : -1;
}

void sbe_refs_free(sbe_refs *r) {
  for (size_t i = 0; i < r->nfiles; i++) json_object_put(r->files[i]);
  free(r->files);
  for (int c = 0; c < SBE_CAT_COUNT; c++) {
    for (size_t i = 0; i < r->count[c]; i++) free(r->items[c][i].not_regenerated);
    free(r->items[c]);
  }
  for (size_t i = 0; i < r->nown; i++) free(r->own_keys[i]);
  free(r->own_keys);
  memset(r, 0, sizeof *r);
}

static sbe_model *model_get(sbe_run *run, const char *name) {
  for (size_t i = 0; i < run->nmodels; i++)
    if (!strcmp(run->models[i].name, name)) return &run->models[i];
  run->models = sbe_xrealloc(run->models, (run->nmodels + 1) * sizeof *run->models);
  sbe_model *m = &run->models[run->nmodels++];
  memset(m, 0, sizeof *m);
  m->name = sbe_xstrndup(name, strlen(name));
  for (int c = 1; c < SBE_CAT_COUNT; c++) {
    size_t n = run->refs.count[c] ? run->refs.count[c] : 1;
    m->score[c] = calloc(n, sizeof *m->score[c]);
    m->present[c] = calloc(n, 1);
    if (!m->score[c] || !m->present[c]) abort();
  }
  return m;
}

static void record(sbe_run *run, const char *model, sbe_category c, size_t index, const char *text) {
  if (run->exclude[c] && run->exclude[c][index]) return; /* the caller counts these */
  sbe_ref *ref = &run->refs.items[c][index];
  if (ref->not_regenerated) { /* a regen output's item still holding the published gt */
    sbe_count_excluded(run, ref);
    return;
  }
  sbe_model *m = model_get(run, model);
  if (m->present[c][index]) {
    run->stats.duplicates++;
    return;
  }
  sbe_score_info info;
  m->score[c][index] = sbe_score_item_ex(run->refs.items[c][index].item, text, run->options, &info);
  m->present[c][index] = 1;
  m->nscored++;
  const int f[7] = {info.no_answer,    info.parse_failure, info.length_mismatch, info.nan_constant,
                    info.nan_other,    info.surge_raised,  info.unknown_task};
  for (int k = 0; k < 7; k++) m->flags[k] += (size_t)f[k];
}

const char *const sbe_flag_names[7] = {"no_answer", "parse_failure", "length_mismatch", "nan_constant",
                                       "nan_other", "surge_raised",  "unknown_task"};

/* Reference indices in subset c whose question equals q. */
static size_t find_question(const sbe_run *run, sbe_category c, const char *q, size_t *first, size_t *out,
                            size_t max_out) {
  size_t h = hash_str(q), n = 0;
  for (size_t i = 0; i < run->refs.count[c]; i++) {
    const sbe_ref *r = &run->refs.items[c][i];
    const char *rq;
    if (r->question_hash != h || !(rq = item_question(r->item)) || strcmp(rq, q) != 0) continue;
    if (n == 0) *first = i;
    if (out && n < max_out) out[n] = i;
    n++;
  }
  return n;
}

/* unit is "line" (JSON Lines) or "item" (SURGE's layout). */
static void detail(size_t *shown, const char *path, const char *unit, size_t at, const char *what) {
  if ((*shown)++ >= MAX_DETAILS) return;
  fprintf(stderr, "eval: %s: %s %zu: %s\n", path, unit, at, what);
}

/* One JSON Lines record. */
static void jsonl_record(sbe_run *run, json_object *o, const char *path, size_t line, size_t *shown) {
  json_object *v;
  if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "prediction", &v) ||
      !(v == NULL || json_object_is_type(v, json_type_string))) {
    run->stats.malformed++;
    detail(shown, path, "line", line, "not an object with a \"prediction\" string");
    return;
  }
  const char *text = v ? json_object_get_string(v) : NULL;
  json_object *s, *idx, *q, *mo;
  sbe_category c = json_object_object_get_ex(o, "subset", &s) && json_object_is_type(s, json_type_string)
                       ? sbe_subset_category(json_object_get_string(s))
                       : SBE_CAT_UNKNOWN;
  if (c != SBE_CAT_UNKNOWN && run->refs.count[c] == 0) { /* one line for all of them (sbe_report_missing) */
    run->stats.subset_absent++;
    run->stats.subset_absent_by[c]++;
    return;
  }
  if (c == SBE_CAT_UNKNOWN) {
    run->stats.unknown_subset++;
    detail(shown, path, "line", line, "unknown or missing \"subset\"");
    return;
  }
  size_t index;
  if (json_object_object_get_ex(o, "index", &idx) && json_object_is_type(idx, json_type_int)) {
    int64_t i = json_object_get_int64(idx);
    if (i < 0 || (uint64_t)i >= run->refs.count[c]) {
      run->stats.bad_index++;
      detail(shown, path, "line", line, "\"index\" outside the references");
      return;
    }
    index = (size_t)i;
  } else if (json_object_object_get_ex(o, "question", &q) && json_object_is_type(q, json_type_string)) {
    size_t n = find_question(run, c, json_object_get_string(q), &index, NULL, 0);
    if (n != 1) {
      if (n == 0) run->stats.question_not_found++;
      else run->stats.question_ambiguous++;
      detail(shown, path, "line", line,
             n == 0 ? "no reference has this question" : "several references share this question; give \"index\"");
      return;
    }
  } else {
    run->stats.malformed++;
    detail(shown, path, "line", line, "needs an integer \"index\" or a \"question\" string");
    return;
  }
  const char *model = json_object_object_get_ex(o, "model", &mo) && json_object_is_type(mo, json_type_string)
                          ? json_object_get_string(mo)
                          : "default";
  record(run, model, c, index, text);
}

static int load_jsonl(sbe_run *run, const char *path, char *buf, size_t len) {
  size_t line = 0, shown = 0;
  json_tokener *tok = json_tokener_new();
  for (char *p = buf, *end = buf + len; p < end;) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    char *stop = nl ? nl : end;
    line++;
    char *b = p;
    while (b < stop && isspace((unsigned char)*b)) b++;
    if (b < stop) {
      json_tokener_reset(tok);
      json_object *o = json_tokener_parse_ex(tok, b, (int)(stop - b));
      const char *rest = b + json_tokener_get_parse_end(tok);
      while (o && rest < stop && isspace((unsigned char)*rest)) rest++;
      if (!o || json_tokener_get_error(tok) != json_tokener_success || rest != stop) {
        run->stats.malformed++;
        detail(&shown, path, "line", line, "invalid JSON");
      } else {
        jsonl_record(run, o, path, line, &shown);
      }
      json_object_put(o);
    }
    p = stop + 1;
  }
  json_tokener_free(tok);
  return 0;
}

/* Which reference item a prediction item in SURGE's layout stands for: same
 * question, then same gt, then equal custom_features, first not yet claimed. */
static int surge_match(sbe_run *run, sbe_category c, json_object *item, unsigned char *claimed, size_t *index) {
  const char *q = item_question(item);
  if (!q) return -1;
  size_t first, cand[256];
  size_t n = find_question(run, c, q, &first, cand, 256);
  if (n == 0) return -1;
  if (n > 256) n = 256;
  json_object *gt = NULL, *cf = NULL;
  json_object_object_get_ex(item, "gt", &gt);
  json_object_object_get_ex(item, "custom_features", &cf);
  size_t best = (size_t)-1;
  int best_rank = -1;
  for (size_t k = 0; k < n; k++) {
    json_object *ri = run->refs.items[c][cand[k]].item, *rgt = NULL, *rcf = NULL;
    json_object_object_get_ex(ri, "gt", &rgt);
    json_object_object_get_ex(ri, "custom_features", &rcf);
    int rank = (!claimed[cand[k]]) * 4 + json_object_equal(gt, rgt) * 2 + json_object_equal(cf, rcf);
    if (rank > best_rank) best_rank = rank, best = cand[k];
  }
  claimed[best] = 1;
  *index = best;
  return 0;
}

static int load_surge(sbe_run *run, const char *path, const char *buf, size_t len) {
  json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
  SBU_AUTOPUT json_object *root = json_tokener_parse_ex(tok, buf, (int)len);
  int ok = root && json_tokener_get_error(tok) == json_tokener_success && json_object_is_type(root, json_type_array);
  json_tokener_free(tok);
  if (!ok) {
    fprintf(stderr, "eval: %s: not a JSON list\n", path);
    return -1;
  }
  unsigned char *claimed[SBE_CAT_COUNT];
  for (int c = 0; c < SBE_CAT_COUNT; c++) claimed[c] = calloc(run->refs.count[c] + 1, 1);
  size_t shown = 0, n = json_object_array_length(root);
  for (size_t i = 0; i < n; i++) {
    json_object *item = json_object_array_get_idx(root, i);
    if (!json_object_is_type(item, json_type_object)) {
      run->stats.malformed++;
      detail(&shown, path, "item", i, "not an object");
      continue;
    }
    sbe_category c = sbe_item_category(item);
    size_t index = 0;
    int matched = c != SBE_CAT_UNKNOWN && surge_match(run, c, item, claimed[c], &index) == 0;
    json_object_object_foreach(item, key, val) {
      if (is_own_key(&run->refs, key)) continue;
      if (val && !json_object_is_type(val, json_type_string)) {
        run->stats.non_text_keys++; /* e.g. SURGE's "<model>eval" score keys */
        continue;
      }
      if (c == SBE_CAT_UNKNOWN) {
        run->stats.unknown_subset++;
        detail(&shown, path, "item", i, "no known category");
      } else if (!matched) {
        run->stats.question_not_found++;
        detail(&shown, path, "item", i, "question not among the references");
      } else {
        record(run, key, c, index, val ? json_object_get_string(val) : NULL);
      }
    }
  }
  for (int c = 0; c < SBE_CAT_COUNT; c++) free(claimed[c]);
  return 0;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "eval: %s: %s\n", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = sbe_xmalloc(cap);
  for (;;) {
    if (n == cap) buf = sbe_xrealloc(buf, cap *= 2);
    size_t got = fread(buf + n, 1, cap - n, f);
    if (!got) break;
    n += got;
  }
  int err = ferror(f);
  fclose(f);
  if (err) {
    fprintf(stderr, "eval: %s: read error\n", path);
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

int sbe_run_predictions(sbe_run *run, const char *path) {
  size_t len;
  char *buf = slurp(path, &len);
  if (!buf) return -1;
  size_t i = 0;
  while (i < len && isspace((unsigned char)buf[i])) i++;
  int r = i < len && buf[i] == '[' ? load_surge(run, path, buf, len) : load_jsonl(run, path, buf, len);
  free(buf);
  return r;
}

void sbe_run_free(sbe_run *run) {
  for (size_t i = 0; i < run->nmodels; i++) {
    sbe_model *m = &run->models[i];
    free(m->name);
    for (int c = 0; c < SBE_CAT_COUNT; c++) {
      free(m->score[c]);
      free(m->present[c]);
    }
  }
  free(run->models);
  if (run->excluded) json_object_put(run->excluded);
  sbe_refs_free(&run->refs);
  memset(run, 0, sizeof *run);
}
