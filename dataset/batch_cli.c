/* surgebox batch: run a JSON Lines file of exec requests, write the answers
 * as JSON Lines, resumable.
 *
 *   surgebox batch IN.jsonl [--out OUT.jsonl] [--concurrency N] [--order input|completion]
 *                  [--retry-failed] [--brief] [--fields LIST] [--shard I/N|auto [--shards N]]
 *                  (and the daemon's --socket, --no-autostart, --profile)
 *
 * Ids: a request without "id" gets its line number (1-based) as a JSON
 * integer; ids are compared by their JSON text, so "3" and 3 differ. Every
 * answer carries "line" (the request's line in IN). A line that cannot be
 * run (not JSON, not an object, not an exec, a bad or repeated id) gets an
 * error answer with "id": null, keyed by its line on resume. Blank lines are
 * not items. Resume: an item whose key already has an answer in OUT is not
 * run again (--retry-failed: unless that answer's status is not "ok"); a
 * partial last line of OUT (an interrupted write) is dropped. A failure of
 * surgebox (an internal_error, a toolchain_missing, the daemon's own error)
 * is that line's answer and is counted apart; any makes the exit status 2. */
#include "atomic_write.h"
#include "cleanup.h"
#include "batch.h"
#include "cliopt.h"
#include "clock.h"
#include "driver.h"
#include "json_line.h"
#include "lines.h"
#include "protocol.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
  size_t line;       /* 1-based line in IN */
  json_object *req;  /* the request (owned), NULL when the line cannot run */
  json_object *id;   /* the id answered with (owned), NULL for an error line */
  char *key;         /* resume key: the id's JSON text, or "line:N" */
  char *answer;      /* the answer line (owned) once known; NULL once written
                      * under --order completion (nothing reads it again) */
  bool kept;         /* answered by an earlier run: already in OUT */
  bool emitted;      /* written (or in OUT already): answered */
} item;

static bool item_answered(const item *it) { return it->answer || it->emitted; }

typedef struct {
  item *items;
  size_t n;
  size_t *run;       /* pump index -> item index */
  size_t n_run;
  FILE *out;
  sbr_batch_out lines; /* what goes to out, many lines per write */
  bool by_input;
  size_t next_emit;  /* --order input: first item not yet written */
  bool write_failed;
  /* summary */
  char **status_names;
  size_t *status_counts, n_status;
  double cpu, wall;
  const sbr_failures *failures; /* the driver's: lines a failure of surgebox answered (pump.c counts them) */
  const sbr_batch_shape *shape; /* --brief / --fields */
  bool warm;                    /* --warm: "warm": true where a request does not say */
  bool trim;                    /* answers parsed without what sbc_result never reads (answer_trim.h, pump.h) */
  sbr_batch_cases cases;        /* lines with test cases: their verdicts counted */
} batch;


/* ---- keys: a small open-addressing table from key to item index ---- */
typedef struct {
  char **keys;
  size_t *vals, cap;
} keytab;

