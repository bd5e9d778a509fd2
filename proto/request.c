/* Request lines: JSON decoding, the envelope (id, type), cancel, freeing. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *const type_names[] = {
    [SBP_REQ_EXEC] = "exec",     [SBP_REQ_CANCEL] = "cancel", [SBP_REQ_TOOLCHAINS] = "toolchains",
    [SBP_REQ_STATUS] = "status", [SBP_REQ_PING] = "ping",
    [SBP_REQ_METRICS] = "metrics",
};
#define N_TYPES (sizeof type_names / sizeof type_names[0])

const char *sbp_request_type_name(sbp_request_type t) {
  if ((size_t)t < N_TYPES && type_names[t]) return type_names[t];
  return "?";
}

int sbp_request_type_parse(const char *s, sbp_request_type *out) {
  for (size_t i = 0; i < N_TYPES; i++)
    if (type_names[i] && strcmp(type_names[i], s) == 0) {
      *out = (sbp_request_type)i;
      return 0;
    }
  return -1;
}

int sbp_parse_id_value(sbp_pctx *c, json_object *v, const char *field, char **key) {
  if (json_object_is_type(v, json_type_string)) {
    size_t n;
    if (sbp_get_string(c, v, field, false, false, key, &n) != 0) return -1;
    if (n > SBP_MAX_ID_LEN) {
      free(sbu_take_ptr(key));
      return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must be at most %d bytes", field, SBP_MAX_ID_LEN);
    }
    return 0;
  }
  if (json_object_is_type(v, json_type_int)) {
    int64_t i = json_object_get_int64(v);
    /* beyond 2^53 clients in many languages cannot hold the id exactly;
     * json-c also saturates out-of-range literals, which this rejects */
    if (i > SBP_MAX_ID_INT || i < -SBP_MAX_ID_INT)
      return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must be an integer between -(2^53-1) and 2^53-1", field);
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, i);
    *key = strdup(buf);
    if (!*key) return sbp_fail_oom(c);
    return 0;
  }
  return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must be a string or an integer", field);
}

static bool all_space(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') return false;
  return true;
}

/* Decode the line into a JSON object or fail with bad_json / bad_request. */
static int decode_line(sbp_pctx *c, const char *line, size_t len, json_object **root) {
  if (memchr(line, '\0', len))
    return sbp_fail(c, SBP_E_BAD_JSON, "line contains a NUL byte at offset %zu",
                    (size_t)((const char *)memchr(line, '\0', len) - line));
  SBP_AUTOTOK struct json_tokener *tok = json_tokener_new();
  if (!tok) return sbp_fail_oom(c);
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
  SBU_AUTOPUT json_object *obj = json_tokener_parse_ex(tok, line, (int)len);
  enum json_tokener_error jerr = json_tokener_get_error(tok);
  size_t end = json_tokener_get_parse_end(tok);
  if (jerr == json_tokener_continue && end == len && !all_space(line, len)) {
    /* A bare scalar ("42", "true") is only finished by what follows it. */
    obj = json_tokener_parse_ex(tok, " ", 1);
    jerr = json_tokener_get_error(tok);
  }
  if (jerr == json_tokener_continue || (jerr == json_tokener_success && end == 0 && !obj && all_space(line, len)))
    return sbp_fail(c, SBP_E_BAD_JSON, "incomplete JSON: the line ends inside a value");
  if (jerr != json_tokener_success) {
    char why[512];
    sbp_json_error_words(line, len, jerr, end, why, sizeof why);
    return sbp_fail(c, SBP_E_BAD_JSON, "invalid JSON %s", why);
  }
  if (end < len && !all_space(line + end, len - end))
    return sbp_fail(c, SBP_E_BAD_JSON, "trailing characters after the JSON value at byte %zu", end);
  if (!json_object_is_type(obj, json_type_object))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "a request must be a JSON object");
  *root = sbu_take_ptr(&obj);
  return 0;
}

static const char *const envelope_fields[] = {"id", "type", NULL};
static const char *const cancel_fields[] = {"id", "type", "target", NULL};
static const char *const exec_fields[] = {"id",      "type",    "files",     "steps",  "toolchain", "options",
                                          "args",    "stdin",   "stdin_b64", "limits", "profile",   "outputs",
                                          "outputs_max_bytes",  "output_encoding", "compile_args", "compile_limits", "trace", "warm",
                                          "cases", "stop", "budget_s", "case_output_bytes", "fn_name", "checker", "compare", NULL};

