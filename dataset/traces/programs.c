/* The items of trace-dataset: a JSON Lines file of programs (--programs),
 * or CRUXEval's reference checks (--benchmark cruxeval). Every field is
 * checked before anything runs; a bad line is one error naming it. */
#include "traces.h"
#include "cleanup.h"
#include "cruxeval.h"
#include "sha256.h"
#include "jsonl.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sbtd_items_free(sbtd_items *items) {
  for (size_t i = 0; i < items->n; i++) {
    free(items->v[i].id);
    json_object_put(items->v[i].req);
    json_object_put(items->v[i].info);
  }
  free(items->v);
  items->v = NULL;
  items->n = 0;
}

static bool id_ok(const char *s) {
  size_t n = strlen(s);
  return n > 0 && n <= 128 && s[0] != '.' && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* the item's request hash, and the item appended (taking req and info) */
static void add(sbtd_items *items, const char *id, json_object *req, json_object *info) {
  items->v = realloc(items->v, (items->n + 1) * sizeof *items->v);
  sbtd_item *it = &items->v[items->n++];
  it->id = strdup(id);
  it->req = req;
  it->info = info;
  const char *text = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  sbu_sha256_hex(text, strlen(text), it->sha);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* ids distinct: 0, or -1 naming the first repeated */
static int distinct(const sbtd_items *items, char *err, size_t err_len) {
  char **ids = malloc((items->n + 1) * sizeof *ids);
  for (size_t i = 0; i < items->n; i++) ids[i] = items->v[i].id;
  qsort(ids, items->n, sizeof *ids, cmp_str);
  int rc = 0;
  for (size_t i = 1; i < items->n && !rc; i++)
    if (!strcmp(ids[i], ids[i - 1])) {
      snprintf(err, err_len, "the id \"%s\" is given twice", ids[i]);
      rc = -1;
    }
  free(ids);
  return rc;
}

static json_object *file_obj(const char *path, json_object *content) {
  json_object *f = json_object_new_object();
  json_object_object_add(f, "path", json_object_new_string(path));
  json_object_object_add(f, "content", json_object_get(content));
  return f;
}

/* files (the entry first: the toolchain runs the first source file) from
 * "files" or "code"; NULL with why */
static json_object *line_files(json_object *o, const char **entry, const char **why) {
  json_object *code, *files, *e;
  bool has_code = json_object_object_get_ex(o, "code", &code), has_files = json_object_object_get_ex(o, "files", &files);
  *entry = json_object_object_get_ex(o, "entry", &e) && json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;
  if (json_object_object_get_ex(o, "entry", &e) && !*entry) return *why = "\"entry\" is not a string", NULL;
  if (has_code == has_files) return *why = "give exactly one of \"code\" (a string) and \"files\"", NULL;
  SBU_AUTOPUT json_object *out = json_object_new_array();
  if (has_code) {
    if (!json_object_is_type(code, json_type_string)) return *why = "\"code\" is not a string", NULL;
    if (!*entry) *entry = "main.py";
    json_object_array_add(out, file_obj(*entry, code));
    return sbu_take_ptr(&out);
  }
  size_t n = json_object_is_type(files, json_type_array) ? json_object_array_length(files) : 0;
  if (!n) return *why = "\"files\" is not a non-empty array", NULL;
  SBU_AUTOPUT json_object *rest = json_object_new_array();
  for (size_t i = 0; i < n; i++) {
    json_object *f = json_object_array_get_idx(files, i), *p, *c;
    if (!json_object_object_get_ex(f, "path", &p) || !json_object_is_type(p, json_type_string) ||
        !json_object_object_get_ex(f, "content", &c) || !json_object_is_type(c, json_type_string))
      return *why = "each of \"files\" is {\"path\": string, \"content\": string}", NULL;
    if (!*entry) *entry = json_object_get_string(p);
    json_object_array_add(strcmp(json_object_get_string(p), *entry) ? rest : out, file_obj(json_object_get_string(p), c));
  }
  for (size_t i = 0; i < json_object_array_length(rest); i++) json_object_array_add(out, json_object_get(json_object_array_get_idx(rest, i)));
  if (!json_object_array_length(out)) return *why = "\"entry\" is not one of \"files\"", NULL;
  return sbu_take_ptr(&out);
}

/* one program line into the request and the index's fields; NULL with why */
static json_object *line_request(json_object *o, json_object **info, const char **why) {
  static const char *const known[] = {"id", "code", "files", "entry", "stdin", "args", "toolchain", "time_s", NULL};
  json_object_object_foreach(o, k, fv) {
    (void)fv;
    bool ok = false;
    for (size_t i = 0; known[i] && !ok; i++) ok = !strcmp(k, known[i]);
    if (!ok) return *why = "an unknown field (known: id, code, files, entry, stdin, args, toolchain, time_s)", NULL;
  }
  const char *entry;
  SBU_AUTOPUT json_object *files = line_files(o, &entry, why);
  json_object *v;
  if (!files) return NULL;
  const char *tc = "python3";
  if (json_object_object_get_ex(o, "toolchain", &v) && !(tc = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL))
    return *why = "\"toolchain\" is not a string", NULL;
  SBU_AUTOPUT json_object *req = json_object_new_object(), *args = json_object_new_array();
  json_object_object_add(req, "type", json_object_new_string("exec"));
  json_object_object_add(req, "toolchain", json_object_new_string(tc));
  json_object_object_add(req, "files", sbu_take_ptr(&files));
  if (json_object_object_get_ex(o, "args", &v)) {
    for (size_t i = 0; json_object_is_type(v, json_type_array) && i < json_object_array_length(v); i++)
      if (json_object_is_type(json_object_array_get_idx(v, i), json_type_string)) json_object_array_add(args, json_object_get(json_object_array_get_idx(v, i)));
    if (!json_object_is_type(v, json_type_array) || json_object_array_length(args) != json_object_array_length(v))
      return *why = "\"args\" is not an array of strings", NULL;
  }
  json_object_object_add(req, "args", sbu_take_ptr(&args));
  if (json_object_object_get_ex(o, "stdin", &v)) {
    if (!json_object_is_type(v, json_type_string)) return *why = "\"stdin\" is not a string", NULL;
    json_object_object_add(req, "stdin", json_object_get(v));
  }
  if (json_object_object_get_ex(o, "time_s", &v)) {
    double s = json_object_get_double(v);
    if (!(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) || !(s > 0))
      return *why = "\"time_s\" is not a positive number", NULL;
    json_object *lim = json_object_new_object();
    json_object_object_add(lim, "time_s", json_object_new_double(s));
    json_object_object_add(req, "limits", lim);
  }
  *info = json_object_new_object();
  json_object_object_add(*info, "toolchain", json_object_new_string(tc));
  json_object_object_add(*info, "entry", json_object_new_string(entry));
  json_object_object_foreach(req, rk, rv) if (!strcmp(rk, "files") || !strcmp(rk, "args") || !strcmp(rk, "stdin"))
    json_object_object_add(*info, rk, json_object_get(rv));
  return sbu_take_ptr(&req);
}

typedef struct {
  const char *path;
  sbtd_items *items;
} programs_load;

static int program_line(void *arg, json_object *o, size_t lineno, char *err, size_t err_len) {
  programs_load *l = arg;
  json_object *id, *info = NULL, *req = NULL;
  const char *why = NULL;
  if (!o || !json_object_is_type(o, json_type_object)) why = "not a JSON object";
  else if (!json_object_object_get_ex(o, "id", &id) || !json_object_is_type(id, json_type_string) || !id_ok(json_object_get_string(id)))
    why = "\"id\" is not a string of 1-128 of [A-Za-z0-9._-] (not starting with '.'): it names the item's files";
  else req = line_request(o, &info, &why);
  if (why) {
    snprintf(err, err_len, "%s line %zu: %s", l->path, lineno, why);
    return -1;
  }
  add(l->items, json_object_get_string(id), req, info);
  return 0;
}

int sbtd_programs_load(const char *path, sbtd_items *items, char *err, size_t err_len) {
  memset(items, 0, sizeof *items);
  programs_load l = {path, items};
  int rc = sbr_jsonl_each(path, "programs", program_line, &l, NULL, err, err_len);
  if (rc == 0) rc = distinct(items, err, err_len);
  if (rc) sbtd_items_free(items);
  return rc;
}

int sbtd_cruxeval_load(const char *data, const char *samples, long limit, sbtd_items *items, char *err, size_t err_len) {
  memset(items, 0, sizeof *items);
  sbx_data d;
  if (sbx_data_load(data, &d, err, err_len) < 0) return -1;
  json_object *keys = json_object_new_object(); /* sbx_subset cuts a generations object too */
  for (size_t i = 0; i < d.n; i++) json_object_object_add(keys, d.v[i].id, json_object_new_array());
  int rc = sbx_subset(&d, &keys, samples, limit, err, err_len);
  for (size_t i = 0; rc == 0 && i < d.n; i++) {
    if (!id_ok(d.v[i].id)) {
      snprintf(err, err_len, "%s: the id \"%s\" cannot name a file", data, d.v[i].id);
      rc = -1;
      break;
    }
    size_t call_len = d.v[i].input_len + 3, len;
    char *call = malloc(call_len + 1);
    snprintf(call, call_len + 1, "f(%.*s)", (int)d.v[i].input_len, d.v[i].input);
    char *prog = sbx_program(&d.v[i], call, call_len, &len); /* what verify runs for the reference input */
    free(call);
    json_object *req = sbx_request(prog, len), *info = json_object_new_object(), *files;
    json_object_object_get_ex(req, "files", &files);
    json_object_object_add(info, "toolchain", json_object_new_string("/usr/bin/python3"));
    json_object_object_add(info, "entry", json_object_new_string("prog.py"));
    json_object_object_add(info, "files", json_object_get(files));
    add(items, d.v[i].id, req, info);
    free(prog);
  }
  json_object_put(keys);
  sbx_data_free(&d);
  if (rc) sbtd_items_free(items);
  return rc;
}
