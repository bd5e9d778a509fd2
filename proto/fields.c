/* Field-level helpers shared by the request parsers: error reporting,
 * unknown-field checks, typed string extraction. */
#include <stdio.h>
#include <string.h>

#include "nearest.h"
#include "internal.h"

int sbp_fail(sbp_pctx *c, const char *code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (*c->err) json_object_put(*c->err);
  *c->err = sbp_error_responsev(c->id, code, fmt, ap);
  va_end(ap);
  return -1;
}

int sbp_fail_oom(sbp_pctx *c) { return sbp_fail(c, SBP_E_INTERNAL, "out of memory"); }

const char *sbp_clip(const char *s, size_t len, char out[SBP_CLIP_MAX]) {
  const size_t keep = SBP_CLIP_MAX - 12;
  size_t n = len;
  bool cut = false;
  if (n > keep) {
    n = keep;
    /* back up to the start of a UTF-8 sequence */
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    cut = true;
  }
  memcpy(out, s, n);
  if (cut) memcpy(out + n, "...", 4);
  else out[n] = '\0';
  return out;
}

const char *sbp_unknown_field(json_object *obj, const char *const *allowed) {
  json_object_object_foreach(obj, key, val) {
    (void)val;
    bool ok = false;
    for (size_t i = 0; allowed[i] && !ok; i++) ok = strcmp(allowed[i], key) == 0;
    if (!ok) return key;
  }
  return NULL;
}

void sbp_field_hint(const char *key, const char *const *allowed, char *buf, size_t len) {
  size_t n = 0;
  while (allowed[n]) n++;
  const char *near = sbu_nearest(key, allowed, n);
  if (near) snprintf(buf, len, ": did you mean \"%s\"?", near);
  else buf[0] = '\0';
}

int sbp_check_fields(sbp_pctx *c, json_object *obj, const char *where, const char *const *allowed) {
  const char *key = sbp_unknown_field(obj, allowed);
  if (!key) return 0;
  char clip[SBP_CLIP_MAX], hint[96];
  sbp_field_hint(key, allowed, hint, sizeof hint);
  return sbp_fail(c, SBP_E_UNKNOWN_FIELD, "%s%sunknown field \"%s\"%s", where, *where ? ": " : "",
                  sbp_clip(key, strlen(key), clip), hint);
}

int sbp_get_string(sbp_pctx *c, json_object *v, const char *where, bool allow_empty, bool allow_nul,
                   char **out, size_t *len) {
  if (!json_object_is_type(v, json_type_string))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must be a string", where);
  const char *s = json_object_get_string(v);
  int n = json_object_get_string_len(v);
  if (n < 0) return sbp_fail_oom(c);
  size_t sz = (size_t)n;
  if (!allow_empty && sz == 0) return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must not be empty", where);
  if (!allow_nul && memchr(s, '\0', sz))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must not contain a NUL character", where);
  if (out) {
    char *copy = malloc(sz + 1);
    if (!copy) return sbp_fail_oom(c);
    memcpy(copy, s, sz);
    copy[sz] = '\0';
    *out = copy;
  }
  if (len) *len = sz;
  return 0;
}

int sbp_get_stdin(sbp_pctx *c, json_object *obj, const char *where, unsigned char **data, size_t *len,
                  bool *has) {
  json_object *plain = NULL, *b64 = NULL;
  bool has_plain = json_object_object_get_ex(obj, "stdin", &plain);
  bool has_b64 = json_object_object_get_ex(obj, "stdin_b64", &b64);
  char field[96];
  *data = NULL;
  *len = 0;
  *has = false;
  if (has_plain && has_b64)
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s%sgive \"stdin\" or \"stdin_b64\", not both", where,
                    *where ? ": " : "");
  if (has_plain) {
    snprintf(field, sizeof field, "%s%sstdin", where, *where ? "." : "");
    char *copy = NULL;
    if (sbp_get_string(c, plain, field, true, true, &copy, len) != 0) return -1;
    *data = (unsigned char *)copy;
    *has = true;
  } else if (has_b64) {
    snprintf(field, sizeof field, "%s%sstdin_b64", where, *where ? "." : "");
    size_t blen;
    if (sbp_get_string(c, b64, field, true, true, NULL, &blen) != 0) return -1;
    size_t bad = 0;
    sbu_b64_result r = sbu_base64_decode(json_object_get_string(b64), blen, data, len, &bad);
    if (r == SBU_B64_NOMEM) return sbp_fail_oom(c);
    if (r != SBU_B64_OK)
      return sbp_fail(c, SBP_E_BAD_BASE64, "%s is not valid base64 (at character %zu)", field, bad);
    *has = true;
  }
  return 0;
}

void sbp_strv_free(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++) free(*p);
  free(v);
}
