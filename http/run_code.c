/* A /run_code body (SandboxFusion's RunCodeRequest) into a native exec
 * request in the toolchain form. Fields this endpoint does not know are
 * ignored: clients send extra ones. Defaults are SandboxFusion's:
 * compile_timeout 10, run_timeout 10, memory_limit_MB -1 (the daemon's
 * default), stdin null. */
#include "internal.h"

#include "json_seconds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SBH_MAX_TIMEOUT_S 86400.0

/* A field that must be a number of seconds (int or float), > 0. */
static int seconds(sbh_conn *c, json_object *body, const char *key, double dflt, double *out) {
  json_object *v;
  *out = dflt;
  if (!json_object_object_get_ex(body, key, &v) || json_object_is_type(v, json_type_null)) return 0;
  if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double)) {
    sbh_send_error(c, 422, "%s must be a number of seconds", key);
    return -1;
  }
  double d = json_object_get_double(v);
  if (!isfinite(d) || d <= 0 || d > SBH_MAX_TIMEOUT_S) {
    sbh_send_error(c, 422, "%s must be more than 0 and at most %g seconds", key, SBH_MAX_TIMEOUT_S);
    return -1;
  }
  *out = d;
  return 0;
}

static json_object *limits(double t, int64_t mem) {
  json_object *l = json_object_new_object();
  json_object_object_add(l, "time_s", sbu_json_number(t));
  json_object_object_add(l, "cpu_time_s", sbu_json_number(t));
  if (mem > 0) json_object_object_add(l, "memory_mib", json_object_new_int64(mem));
  return l;
}

static bool has_path(json_object *files, const char *path) {
  for (size_t i = 0; i < json_object_array_length(files); i++) {
    json_object *p;
    if (json_object_object_get_ex(json_object_array_get_idx(files, i), "path", &p) &&
        !strcmp(json_object_get_string(p), path))
      return true;
  }
  return false;
}

static void add_file(json_object *files, const char *path, const char *key, json_object *content) {
  json_object *f = json_object_new_object();
  json_object_object_add(f, "path", json_object_new_string(path));
  json_object_object_add(f, key, content);
  json_object_array_add(files, f);
}

/* A SandboxError answer now (the language cannot run here). */
static void sandbox_error(sbh_conn *c, const char *msg, const char *language) {
  json_object *sb = json_object_new_object();
  json_object_object_add(sb, "language", json_object_new_string(language));
  json_object_object_add(sb, "error", json_object_new_string(msg));
  sbh_send_json(c, 200, sbh_sandbox_error(c->srv, msg, sb), NULL);
}

/* The request's scalars. */
typedef struct {
  json_object *code, *stdin_v;
  const char *lang;
  double ct, rt;
  int64_t mem;
} scalars;

/* code, language, the timeouts, memory_limit_MB, stdin. 0, or an answer was sent. */
static int read_scalars(sbh_conn *c, json_object *body, scalars *q) {
  json_object *lang, *v;
  if (!json_object_object_get_ex(body, "code", &q->code) || !json_object_is_type(q->code, json_type_string))
    return sbh_send_error(c, 422, "code is required (a string)"), 1;
  if (!json_object_object_get_ex(body, "language", &lang) || !json_object_is_type(lang, json_type_string))
    return sbh_send_error(c, 422, "language is required (a string, e.g. \"python\")"), 1;
  q->lang = json_object_get_string(lang);
  if (seconds(c, body, "compile_timeout", 10, &q->ct) < 0 || seconds(c, body, "run_timeout", 10, &q->rt) < 0) return 1;
  q->mem = -1;
  if (json_object_object_get_ex(body, "memory_limit_MB", &v) && !json_object_is_type(v, json_type_null)) {
    if (!json_object_is_type(v, json_type_int))
      return sbh_send_error(c, 422, "memory_limit_MB must be an integer (-1: the daemon's default)"), 1;
    q->mem = json_object_get_int64(v);
  }
  q->stdin_v = NULL;
  if (json_object_object_get_ex(body, "stdin", &v) && !json_object_is_type(v, json_type_null)) {
    if (!json_object_is_type(v, json_type_string)) return sbh_send_error(c, 422, "stdin must be a string or null"), 1;
    q->stdin_v = v;
  }
  return 0;
}

/* The request's files {path: base64 or null} into files, each kept below /app. 0, or an answer was sent. */
static int request_files(sbh_conn *c, json_object *body, json_object *files) {
  json_object *rf;
  if (!json_object_object_get_ex(body, "files", &rf) || json_object_is_type(rf, json_type_null)) return 0;
  if (!json_object_is_type(rf, json_type_object))
    return sbh_send_error(c, 422, "files must be an object {path: base64 content or null}"), 1;
  json_object_object_foreach(rf, path, content) {
    if (json_object_is_type(content, json_type_null)) continue; /* SandboxFusion: nothing to write */
    if (!json_object_is_type(content, json_type_string))
      return sbh_send_error(c, 422, "files[%.200s] must be base64 text or null", path), 1;
    char why[128];
    char *p = sbh_app_path(path, strlen(path), why, sizeof why);
    if (!p) {
      c->srv->counters[SBH_C_PATH_REFUSED]++;
      return sbh_send_error(c, 400, "files[%.200s]: %s", path, why), 1;
    }
    if (!has_path(files, p)) add_file(files, p, "content_b64", json_object_get(content));
    free(p);
  }
  return 0;
}

/* One fetch_files path: below /app into outs (once), and the pair
 * [as asked, as inside] into fetch_map (the answer names each file as the
 * client did). 0, or an answer was sent. */
