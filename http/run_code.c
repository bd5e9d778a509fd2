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

int sbh_run_code_request(sbh_conn *c, json_object *body, json_object **native_out, json_object **ctx_out,
                         double *budget) {
  sbh_server *s = c->srv;
  json_object *code, *lang, *v;
  if (!json_object_object_get_ex(body, "code", &code) || !json_object_is_type(code, json_type_string)) {
    sbh_send_error(c, 422, "code is required (a string)");
    return 1;
  }
  if (!json_object_object_get_ex(body, "language", &lang) || !json_object_is_type(lang, json_type_string)) {
    sbh_send_error(c, 422, "language is required (a string, e.g. \"python\")");
    return 1;
  }
  double ct, rt;
  if (seconds(c, body, "compile_timeout", 10, &ct) < 0 || seconds(c, body, "run_timeout", 10, &rt) < 0) return 1;
  int64_t mem = -1;
  if (json_object_object_get_ex(body, "memory_limit_MB", &v) && !json_object_is_type(v, json_type_null)) {
    if (!json_object_is_type(v, json_type_int)) {
      sbh_send_error(c, 422, "memory_limit_MB must be an integer (-1: the daemon's default)");
      return 1;
    }
    mem = json_object_get_int64(v);
  }
  json_object *stdin_v = NULL;
  if (json_object_object_get_ex(body, "stdin", &v) && !json_object_is_type(v, json_type_null)) {
    if (!json_object_is_type(v, json_type_string)) {
      sbh_send_error(c, 422, "stdin must be a string or null");
      return 1;
    }
    stdin_v = v;
  }
  const char *lname = json_object_get_string(lang);
  const sbh_language *L = sbh_language_find(&s->langs, lname);
  char msg[SBH_ERR_MAX];
  if (!L || L->missing) {
    if (L) snprintf(msg, sizeof msg, "language %s cannot run here: %s", lname, L->missing);
    else snprintf(msg, sizeof msg, "language %.64s is not served here (%s lists the values this daemon runs)", lname,
                  s->langs.path);
    sandbox_error(c, msg, lname);
    return 1;
  }
  json_object *native = json_object_new_object(), *files = json_object_new_array();
  json_object *ctx = json_object_new_object(), *fetch_map = json_object_new_array();
  json_object_object_add(native, "type", json_object_new_string("exec"));
  json_object_object_add(native, "toolchain", json_object_new_string(L->toolchain));
  if (L->profile) json_object_object_add(native, "profile", json_object_new_string(L->profile));
  add_file(files, L->source, "content", json_object_get(code));
  json_object *rf;
  int rc = 0;
  if (json_object_object_get_ex(body, "files", &rf) && !json_object_is_type(rf, json_type_null)) {
    if (!json_object_is_type(rf, json_type_object)) {
      sbh_send_error(c, 422, "files must be an object {path: base64 content or null}");
      rc = 1;
    } else {
      json_object_object_foreach(rf, path, content) {
        if (json_object_is_type(content, json_type_null)) continue; /* SandboxFusion: nothing to write */
        if (!json_object_is_type(content, json_type_string)) {
          sbh_send_error(c, 422, "files[%.200s] must be base64 text or null", path);
          rc = 1;
          break;
        }
        char why[128];
        char *p = sbh_app_path(path, strlen(path), why, sizeof why);
        if (!p) {
          s->counters[SBH_C_PATH_REFUSED]++;
          sbh_send_error(c, 400, "files[%.200s]: %s", path, why);
          rc = 1;
          break;
        }
        if (!has_path(files, p)) add_file(files, p, "content_b64", json_object_get(content));
        free(p);
      }
    }
  }
  if (rc == 0 && L->files) {
    json_object_object_foreach(L->files, path, content) {
      if (!has_path(files, path)) add_file(files, path, "content", json_object_get(content));
    }
  }
  json_object *ff;
  if (rc == 0 && json_object_object_get_ex(body, "fetch_files", &ff) && !json_object_is_type(ff, json_type_null)) {
    json_object *outs = json_object_new_array();
    if (!json_object_is_type(ff, json_type_array)) {
      sbh_send_error(c, 422, "fetch_files must be a list of paths");
      rc = 1;
    }
    for (size_t i = 0; rc == 0 && i < json_object_array_length(ff); i++) {
      json_object *e = json_object_array_get_idx(ff, i);
      if (!json_object_is_type(e, json_type_string)) {
        sbh_send_error(c, 422, "fetch_files[%zu] must be a string", i);
        rc = 1;
        break;
      }
      char why[128];
      char *p = sbh_app_path(json_object_get_string(e), (size_t)json_object_get_string_len(e), why, sizeof why);
      if (!p) {
        s->counters[SBH_C_PATH_REFUSED]++;
        sbh_send_error(c, 400, "fetch_files[%zu] (%.200s): %s", i, json_object_get_string(e), why);
        rc = 1;
        break;
      }
      bool dup = false;
      for (size_t k = 0; k < json_object_array_length(outs); k++)
        dup |= !strcmp(json_object_get_string(json_object_array_get_idx(outs, k)), p);
      if (!dup) json_object_array_add(outs, json_object_new_string(p));
      /* the answer names each file as the client did */
      json_object *pair = json_object_new_array();
      json_object_array_add(pair, json_object_get(e));
      json_object_array_add(pair, json_object_new_string(p));
      json_object_array_add(fetch_map, pair);
      free(p);
    }
    if (json_object_array_length(outs)) json_object_object_add(native, "outputs", outs);
    else json_object_put(outs);
  }
  if (rc) {
    json_object_put(native);
    json_object_put(files);
    json_object_put(ctx);
    json_object_put(fetch_map);
    return 1;
  }
  json_object_object_add(native, "files", files);
  if (L->options) json_object_object_add(native, "options", json_object_get(L->options));
  if (L->compile_args) json_object_object_add(native, "compile_args", json_object_get(L->compile_args));
  if (L->args) json_object_object_add(native, "args", json_object_get(L->args));
  if (stdin_v) json_object_object_add(native, "stdin", json_object_get(stdin_v));
  json_object_object_add(native, "limits", limits(rt, mem));
  json_object_object_add(native, "compile_limits", limits(ct, -1));
  json_object_object_add(native, "outputs_max_bytes", json_object_new_int64(16 << 20));
  /* warm: asked where the language and the switch allow; the daemon says what it did */
  const char *warm = !L->warm ? "cold: not a warm language" : !s->opt.warm ? "cold: --http-warm off" : NULL;
  if (!warm) json_object_object_add(native, "warm", json_object_new_boolean(1));
  json_object_object_add(ctx, "language", json_object_new_string(lname));
  json_object_object_add(ctx, "fetch", fetch_map);
  json_object_object_add(ctx, "warm_asked", json_object_new_boolean(warm == NULL));
  if (warm) json_object_object_add(ctx, "warm_why", json_object_new_string(warm));
  json_object_object_add(ctx, "t_arrived", json_object_new_int64((int64_t)uv_hrtime()));
  *native_out = native;
  *ctx_out = ctx;
  *budget = ct + rt + s->opt.limits.start_margin_s;
  return 0;
}