static size_t hash(const char *s) {
  size_t h = 1469598103934665603u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

static void keytab_init(keytab *t, size_t n) {
  t->cap = 16;
  while (t->cap < n * 2 + 16) t->cap *= 2;
  t->keys = calloc(t->cap, sizeof *t->keys);
  t->vals = calloc(t->cap, sizeof *t->vals);
}

/* the slot of key: its own, or the empty one where it would go */
static size_t keytab_slot(const keytab *t, const char *key) {
  size_t i = hash(key) & (t->cap - 1);
  while (t->keys[i] && strcmp(t->keys[i], key)) i = (i + 1) & (t->cap - 1);
  return i;
}

/* ---- reading IN ---- */
static char *line_key(size_t line) {
  char buf[40];
  snprintf(buf, sizeof buf, "line:%zu", line);
  return strdup(buf);
}

/* The line's request, or NULL with why. */
static json_object *parse_line(const char *s, size_t n, char *why, size_t why_len, const char **code) {
  *code = "bad_json"; /* the daemon refuses non-UTF-8 with an id-less bad_json: say which line here */
  SBU_AUTOPUT json_object *o = sbp_json_line(s, n, why, why_len);
  if (!o) return NULL;
  *code = "bad_request";
  if (!json_object_is_type(o, json_type_object)) {
    snprintf(why, why_len, "not a JSON object");
    return NULL;
  }
  json_object *type = json_object_object_get(o, "type");
  if (type && !(json_object_is_type(type, json_type_string) && !strcmp(json_object_get_string(type), "exec"))) {
    snprintf(why, why_len, "batch runs exec requests only (\"type\" must be \"exec\" or absent)");
    return NULL;
  }
  json_object *id = json_object_object_get(o, "id");
  size_t idlen = json_object_is_type(id, json_type_string) ? (size_t)json_object_get_string_len(id) : 0;
  int64_t idnum = json_object_is_type(id, json_type_int) ? json_object_get_int64(id) : 0;
  const int64_t max_int = ((int64_t)1 << 53) - 1; /* PROTOCOL.md's id range */
  if (json_object_object_get_ex(o, "id", NULL) &&
      !((idlen >= 1 && idlen <= 256) || (json_object_is_type(id, json_type_int) && idnum >= -max_int && idnum <= max_int))) {
    snprintf(why, why_len, "\"id\" must be a string of 1-256 bytes or an integer of at most 2^53-1 in magnitude");
    return NULL;
  }
  return sbu_take_ptr(&o);
}

static char *error_answer(size_t line, const char *code, const char *why) {
  json_object *a = json_object_new_object(), *e = json_object_new_object();
  json_object_object_add(a, "id", NULL);
  json_object_object_add(a, "line", json_object_new_int64((int64_t)line));
  json_object_object_add(a, "type", json_object_new_string("error"));
  json_object_object_add(e, "code", json_object_new_string(code));
  char msg[400];
  snprintf(msg, sizeof msg, "line %zu: %s", line, why);
  json_object_object_add(e, "message", json_object_new_string(msg));
  json_object_object_add(a, "error", e);
  char *s = strdup(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(a);
  return s;
}

static int read_input(const char *path, batch *b, keytab *keys, const char *profile) {
  sbu_lines r;
  char err[PATH_MAX + 100];
  if (sbu_lines_open(&r, path, err, sizeof err) < 0) {
    fprintf(stderr, "batch: %s\n", err);
    return -1;
  }
  size_t cap = 64, lineno = 0;
  b->items = calloc(cap, sizeof *b->items);
  while (sbu_lines_next(&r)) {
    lineno = r.lineno;
    if (b->n == cap) b->items = realloc(b->items, (cap *= 2) * sizeof *b->items);
    item *it = &b->items[b->n++];
    memset(it, 0, sizeof *it);
    it->line = lineno;
    char why[300];
    const char *code;
    it->req = parse_line(r.line, r.len, why, sizeof why, &code);
    if (it->req) {
      json_object *id = json_object_object_get(it->req, "id");
      it->id = id ? json_object_get(id) : json_object_new_int64((int64_t)lineno);
      json_object_object_del(it->req, "id"); /* the pump numbers the requests it sends */
      json_object_object_add(it->req, "type", json_object_new_string("exec"));
      if (profile && !json_object_object_get_ex(it->req, "profile", NULL))
        json_object_object_add(it->req, "profile", json_object_new_string(profile));
      it->key = strdup(json_object_to_json_string_ext(it->id, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    }
    if (it->req) {
      if (b->n > keys->cap / 2) { /* grow: rehash */
        keytab old = *keys;
        keytab_init(keys, b->n * 2);
        for (size_t i = 0; i < old.cap; i++)
          if (old.keys[i]) {
            size_t s = keytab_slot(keys, old.keys[i]);
            keys->keys[s] = old.keys[i];
            keys->vals[s] = old.vals[i];
          }
        free(old.keys);
        free(old.vals);
      }
      size_t s = keytab_slot(keys, it->key);
      if (keys->keys[s]) {
        snprintf(why, sizeof why, "id %.200s repeats the one on line %zu", it->key, b->items[keys->vals[s]].line);
        code = "bad_request";
        json_object_put(it->req);
        json_object_put(it->id);
        free(it->key);
        it->req = it->id = NULL;
      } else {
        keys->keys[s] = it->key;
        keys->vals[s] = b->n - 1;
      }
    }
    if (!it->req) {
      it->key = line_key(lineno);
      it->answer = error_answer(lineno, code, why);
      size_t s = keytab_slot(keys, it->key); /* "line:N" never collides with JSON text */
      keys->keys[s] = it->key;
      keys->vals[s] = b->n - 1;
    }
  }
  bool bad = ferror(r.f);
  sbu_lines_close(&r);
  if (bad) fprintf(stderr, "batch: error reading %s\n", path);
  return bad ? -1 : 0;
}

/* ---- OUT: what an earlier run answered ---- */
typedef struct {
  char **lines; /* answers of keys not in IN: kept as they were */
  size_t n, cap;
} strlist;

static void strlist_add(strlist *l, char *s) {
  if (l->n == l->cap) l->lines = realloc(l->lines, (l->cap = l->cap ? l->cap * 2 : 16) * sizeof *l->lines);
  l->lines[l->n++] = s;
}

static size_t load_previous(const char *path, batch *b, const keytab *keys, bool retry_failed, strlist *foreign) {
  SBU_AUTOFCLOSE FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t kept = 0, bufcap = 0;
  SBU_AUTOFREE char *buf = NULL;
  ssize_t len;
  while ((len = getline(&buf, &bufcap, f)) >= 0) {
    if (len == 0 || buf[len - 1] != '\n') break; /* a partial last line: an interrupted write */
    buf[--len] = '\0';
    SBU_AUTOPUT json_object *a = memchr(buf, '\0', (size_t)len) ? NULL : json_tokener_parse(buf);
    if (!a || !json_object_is_type(a, json_type_object)) continue;
    json_object *id = json_object_object_get(a, "id");
    SBU_AUTOFREE char *key = id ? strdup(json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE))
                   : line_key((size_t)json_object_get_int64(json_object_object_get(a, "line")));
    sbc_result r; /* the earlier answer, read as the daemon's answers are */
    char err[256];
    bool ok = sbc_result_parse(a, &r, err, sizeof err) == 0 && !r.is_error && !strcmp(r.status, SBP_STATUS_OK);
    sbc_result_free(&r);
    size_t s = keytab_slot(keys, key);
    if (!keys->keys[s]) {
      strlist_add(foreign, strdup(buf));
      continue;
    }
    item *it = &b->items[keys->vals[s]];
    if (it->kept || (retry_failed && !ok)) continue;
    free(it->answer);
    it->answer = strdup(buf);
    it->kept = it->emitted = true;
    kept++;
  }
  return kept;
}

/* OUT rewritten as: every known answer in input order, then the foreign ones. */
static int rewrite_out(const char *path, const batch *b, const strlist *foreign, bool only_kept) {
  sbu_atomic a;
  if (sbu_atomic_open(&a, path, 0666) < 0) return -1;
  FILE *f = a.f;
  for (size_t i = 0; i < b->n; i++)
    if (b->items[i].answer && (b->items[i].kept || (!only_kept && b->items[i].emitted)))
      fprintf(f, "%s\n", b->items[i].answer);
  for (size_t i = 0; i < foreign->n; i++) fprintf(f, "%s\n", foreign->lines[i]);
  return sbu_atomic_commit(&a);
}

/* ---- writing answers ---- */
static void write_failed(batch *b) {
  if (!b->write_failed) fprintf(stderr, "batch: cannot write an answer: %s\n", strerror(errno));
  b->write_failed = true;
  sbr_driver_stop(); /* nothing more can be saved */
}

/* the line of parts (n of them) to OUT */
static void write_parts(batch *b, const char *const *parts, const size_t *lens, size_t n) {
  if (b->write_failed) return;
  if (sbr_batch_out_line(&b->lines, parts, lens, n) < 0) write_failed(b);
}

static void write_one(batch *b, item *it) {
  if (it->emitted) return;
  it->emitted = true;
  const char *parts[1] = {it->answer};
  size_t lens[1] = {strlen(it->answer)};
  write_parts(b, parts, lens, 1);
}

/* the pump found no answer coming, and at the end: what is held is written */
static void flush_out(void *ctx) {
  batch *b = ctx;
  if (!b->write_failed && sbr_batch_out_flush(&b->lines) < 0) write_failed(b);
}

static void emit(batch *b, item *it) {
  if (!b->by_input) {
    write_one(b, it);
    return;
  }
  while (b->next_emit < b->n && (b->items[b->next_emit].emitted || b->items[b->next_emit].answer))
    write_one(b, &b->items[b->next_emit++]);
}

static void count_status(batch *b, const char *st) {
  for (size_t i = 0; i < b->n_status; i++)
    if (!strcmp(b->status_names[i], st)) {
      b->status_counts[i]++;
      return;
    }
  b->status_names = realloc(b->status_names, (b->n_status + 1) * sizeof *b->status_names);
  b->status_counts = realloc(b->status_counts, (b->n_status + 1) * sizeof *b->status_counts);
  b->status_names[b->n_status] = strdup(st);
  b->status_counts[b->n_status++] = 1;
}

/* ---- the run, as callbacks of sbr_pump ---- */
static json_object *make_request(size_t i, void *ctx) {
  batch *b = ctx;
  json_object *req = b->items[b->run[i]].req;
  if (b->warm && !json_object_object_get_ex(req, "warm", NULL)) json_object_object_add(req, "warm", json_object_new_boolean(true));
  return json_object_get(req); /* the pump adds its own "id" */
}

/* A daemon's error answer names the line it refused, as batch's own do:
 * "line 7: steps[0].argv must not be empty" (the code unchanged). */
static void name_the_line(json_object *resp, size_t line) {
  json_object *e, *m;
  if (!json_object_object_get_ex(resp, "error", &e) || !json_object_is_type(e, json_type_object) ||
      !json_object_object_get_ex(e, "message", &m) || !json_object_is_type(m, json_type_string))
    return;
  char *msg = NULL;
  if (asprintf(&msg, "line %zu: %s", line, json_object_get_string(m)) < 0) return;
  json_object_object_add(e, "message", json_object_new_string(msg));
  free(msg);
}

/* The line resp prints as, with the request's own id and ,"line":N added,
 * taken from the bytes the daemon sent instead of printed again: they are
 * json-c's print of the same object (the daemon's sbp_encode_line, the same
 * flags), so only the id's value and the end differ. parts[4]: the pieces;
 * false when line is not {"id":"<the pump's id>",...} (then resp is printed). */
static bool splice(const item *it, const sbc_result *r, const char *line, size_t len, char *tail, size_t tail_cap,
                   const char *parts[4], size_t lens[4]) {
  size_t idlen = r->id ? strlen(r->id) : 0;
  if (!line || !idlen || len < idlen + 10 || line[len - 1] != '}' || memcmp(line, "{\"id\":\"", 7) ||
      memcmp(line + 7, r->id, idlen) || line[7 + idlen] != '"' || line[8 + idlen] != ',')
    return false;
  int n = snprintf(tail, tail_cap, ",\"line\":%zu}", it->line);
  if (n < 0 || (size_t)n >= tail_cap) return false;
  parts[0] = "{\"id\":", lens[0] = 6;
  parts[1] = it->key, lens[1] = strlen(it->key); /* the id's JSON text, as json-c prints it */
  parts[2] = line + 8 + idlen, lens[2] = len - 9 - idlen; /* from the comma after the id to before the last } */
  parts[3] = tail, lens[3] = (size_t)n;
  return true;
}

/* r: the statistics; resp: the line written, the daemon's answer verbatim
 * (with the request's own id and its line; an error's message names the line);
 * line: its bytes as received (NULL: not at hand, resp is printed) */
static bool has_cases(json_object *resp) { /* sbr_batch_cases_note would add verdicts */
  json_object *steps;
  if (json_object_object_get_ex(resp, "cases_not_run", NULL)) return true;
  if (json_object_object_get_ex(resp, "steps", &steps) && json_object_is_type(steps, json_type_array))
    for (size_t k = 0; k < json_object_array_length(steps); k++)
      if (json_object_object_get_ex(json_object_array_get_idx(steps, k), "cases", NULL)) return true;
  return false;
}

static json_object *parse_whole(const char *line, size_t len) {
  json_tokener *t = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
  json_object *o = t ? json_tokener_parse_ex(t, line, (int)len) : NULL;
  if (t) json_tokener_free(t);
  return o;
}

static bool on_response(size_t i, const sbc_result *r, json_object *resp, const char *line, size_t len, void *ctx) {
  batch *b = ctx;
  item *it = &b->items[b->run[i]];
  const char *parts[4];
  size_t lens[4];
  char tail[48];
  /* nothing to change but id and line (no message renamed, no verdicts added, no field dropped): the bytes received */
  bool as_received = !r->is_error && !b->shape->brief && !b->shape->fields &&
                     !json_object_object_get_ex(resp, "line", NULL) && !has_cases(resp) &&
                     splice(it, r, line, len, tail, sizeof tail, parts, lens);
  json_object *whole = NULL; /* to be printed, an answer parsed trimmed (b->trim) is parsed whole */
  if (!as_received && b->trim && line && (whole = parse_whole(line, len))) resp = whole;
  if (!as_received) {
    json_object_object_add(resp, "id", json_object_get(it->id));
    json_object_object_add(resp, "line", json_object_new_int64((int64_t)it->line));
    if (r->is_error) name_the_line(resp, it->line);
  }
  char status[80];
  if (r->is_error) snprintf(status, sizeof status, "error:%s", r->error_code ? r->error_code : "?");
  else snprintf(status, sizeof status, "%s", r->status);
  count_status(b, status);
  for (size_t k = 0; k < r->n_steps; k++) { /* a figure not sent counts 0 */
    if (r->steps[k].cpu_time_s > 0) b->cpu += r->steps[k].cpu_time_s;
    if (r->steps[k].wall_time_s > 0) b->wall += r->steps[k].wall_time_s;
  }
  if (as_received && !b->by_input) { /* written now, kept nowhere else */
    it->emitted = true;
    write_parts(b, parts, lens, 4);
    return strcmp(status, "ok") != 0;
  }
  if (as_received) {
    size_t total = lens[0] + lens[1] + lens[2] + lens[3];
    char *s = malloc(total + 1);
    if (s) {
      for (size_t k = 0, at = 0; k < 4; at += lens[k], k++) memcpy(s + at, parts[k], lens[k]);
      s[total] = '\0';
    }
    it->answer = s;
  } else {
    if (!r->is_error) sbr_batch_cases_note(&b->cases, resp);
    sbr_batch_shape_apply(b->shape, resp);
    it->answer = strdup(json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
  }
  json_object_put(whole);
  emit(b, it);
  return strcmp(status, "ok") != 0;
}

static void batch_free(batch *b, keytab *keys, strlist *foreign) {
  for (size_t i = 0; i < b->n; i++) {
    json_object_put(b->items[i].req);
    json_object_put(b->items[i].id);
    free(b->items[i].key); /* the table's keys are these */
    free(b->items[i].answer);
  }
  free(b->items);
  free(b->run);
  for (size_t i = 0; i < b->n_status; i++) free(b->status_names[i]);
  free(b->status_names);
  free(b->status_counts);
  sbr_batch_cases_free(&b->cases);
  sbr_batch_out_free(&b->lines);
  free(keys->keys);
  free(keys->vals);
  for (size_t i = 0; i < foreign->n; i++) free(foreign->lines[i]);
  free(foreign->lines);
}

/* --shard: only this shard's items stay (batch_shard.c), the table rebuilt */
static int shard_filter(const sbr_shard *sh, const char *in, const char *out, batch *b, keytab *keys) {
  const char **k = malloc((b->n + 1) * sizeof *k);
  bool *mine = calloc(b->n + 1, sizeof *mine);
  for (size_t i = 0; i < b->n; i++) k[i] = b->items[i].key;
  int rc = sbr_batch_shard_plan(sh, in, out, k, b->n, mine);
  size_t w = 0;
  for (size_t i = 0; i < b->n; i++) {
    if (mine[i]) {
      b->items[w++] = b->items[i];
      continue;
    }
    json_object_put(b->items[i].req);
    json_object_put(b->items[i].id);
    free(b->items[i].key);
    free(b->items[i].answer);
  }
  b->n = w;
  free(keys->keys);
  free(keys->vals);
  keytab_init(keys, b->n);
  for (size_t i = 0; i < b->n; i++) {
    size_t s = keytab_slot(keys, b->items[i].key);
    keys->keys[s] = b->items[i].key;
    keys->vals[s] = i;
  }
  free(k);
  free(mine);
  return rc;
}

typedef struct {
  const char *in, *out;
  long concurrency;
  double interval;
  bool retry_failed, by_input, warm;
  sbr_shard shard;
  sbr_batch_shape shape;
} batch_opts_t;

/* --fields LIST, once */
static int fields(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)o;
  batch_opts_t *b = opts;
  char err[300];
  if (b->shape.fields) return sbo_usage_error(p, "--fields once, with every field in it");
  if (sbr_batch_shape_fields(&b->shape, val, err, sizeof err) < 0) return sbo_usage_error(p, "%s", err);
  return 0;
}

#define AT(F) SBO_AT(batch_opts_t, F)
static const sbo_opt batch_opts[] = {
    {"out", 0, "OUT.jsonl", "answers there (default stdout); an interrupted run resumes", SBO_STR, AT(out)},
    {"concurrency", 0, "N", "requests in flight, 1-4096 (default: the CPUs)", SBO_INT, AT(concurrency), .min = 1, .max = 4096},
    {"order", 0, "input|completion", "order of the answers (default completion)", SBO_WORD, AT(by_input),
     .words = (const char *const[]){"input", "completion"}},
    {"retry-failed", 0, NULL, "rerun requests a resumed run answered with a failure", SBO_FLAG, AT(retry_failed)},
    {"brief", 0, NULL, "steps without `enforced` and `limits` (the same on every line)", SBO_FLAG, AT(shape.brief)},
    {"fields", 0, "LIST", "only these answer fields (NAME or steps.NAME; id, line, type, status always)", SBO_CALL,
     .call = fields},
    {"warm", 0, NULL, "\"warm\": true in every request that does not say (Python from warm interpreters)", SBO_FLAG, AT(warm)},
    {"progress-interval", 0, "S", NULL, SBO_DOUBLE, AT(interval)}, /* hidden: for tests */
    {NULL, 0, NULL, NULL}};
static const sbo_cmd batch_cmd = {
    "surgebox batch", "IN.jsonl [options]",
    "Run a file of exec requests (PROTOCOL.md), one a line; a missing id is the line number (an integer).\n"
    "Answers as JSON Lines.",
    batch_opts, NULL,
    "exit: 0 every line answered, 1 bad arguments, 2 a failure (also a failure of surgebox answering any line:\n"
    "internal_error, toolchain_missing, the daemon's own error), 130 interrupted\n",
    false, sbr_shardable_groups};

/* 0 parsed; -1 after --help; else the exit status of a mistake. */
static int parse(int argc, char **argv, sbc_ctx *ctx, batch_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->concurrency = sysconf(_SC_NPROCESSORS_ONLN);
  sbr_run_opts run = {0};
  sbo_parser p;
  int rc = sbr_parse(&p, &batch_cmd, argc, argv, ctx, &run, NULL, o);
  if (rc == 0 && (p.n_pos != 1 || p.dashdash))
    rc = sbo_usage_error(&p, p.n_pos ? "one IN.jsonl, not several" : "IN.jsonl is required");
  if (rc == 0) o->in = p.pos[0];
  sbo_done(&p);
  struct stat si, so;
  if (rc == 0 && o->out && stat(o->in, &si) == 0 && stat(o->out, &so) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
    fprintf(stderr, "batch: --out %s is the input file: answers would replace the requests\n", o->out);
    rc = 1;
  }
  if (rc == 0) rc = sbr_run_shard("batch", &run, o->out != NULL, "--out (what surgebox merge reads)", &o->shard);
  return rc;
}

/* IN read (this shard's items), OUT's earlier answers kept, OUT opened: 0 or 2. */
static int prepare(const batch_opts_t *o, const char *profile, batch *b, keytab *keys, strlist *foreign, size_t *kept) {
  if (read_input(o->in, b, keys, profile) < 0) return 2;
  if (o->shard.count && shard_filter(&o->shard, o->in, o->out, b, keys) < 0) return 2;
  *kept = 0;
  if (!o->out) {
    b->out = b->lines.f = stdout;
    return 0;
  }
  *kept = load_previous(o->out, b, keys, o->retry_failed, foreign);
  /* drops a partial last line and the answers --retry-failed replaces */
  if (rewrite_out(o->out, b, foreign, true) < 0 || !(b->out = fopen(o->out, "a"))) {
    fprintf(stderr, "batch: cannot write %s: %s\n", o->out, strerror(errno));
    return 2;
  }
  b->lines.f = b->out;
  return 0;
}

/* Lines that cannot run are answered first. */
static void answer_refused(batch *b) {
  for (size_t i = 0; i < b->n; i++)
    if (!b->items[i].req && !b->items[i].kept) {
      json_object *a = json_tokener_parse(b->items[i].answer);
      char status[80];
      snprintf(status, sizeof status, "error:%s", sbp_response_error_code(a));
      json_object_put(a);
      count_status(b, status);
      emit(b, &b->items[i]);
    }
}

/* The daemon answers some errors (too_large, bad_json) with "id": null:
 * every item run but unanswered after a complete pass got one of those. */
static void answer_unmatched(batch *b) {
  for (size_t k = 0; k < b->n_run; k++) {
    item *it = &b->items[b->run[k]];
    if (item_answered(it)) continue;
    char *text = error_answer(it->line, "unmatched", "the daemon answered without an id (a line it could not read, or too large)");
    json_object *a = json_tokener_parse(text);
    free(text);
    json_object_object_add(a, "id", json_object_get(it->id));
    it->answer = strdup(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(a);
    count_status(b, "error:unmatched");
    emit(b, it);
  }
}

/* What finished is saved (also behind an unfinished one under --order
 * input), and the summary said. Returns how many items are answered. */
static size_t finish_out(const batch_opts_t *o, batch *b, const strlist *foreign, size_t kept, double t0) {
  for (size_t i = 0; i < b->n; i++)
    if (b->items[i].answer) write_one(b, &b->items[i]);
  flush_out(b);
  size_t answered = 0;
  for (size_t i = 0; i < b->n; i++) answered += item_answered(&b->items[i]);
  if (o->out) {
    if (fclose(b->out) != 0) b->write_failed = true;
    /* a resumed run under --order input: the whole file in input order */
    if (o->by_input && kept && answered == b->n && !b->write_failed && rewrite_out(o->out, b, foreign, false) < 0) {
      fprintf(stderr, "batch: cannot rewrite %s in input order: %s\n", o->out, strerror(errno));
      b->write_failed = true;
    }
  } else if (fflush(stdout) != 0) {
    b->write_failed = true;
  }
  fprintf(stderr, "batch: %zu items, %zu answered before, %zu answered now", b->n, kept, answered - kept);
  for (size_t i = 0; i < b->n_status; i++) fprintf(stderr, "%s %s %zu", i ? "," : ":", b->status_names[i], b->status_counts[i]);
  if (b->failures->count) fprintf(stderr, "; failures of surgebox (%s): %zu", SBR_FAILURE_CLASS, b->failures->count);
  fputc('\n', stderr);
  sbr_batch_cases_say(&b->cases, stderr);
  fprintf(stderr, "batch: jobs' CPU %.3fs, jobs' wall %.3fs, elapsed %.1fs\n", b->cpu, b->wall, sbu_now_s() - t0);
  if (answered < b->n)
    fprintf(stderr, "batch: %zu items not answered%s\n", b->n - answered, o->out ? ": run the same command again to resume" : "");
  return answered;
}

static int batch_run(const sbc_ctx *ctx, const batch_opts_t *o) {
  sbr_driver d;
  sbr_driver_init(&d, "batch", ctx, (int)o->concurrency);
  batch b = {.by_input = o->by_input, .failures = &d.failures, .shape = &o->shape, .warm = o->warm};
  keytab keys;
  keytab_init(&keys, 64);
  strlist foreign = {0};
  size_t kept = 0;
  int rc = prepare(o, ctx->profile, &b, &keys, &foreign, &kept);
  if (rc) goto out;
  b.run = calloc(b.n + 1, sizeof *b.run);
  for (size_t i = 0; i < b.n; i++)
    if (b.items[i].req && !b.items[i].kept) b.run[b.n_run++] = i;
  signal(SIGPIPE, SIG_IGN);
  answer_refused(&b);
  if (kept) fprintf(stderr, "batch: %zu items already answered in %s, %zu to run\n", kept, o->out, b.n_run);
  double t0 = sbu_now_s();
  /* the profile is checked before anything runs, even when nothing is left to run */
  if (b.n_run || ctx->profile) rc = sbr_driver_connect(&d);
  b.trim = !o->shape.brief && !o->shape.fields; /* what is printed again is parsed whole again */
  sbr_pump pump = {.total = b.n_run, .window = (size_t)o->concurrency, .make = make_request, .done_line = on_response,
                   .idle = flush_out, .trim = b.trim,
                   .ctx = &b, .progress_interval = o->interval, .failure_of = sbr_failure_of_request};
  if (!rc && b.n_run) rc = sbr_driver_pump(&d, &pump);
  if (!rc && b.n_run) answer_unmatched(&b);
  finish_out(o, &b, &foreign, kept, t0);
  if (b.write_failed) rc = 2;
out:
  batch_free(&b, &keys, &foreign);
  return sbr_driver_finish(&d, rc);
}

int sbr_batch_main(const sbc_ctx *ctx, int argc, char **argv) {
  sbc_ctx c = *ctx;
  batch_opts_t o;
  int rc = parse(argc, argv, &c, &o);
  if (!rc) rc = batch_run(&c, &o);
  sbr_batch_shape_free(&o.shape);
  return rc < 0 ? 0 : rc;
}