static int parse_cancel(sbp_pctx *c, json_object *root, sbp_request *req) {
  json_object *t;
  if (!json_object_object_get_ex(root, "target", &t))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "cancel needs \"target\", the id of the exec to cancel");
  if (sbp_parse_id_value(c, t, "target", &req->cancel_target_key) != 0) return -1;
  req->cancel_target = json_object_get(t);
  return 0;
}

int sbp_request_parse(const char *line, size_t len, const sbp_limits *lim, sbp_request **out,
                      json_object **err_response) {
  sbp_limits defaults;
  if (!lim) {
    sbp_limits_default(&defaults);
    lim = &defaults;
  }
  *out = NULL;
  *err_response = NULL;
  sbp_pctx c = {.lim = lim, .id = NULL, .err = err_response};

  size_t max = lim->max_line_bytes < (size_t)INT_MAX - 1 ? lim->max_line_bytes : (size_t)INT_MAX - 1;
  if (len > max)
    return sbp_fail(&c, SBP_E_TOO_LARGE, "request line is %zu bytes, at most %zu are accepted", len, max);

  if (!line || len == 0) return sbp_fail(&c, SBP_E_BAD_JSON, "empty request line");
  SBU_AUTOPUT json_object *root = NULL;
  if (decode_line(&c, line, len, &root) != 0) return -1;

  SBP_AUTOREQ sbp_request *req = calloc(1, sizeof *req);
  if (!req) return sbp_fail_oom(&c);

  json_object *v;
  if (!json_object_object_get_ex(root, "id", &v))
    return sbp_fail(&c, SBP_E_BAD_REQUEST, "missing field \"id\"");
  if (sbp_parse_id_value(&c, v, "id", &req->id_key) != 0) return -1;
  req->id = json_object_get(v);
  c.id = req->id; /* errors from here on carry the id */

  if (!json_object_object_get_ex(root, "type", &v))
    return sbp_fail(&c, SBP_E_BAD_REQUEST, "missing field \"type\"");
  if (!json_object_is_type(v, json_type_string))
    return sbp_fail(&c, SBP_E_BAD_REQUEST, "type must be a string");
  if (sbp_request_type_parse(json_object_get_string(v), &req->type) != 0) {
    char clip[SBP_CLIP_MAX];
    return sbp_fail(&c, SBP_E_UNKNOWN_TYPE,
                    "unknown request type \"%s\" (expected exec, cancel, toolchains, status, ping or metrics)",
                    sbp_clip(json_object_get_string(v), (size_t)json_object_get_string_len(v), clip));
  }

  static const char *const toolchains_fields[] = {"id", "type", "profile", NULL};
  const char *const *allowed = req->type == SBP_REQ_EXEC         ? exec_fields
                               : req->type == SBP_REQ_CANCEL     ? cancel_fields
                               : req->type == SBP_REQ_TOOLCHAINS ? toolchains_fields
                                                                 : envelope_fields;
  char where[32];
  snprintf(where, sizeof where, "%s request", sbp_request_type_name(req->type));
  if (sbp_check_fields(&c, root, where, allowed) != 0) return -1;

  switch (req->type) {
  case SBP_REQ_EXEC:
    if (sbp_parse_exec(&c, root, &req->exec) != 0) return -1;
    break;
  case SBP_REQ_CANCEL:
    if (parse_cancel(&c, root, req) != 0) return -1;
    break;
  case SBP_REQ_TOOLCHAINS: { /* optionally: the toolchains of a profile */
    json_object *x;
    size_t n;
    if (json_object_object_get_ex(root, "profile", &x) &&
        sbp_get_string(&c, x, "profile", false, false, &req->exec.profile, &n) != 0)
      return -1;
    break;
  }
  case SBP_REQ_STATUS:
  case SBP_REQ_PING:
  case SBP_REQ_METRICS:
    break;
  }
  *out = sbu_take_ptr(&req);
  return 0;
}

void sbp_request_free(sbp_request *req) {
  if (!req) return;
  if (req->id) json_object_put(req->id);
  free(req->id_key);
  sbp_exec_clear(&req->exec);
  if (req->cancel_target) json_object_put(req->cancel_target);
  free(req->cancel_target_key);
  free(req);
}