static int fetch_one(sbh_conn *c, size_t i, json_object *e, json_object *outs, json_object *fetch_map) {
  if (!json_object_is_type(e, json_type_string)) return sbh_send_error(c, 422, "fetch_files[%zu] must be a string", i), 1;
  char why[128];
  char *p = sbh_app_path(json_object_get_string(e), (size_t)json_object_get_string_len(e), why, sizeof why);
  if (!p) {
    c->srv->counters[SBH_C_PATH_REFUSED]++;
    return sbh_send_error(c, 400, "fetch_files[%zu] (%.200s): %s", i, json_object_get_string(e), why), 1;
  }
  bool dup = false;
  for (size_t k = 0; k < json_object_array_length(outs); k++)
    dup |= !strcmp(json_object_get_string(json_object_array_get_idx(outs, k)), p);
  if (!dup) json_object_array_add(outs, json_object_new_string(p));
  json_object *pair = json_object_new_array();
  json_object_array_add(pair, json_object_get(e));
  json_object_array_add(pair, json_object_new_string(p));
  json_object_array_add(fetch_map, pair);
  free(p);
  return 0;
}

/* fetch_files into native's "outputs" and fetch_map. 0, or an answer was sent. */
static int fetch_files(sbh_conn *c, json_object *body, json_object *native, json_object *fetch_map) {
  json_object *ff;
  if (!json_object_object_get_ex(body, "fetch_files", &ff) || json_object_is_type(ff, json_type_null)) return 0;
  if (!json_object_is_type(ff, json_type_array)) return sbh_send_error(c, 422, "fetch_files must be a list of paths"), 1;
  json_object *outs = json_object_new_array();
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < json_object_array_length(ff); i++)
    rc = fetch_one(c, i, json_object_array_get_idx(ff, i), outs, fetch_map);
  if (rc == 0 && json_object_array_length(outs)) json_object_object_add(native, "outputs", outs);
  else json_object_put(outs);
  return rc;
}

/* The language's entry, or a SandboxError was answered (NULL). */
static const sbh_language *language(sbh_conn *c, const char *lname) {
  const sbh_language *L = sbh_language_find(&c->srv->langs, lname);
  if (L && !L->missing) return L;
  char msg[SBH_ERR_MAX];
  if (L) snprintf(msg, sizeof msg, "language %s cannot run here: %s", lname, L->missing);
  else snprintf(msg, sizeof msg, "language %.64s is not served here (%s lists the values this daemon runs)", lname,
                c->srv->langs.path);
  sandbox_error(c, msg, lname);
  return NULL;
}

/* The toolchain's side of native: options, arguments, stdin, limits, warm;
 * ctx what the answer needs. */
static void finish_native(const sbh_server *s, const sbh_language *L, const scalars *q, json_object *native,
                          json_object *ctx) {
  if (L->options) json_object_object_add(native, "options", json_object_get(L->options));
  if (L->compile_args) json_object_object_add(native, "compile_args", json_object_get(L->compile_args));
  if (L->args) json_object_object_add(native, "args", json_object_get(L->args));
  if (q->stdin_v) json_object_object_add(native, "stdin", json_object_get(q->stdin_v));
  json_object_object_add(native, "limits", limits(q->rt, q->mem));
  json_object_object_add(native, "compile_limits", limits(q->ct, -1));
  json_object_object_add(native, "outputs_max_bytes", json_object_new_int64(16 << 20));
  /* warm: asked where the language and the switch allow; the daemon says what it did */
  const char *warm = !L->warm ? "cold: not a warm language" : !s->opt.warm ? "cold: --http-warm off" : NULL;
  if (!warm) json_object_object_add(native, "warm", json_object_new_boolean(1));
  json_object_object_add(ctx, "language", json_object_new_string(q->lang));
  json_object_object_add(ctx, "warm_asked", json_object_new_boolean(warm == NULL));
  if (warm) json_object_object_add(ctx, "warm_why", json_object_new_string(warm));
  json_object_object_add(ctx, "t_arrived", json_object_new_int64((int64_t)uv_hrtime()));
}

int sbh_run_code_request(sbh_conn *c, json_object *body, json_object **native_out, json_object **ctx_out,
                         double *budget) {
  scalars q;
  if (read_scalars(c, body, &q) != 0) return 1;
  const sbh_language *L = language(c, q.lang);
  if (!L) return 1;
  json_object *native = json_object_new_object(), *files = json_object_new_array();
  json_object *ctx = json_object_new_object(), *fetch_map = json_object_new_array();
  json_object_object_add(native, "type", json_object_new_string("exec"));
  json_object_object_add(native, "toolchain", json_object_new_string(L->toolchain));
  if (L->profile) json_object_object_add(native, "profile", json_object_new_string(L->profile));
  add_file(files, L->source, "content", json_object_get(q.code));
  json_object_object_add(native, "files", files);
  int rc = request_files(c, body, files);
  if (rc == 0 && L->files) {
    json_object_object_foreach(L->files, path, content) {
      if (!has_path(files, path)) add_file(files, path, "content", json_object_get(content));
    }
  }
  if (rc == 0) rc = fetch_files(c, body, native, fetch_map);
  if (rc) {
    json_object_put(native);
    json_object_put(ctx);
    json_object_put(fetch_map);
    return 1;
  }
  json_object_object_add(ctx, "fetch", fetch_map);
  finish_native(c->srv, L, &q, native, ctx);
  *native_out = native;
  *ctx_out = ctx;
  *budget = q.ct + q.rt + c->srv->opt.limits.start_margin_s;
  return 0;
}
