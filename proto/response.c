/* Building responses and encoding them as wire lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *const sbp_error_codes[] = {
    SBP_E_BAD_JSON,       SBP_E_BAD_REQUEST,   SBP_E_UNKNOWN_TYPE, SBP_E_UNKNOWN_FIELD,
    SBP_E_BAD_PATH,       SBP_E_TOO_MANY_FILES, SBP_E_TOO_LARGE,   SBP_E_BAD_BASE64,
    SBP_E_BAD_LIMITS,     SBP_E_BUSY,          SBP_E_UNKNOWN_TOOLCHAIN, SBP_E_NOT_FOUND,
    SBP_E_UNAUTHORIZED,   SBP_E_INTERNAL,      NULL,
};

bool sbp_error_code_known(const char *code) {
  if (!code) return false;
  for (size_t i = 0; sbp_error_codes[i]; i++)
    if (strcmp(sbp_error_codes[i], code) == 0) return true;
  return false;
}

/* Add key: val, consuming val even on failure. */
static int add(json_object *obj, const char *key, json_object *val) {
  if (json_object_object_add(obj, key, val) != 0) {
    json_object_put(val);
    return -1;
  }
  return 0;
}

json_object *sbp_response_new(json_object *id, const char *type) {
  SBU_AUTOPUT json_object *r = json_object_new_object();
  if (!r) return NULL;
  /* json_object_get(NULL) is NULL, which json-c writes as null. */
  if (add(r, "id", json_object_get(id)) != 0) return NULL;
  json_object *t = json_object_new_string(type);
  if (!t || add(r, "type", t) != 0) return NULL;
  return sbu_take_ptr(&r);
}

json_object *sbp_error_responsev(json_object *id, const char *code, const char *fmt, va_list ap) {
  char msg[1024];
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  if (n < 0) snprintf(msg, sizeof msg, "%s", code);
  SBU_AUTOPUT json_object *r = sbp_response_new(id, "error");
  if (!r) return NULL;
  json_object *e = json_object_new_object();
  if (!e || add(r, "error", e) != 0) return NULL;
  json_object *c = json_object_new_string(code);
  if (!c || add(e, "code", c) != 0) return NULL;
  json_object *m = json_object_new_string(msg);
  if (!m || add(e, "message", m) != 0) return NULL;
  return sbu_take_ptr(&r);
}

json_object *sbp_error_response(json_object *id, const char *code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  json_object *r = sbp_error_responsev(id, code, fmt, ap);
  va_end(ap);
  return r;
}

json_object *sbp_too_large_response(size_t max_line) {
  return sbp_error_response(NULL, SBP_E_TOO_LARGE,
                            "request line longer than %zu bytes (files, stdin and options together): send fewer or "
                            "smaller files, or start the daemon with a larger --max-line",
                            max_line);
}

const char *sbp_response_error_code(json_object *resp) {
  json_object *t, *e, *c;
  if (!json_object_is_type(resp, json_type_object)) return NULL;
  if (!json_object_object_get_ex(resp, "type", &t) || !json_object_is_type(t, json_type_string) ||
      strcmp(json_object_get_string(t), "error") != 0)
    return NULL;
  if (!json_object_object_get_ex(resp, "error", &e) ||
      !json_object_object_get_ex(e, "code", &c) || !json_object_is_type(c, json_type_string))
    return NULL;
  return json_object_get_string(c);
}

/* ---- exec ---------------------------------------------------------------- */
json_object *sbp_exec_response_new(json_object *id) {
  SBU_AUTOPUT json_object *r = sbp_response_new(id, "exec");
  if (!r) return NULL;
  json_object *s = json_object_new_string(SBP_STATUS_OK);
  if (!s || add(r, "status", s) != 0) return NULL;
  json_object *steps = json_object_new_array();
  if (!steps || add(r, "steps", steps) != 0) return NULL;
  return sbu_take_ptr(&r);
}

static json_object *exec_steps(json_object *resp) {
  json_object *t, *steps;
  if (!json_object_object_get_ex(resp, "type", &t) || !json_object_is_type(t, json_type_string) ||
      strcmp(json_object_get_string(t), "exec") != 0)
    return NULL;
  if (!json_object_object_get_ex(resp, "steps", &steps) || !json_object_is_type(steps, json_type_array))
    return NULL;
  return steps;
}

int sbp_exec_response_add_step(json_object *resp, const char *name, json_object *result) {
  SBU_AUTOPUT json_object *doc = result;
  json_object *steps = exec_steps(resp);
  if (!steps || !json_object_is_type(doc, json_type_object)) return -1;
  if (name) {
    json_object *n = json_object_new_string(name);
    if (!n || add(doc, "name", n) != 0) return -1;
  }
  if (json_object_array_add(steps, doc) != 0) return -1;
  sbu_take_ptr(&doc);
  return 0;
}

int sbp_exec_response_set_status(json_object *resp, const char *status) {
  if (!exec_steps(resp) || !status) return -1;
  json_object *s = json_object_new_string(status);
  if (!s) return -1;
  return add(resp, "status", s);
}

const char *sbp_exec_overall_status(json_object *steps) {
  size_t n = json_object_is_type(steps, json_type_array) ? json_object_array_length(steps) : 0;
  for (size_t i = 0; i < n; i++) {
    json_object *doc = json_object_array_get_idx(steps, i);
    json_object *st, *nm;
    if (!json_object_object_get_ex(doc, "status", &st) || !json_object_is_type(st, json_type_string))
      return SBP_STATUS_INTERNAL_ERROR; /* a result document without a status is a bug */
    const char *status = json_object_get_string(st);
    if (strcmp(status, SBP_STATUS_OK) == 0) continue;
    if (strcmp(status, SBP_STATUS_INTERNAL_ERROR) == 0) return SBP_STATUS_INTERNAL_ERROR;
    if (json_object_object_get_ex(doc, "name", &nm) && json_object_is_type(nm, json_type_string) &&
        strcmp(json_object_get_string(nm), "compile") == 0)
      return SBP_STATUS_COMPILE_ERROR;
    return status;
  }
  return SBP_STATUS_OK;
}

int sbp_exec_response_finish(json_object *resp) {
  json_object *steps = exec_steps(resp);
  if (!steps) return -1;
  /* Copy: the status string may live inside a step document. */
  char status[64];
  snprintf(status, sizeof status, "%s", sbp_exec_overall_status(steps));
  return sbp_exec_response_set_status(resp, status);
}

/* ---- wire encoding ---------------------------------------------------------- */
char *sbp_encode_line(json_object *obj, size_t *len) {
  if (!obj) return NULL;
  size_t n = 0;
  const char *s =
      json_object_to_json_string_length(obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
  if (!s || n > SIZE_MAX - 2) return NULL;
  char *line = malloc(n + 2);
  if (!line) return NULL;
  memcpy(line, s, n);
  line[n] = '\n';
  line[n + 1] = '\0';
  if (len) *len = n + 1;
  return line;
}
