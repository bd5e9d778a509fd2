/* The body of an exec request: files, then steps or a toolchain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_TOOLCHAIN_NAME 128
#define MAX_PROFILE_NAME 128

/* ---- files ------------------------------------------------------------------- */
int sbp_parse_file(sbp_pctx *c, json_object *v, const char *where, sbp_file *f) {
  if (!json_object_is_type(v, json_type_object))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must be an object", where);
  static const char *const allowed[] = {"path", "content", "content_b64", "mode", NULL};
  if (sbp_check_fields(c, v, where, allowed) != 0) return -1;

  json_object *p, *content = NULL, *b64 = NULL, *mode;
  char field[160];
  snprintf(field, sizeof field, "%s.path", where);
  if (!json_object_object_get_ex(v, "path", &p))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s is missing", field);
  size_t plen;
  if (sbp_get_string(c, p, field, true, true, NULL, &plen) != 0) return -1;
  const char *why;
  int rc = sbp_path_normalize(json_object_get_string(p), plen, &f->path, &why);
  if (rc == -2) return sbp_fail_oom(c);
  if (rc != 0) {
    char clip[SBP_CLIP_MAX];
    return sbp_fail(c, SBP_E_BAD_PATH, "%s \"%s\" %s", field,
                    sbp_clip(json_object_get_string(p), plen, clip), why);
  }

  bool has_content = json_object_object_get_ex(v, "content", &content);
  bool has_b64 = json_object_object_get_ex(v, "content_b64", &b64);
  if (has_content && has_b64)
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s: give \"content\" or \"content_b64\", not both", where);
  if (!has_content && !has_b64)
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s needs \"content\" or \"content_b64\"", where);
  if (has_content) {
    char *data = NULL;
    snprintf(field, sizeof field, "%s.content", where);
    if (sbp_get_string(c, content, field, true, true, &data, &f->len) != 0) return -1;
    f->data = (unsigned char *)data;
  } else {
    snprintf(field, sizeof field, "%s.content_b64", where);
    size_t blen, bad = 0;
    if (sbp_get_string(c, b64, field, true, true, NULL, &blen) != 0) return -1;
    sbu_b64_result r = sbu_base64_decode(json_object_get_string(b64), blen, &f->data, &f->len, &bad);
    if (r == SBU_B64_NOMEM) return sbp_fail_oom(c);
    if (r != SBU_B64_OK)
      return sbp_fail(c, SBP_E_BAD_BASE64, "%s is not valid base64 (at character %zu)", field, bad);
  }

  f->mode = 0644;
  if (json_object_object_get_ex(v, "mode", &mode)) {
    int64_t m = json_object_get_int64(mode);
    if (!json_object_is_type(mode, json_type_int) || m < 0 || m > 0777)
      return sbp_fail(c, SBP_E_BAD_REQUEST,
                      "%s.mode must be an integer from 0 to 511 (0777), e.g. 493 for 0755", where);
    f->mode = (unsigned)m;
    f->has_mode = true;
  }
  return 0;
}

typedef struct {
  const char *path;
  size_t idx;
} path_ref;

/* Orders "/" before every other byte, so a path is directly followed by the
 * paths below it ("a", "a/b", "a-b"): conflicts are then adjacent. */
static int path_cmp(const void *pa, const void *pb) {
  const unsigned char *a = (const unsigned char *)((const path_ref *)pa)->path;
  const unsigned char *b = (const unsigned char *)((const path_ref *)pb)->path;
  for (;; a++, b++) {
    int ca = *a == '/' ? 1 : *a ? *a + 1 : 0;
    int cb = *b == '/' ? 1 : *b ? *b + 1 : 0;
    if (ca != cb) return ca < cb ? -1 : 1;
    if (!ca) return 0;
  }
}

int sbp_check_unique_paths(sbp_pctx *c, const sbp_file *files, size_t n) {
  if (n < 2) return 0;
  SBU_AUTOFREE path_ref *refs = calloc(n, sizeof *refs);
  if (!refs) return sbp_fail_oom(c);
  for (size_t i = 0; i < n; i++) refs[i] = (path_ref){files[i].path, i};
  qsort(refs, n, sizeof *refs, path_cmp);
  for (size_t i = 1; i < n; i++) {
    const path_ref *a = &refs[i - 1], *b = &refs[i];
    size_t alen = strlen(a->path);
    char clip[SBP_CLIP_MAX];
    size_t first = a->idx < b->idx ? a->idx : b->idx, second = a->idx < b->idx ? b->idx : a->idx;
    if (strcmp(a->path, b->path) == 0)
      return sbp_fail(c, SBP_E_BAD_PATH, "files[%zu].path \"%s\" duplicates files[%zu].path", second,
                      sbp_clip(b->path, strlen(b->path), clip), first);
    if (strncmp(a->path, b->path, alen) == 0 && b->path[alen] == '/')
      return sbp_fail(c, SBP_E_BAD_PATH,
                      "files[%zu].path \"%s\" is a file, but files[%zu].path puts a file below it",
                      a->idx, sbp_clip(a->path, alen, clip), b->idx);
  }
  return 0;
}

static int parse_files(sbp_pctx *c, json_object *v, sbp_exec *ex) {
  if (!v) return 0;
  if (!json_object_is_type(v, json_type_array))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "files must be an array");
  size_t n = json_object_array_length(v);
  if (n > c->lim->max_files)
    return sbp_fail(c, SBP_E_TOO_MANY_FILES, "%zu files, at most %zu are accepted", n, c->lim->max_files);
  if (n == 0) return 0;
  ex->files = calloc(n, sizeof *ex->files);
  if (!ex->files) return sbp_fail_oom(c);
  ex->n_files = n;
  for (size_t i = 0; i < n; i++) {
    char where[64];
    snprintf(where, sizeof where, "files[%zu]", i);
    if (sbp_parse_file(c, json_object_array_get_idx(v, i), where, &ex->files[i]) != 0) return -1;
  }
  return sbp_check_unique_paths(c, ex->files, n);
}

/* ---- outputs: files to return after a step ------------------------------------ */
static int parse_outputs(sbp_pctx *c, json_object *v, const char *where, char ***out, size_t *n_out) {
  if (!json_object_is_type(v, json_type_array))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must be an array of paths", where);
  size_t n = json_object_array_length(v);
  if (n > SBP_MAX_OUTPUTS)
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s: %zu paths, at most %d are accepted", where, n, SBP_MAX_OUTPUTS);
  char **vec = calloc(n + 1, sizeof *vec);
  if (!vec) return sbp_fail_oom(c);
  *out = vec; /* owned by the caller's struct from here on */
  *n_out = 0;
  for (size_t i = 0; i < n; i++) {
    char field[96], clip[SBP_CLIP_MAX];
    size_t len;
    const char *why;
    json_object *p = json_object_array_get_idx(v, i);
    snprintf(field, sizeof field, "%s[%zu]", where, i);
    if (sbp_get_string(c, p, field, true, true, NULL, &len) != 0) return -1;
    int rc = sbp_path_normalize(json_object_get_string(p), len, &vec[i], &why);
    if (rc == -2) return sbp_fail_oom(c);
    if (rc != 0) return sbp_fail(c, SBP_E_BAD_PATH, "%s \"%s\" %s", field, sbp_clip(json_object_get_string(p), len, clip), why);
    *n_out = i + 1;
    for (size_t k = 0; k < i; k++)
      if (strcmp(vec[k], vec[i]) == 0)
        return sbp_fail(c, SBP_E_BAD_PATH, "%s \"%s\" duplicates %s[%zu]", field,
                        sbp_clip(vec[i], strlen(vec[i]), clip), where, k);
  }
  return 0;
}

/* ---- steps ------------------------------------------------------------------- */
/* A NULL-terminated copy of an array of strings. */
int sbp_parse_strv(sbp_pctx *c, json_object *v, const char *where, bool allow_empty_strings,
                      char ***out, size_t *n_out) {
  if (!json_object_is_type(v, json_type_array))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must be an array of strings", where);
  size_t n = json_object_array_length(v);
  char **vec = calloc(n + 1, sizeof *vec);
  if (!vec) return sbp_fail_oom(c);
  *out = vec; /* owned by the caller's struct from here on */
  *n_out = n;
  for (size_t i = 0; i < n; i++) {
    char field[96];
    snprintf(field, sizeof field, "%s[%zu]", where, i);
    if (sbp_get_string(c, json_object_array_get_idx(v, i), field, allow_empty_strings, false, &vec[i],
                       NULL) != 0)
      return -1;
  }
  return 0;
}

static int parse_env(sbp_pctx *c, json_object *v, const char *where, sbp_step *st) {
  if (!json_object_is_type(v, json_type_object))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must be an object of strings", where);
  size_t n = (size_t)json_object_object_length(v);
  st->env = calloc(n + 1, sizeof *st->env);
  if (!st->env) return sbp_fail_oom(c);
  size_t i = 0;
  json_object_object_foreach(v, key, val) {
    char clip[SBP_CLIP_MAX], field[160];
    size_t klen = strlen(key);
    snprintf(field, sizeof field, "%s.%s", where, sbp_clip(key, klen, clip));
    if (klen == 0 || strchr(key, '='))
      return sbp_fail(c, SBP_E_BAD_REQUEST, "%s: variable names must be non-empty and without \"=\"",
                      field);
    size_t vlen;
    if (sbp_get_string(c, val, field, true, false, NULL, &vlen) != 0) return -1;
    char *kv = malloc(klen + 1 + vlen + 1);
    if (!kv) return sbp_fail_oom(c);
    memcpy(kv, key, klen);
    kv[klen] = '=';
    memcpy(kv + klen + 1, json_object_get_string(val), vlen + 1);
    st->env[i++] = kv;
  }
  st->n_env = i;
  return 0;
}

static bool valid_step_name(const char *s, size_t n) {
  if (n == 0 || n > SBP_MAX_STEP_NAME) return false;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
          ch == '-' || ch == '.'))
      return false;
  }
  return true;
}

/* "output_encoding": "text" (the default) or "base64". */
static int parse_output_encoding(sbp_pctx *c, json_object *obj, const char *where, bool *base64) {
  json_object *x;
  if (!json_object_object_get_ex(obj, "output_encoding", &x)) return 0;
  const char *s = json_object_is_type(x, json_type_string) ? json_object_get_string(x) : NULL;
  if (!s || (strcmp(s, "text") != 0 && strcmp(s, "base64") != 0))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s%soutput_encoding must be \"text\" or \"base64\"", where,
                    *where ? "." : "");
  *base64 = strcmp(s, "base64") == 0;
  return 0;
}

static int parse_step(sbp_pctx *c, json_object *v, size_t i, sbp_step *st) {
  char where[64], field[96];
  snprintf(where, sizeof where, "steps[%zu]", i);
  if (!json_object_is_type(v, json_type_object))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must be an object", where);
  static const char *const allowed[] = {"name",  "argv",         "stdin",  "stdin_b64", "env",
                                        "merge_output", "limits", "cache", "outputs", "output_encoding", "trace",
                                        "cases", "stop", "budget_s", "case_output_bytes", "fn_name", "checker", "compare", NULL};
  if (sbp_check_fields(c, v, where, allowed) != 0) return -1;

  json_object *x;
  if (json_object_object_get_ex(v, "name", &x)) {
    size_t n;
    snprintf(field, sizeof field, "%s.name", where);
    if (sbp_get_string(c, x, field, false, false, &st->name, &n) != 0) return -1;
    if (!valid_step_name(st->name, n)) {
      char clip[SBP_CLIP_MAX];
      return sbp_fail(c, SBP_E_BAD_REQUEST, "%s \"%s\" must be 1-64 characters of A-Z a-z 0-9 _ - .",
                      field, sbp_clip(st->name, n, clip));
    }
  } else {
    char name[32];
    snprintf(name, sizeof name, "step%zu", i + 1);
    st->name = strdup(name);
    if (!st->name) return sbp_fail_oom(c);
  }

  snprintf(field, sizeof field, "%s.argv", where);
  if (!json_object_object_get_ex(v, "argv", &x)) return sbp_fail(c, SBP_E_BAD_REQUEST, "%s is missing", field);
  if (json_object_is_type(x, json_type_array) && json_object_array_length(x) == 0)
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%s must not be empty", field);
  /* Arguments may be empty (SURGE TC 55 passes --edges ""); the program
   * name may not. */
  if (sbp_parse_strv(c, x, field, true, &st->argv, &st->argc) != 0) return -1;
  if (st->argv[0][0] == '\0') return sbp_fail(c, SBP_E_BAD_REQUEST, "%s[0] (the program) must not be empty", field);

  if (json_object_object_get_ex(v, "env", &x)) {
    snprintf(field, sizeof field, "%s.env", where);
    if (parse_env(c, x, field, st) != 0) return -1;
  }
  if (json_object_object_get_ex(v, "merge_output", &x)) {
    if (!json_object_is_type(x, json_type_boolean))
      return sbp_fail(c, SBP_E_BAD_REQUEST, "%s.merge_output must be true or false", where);
    st->merge_output = json_object_get_boolean(x);
  }
  if (json_object_object_get_ex(v, "cache", &x)) {
    if (!json_object_is_type(x, json_type_boolean))
      return sbp_fail(c, SBP_E_BAD_REQUEST, "%s.cache must be true or false", where);
    st->cache = json_object_get_boolean(x);
  }
  if (json_object_object_get_ex(v, "outputs", &x)) {
    snprintf(field, sizeof field, "%s.outputs", where);
    if (parse_outputs(c, x, field, &st->outputs, &st->n_outputs) != 0) return -1;
  }
  if (parse_output_encoding(c, v, where, &st->output_base64) != 0) return -1;
  if (json_object_object_get_ex(v, "trace", &x) && sbp_parse_trace(c, x, where, &st->trace) != 0) return -1;
  if (sbp_get_stdin(c, v, where, &st->stdin_data, &st->stdin_len, &st->has_stdin) != 0) return -1;
  if (sbp_parse_cases(c, v, where, &st->cases) != 0) return -1;
  if (st->cases.v && (st->has_stdin || st->trace.on || st->n_outputs || st->cache))
    return sbp_fail(c, SBP_E_BAD_REQUEST,
                    "%s: a step with cases takes its stdin from each case, and cannot be traced, cached or give "
                    "outputs back",
                    where);
  x = NULL;
  json_object_object_get_ex(v, "limits", &x);
  return sbp_parse_step_limits(c, x, where, &st->limits);
}

static int parse_steps(sbp_pctx *c, json_object *v, sbp_exec *ex) {
  if (!json_object_is_type(v, json_type_array))
    return sbp_fail(c, SBP_E_BAD_REQUEST, "steps must be an array");
  size_t n = json_object_array_length(v);
  if (n == 0) return sbp_fail(c, SBP_E_BAD_REQUEST, "steps must not be empty");
  if (n > c->lim->max_steps)
    return sbp_fail(c, SBP_E_BAD_REQUEST, "%zu steps, at most %zu are accepted", n, c->lim->max_steps);
  ex->steps = calloc(n, sizeof *ex->steps);
  if (!ex->steps) return sbp_fail_oom(c);
  ex->n_steps = n;
  for (size_t i = 0; i < n; i++)
    if (parse_step(c, json_object_array_get_idx(v, i), i, &ex->steps[i]) != 0) return -1;
  return 0;
}

/* ---- toolchain form ---------------------------------------------------------- */
static int parse_toolchain(sbp_pctx *c, json_object *root, json_object *tc, sbp_exec *ex) {
  size_t n;
  if (sbp_get_string(c, tc, "toolchain", false, false, &ex->toolchain, &n) != 0) return -1;
  if (n > MAX_TOOLCHAIN_NAME)
    return sbp_fail(c, SBP_E_BAD_REQUEST, "toolchain must be at most %d bytes", MAX_TOOLCHAIN_NAME);
  json_object *x;
  if (json_object_object_get_ex(root, "options", &x)) {
    if (!json_object_is_type(x, json_type_object))
      return sbp_fail(c, SBP_E_BAD_REQUEST, "options must be an object");
    ex->options = json_object_get(x);
  }
  if (json_object_object_get_ex(root, "args", &x)) {
    if (sbp_parse_strv(c, x, "args", true, &ex->args, &ex->n_args) != 0) return -1;
  } else {
    ex->args = calloc(1, sizeof *ex->args);
    if (!ex->args) return sbp_fail_oom(c);
  }
  if (json_object_object_get_ex(root, "compile_args", &x) &&
      sbp_parse_strv(c, x, "compile_args", true, &ex->compile_args, &ex->n_compile_args) != 0)
    return -1;
  if (json_object_object_get_ex(root, "outputs", &x) && parse_outputs(c, x, "outputs", &ex->outputs, &ex->n_outputs) != 0)
    return -1;
  if (sbp_get_stdin(c, root, "", &ex->stdin_data, &ex->stdin_len, &ex->has_stdin) != 0) return -1;
  if (json_object_object_get_ex(root, "trace", &x) && sbp_parse_trace(c, x, "", &ex->trace) != 0) return -1;
  if (sbp_parse_cases(c, root, "", &ex->cases) != 0) return -1;
  if (ex->cases.v && (ex->has_stdin || ex->trace.on || ex->n_outputs))
    return sbp_fail(c, SBP_E_BAD_REQUEST,
                    "cases take their stdin and args from each case, and cannot be traced or give outputs back");
  if (json_object_object_get_ex(root, "compile_limits", &x) &&
      sbp_parse_step_limits(c, x, "compile_", &ex->compile_limits) != 0)
    return -1;
  x = NULL;
  json_object_object_get_ex(root, "limits", &x);
  return sbp_parse_step_limits(c, x, "", &ex->limits);
}

int sbp_parse_exec(sbp_pctx *c, json_object *root, sbp_exec *ex) {
  json_object *steps = NULL, *tc = NULL, *x;
  bool has_steps = json_object_object_get_ex(root, "steps", &steps);
  bool has_tc = json_object_object_get_ex(root, "toolchain", &tc);
  if (has_steps && has_tc)
    return sbp_fail(c, SBP_E_BAD_REQUEST, "exec takes \"steps\" or \"toolchain\", not both");
  if (!has_steps && !has_tc)
    return sbp_fail(c, SBP_E_BAD_REQUEST, "exec needs \"steps\" (or \"toolchain\")");
  if (has_steps) {
    static const char *const toolchain_only[] = {"options", "args", "compile_args", "stdin", "stdin_b64",
                                                 "limits", "compile_limits", "outputs", "trace",
                                                 "cases", "stop", "budget_s", "case_output_bytes", "fn_name", "checker", "compare", NULL};
    for (size_t i = 0; toolchain_only[i]; i++)
      if (json_object_object_get_ex(root, toolchain_only[i], NULL))
        return sbp_fail(c, SBP_E_BAD_REQUEST,
                        "%s is only valid with \"toolchain\" (with \"steps\", put stdin, "
                        "limits, outputs and trace inside each step)",
                        toolchain_only[i]);
  }
  if (json_object_object_get_ex(root, "profile", &x)) {
    size_t n;
    if (sbp_get_string(c, x, "profile", false, false, &ex->profile, &n) != 0) return -1;
    if (n > MAX_PROFILE_NAME)
      return sbp_fail(c, SBP_E_BAD_REQUEST, "profile must be at most %d bytes", MAX_PROFILE_NAME);
  }
  if (json_object_object_get_ex(root, "outputs_max_bytes", &x)) {
    int64_t b = json_object_get_int64(x);
    if (!json_object_is_type(x, json_type_int) || b < 1 || (uint64_t)b > SBP_LIMIT_MAX_OUTPUTS_BYTES)
      return sbp_fail(c, SBP_E_BAD_LIMITS, "outputs_max_bytes must be an integer from 1 to %llu",
                      (unsigned long long)SBP_LIMIT_MAX_OUTPUTS_BYTES);
    ex->outputs_max_bytes = (uint64_t)b;
  }
  if (parse_output_encoding(c, root, "", &ex->output_base64) != 0) return -1;
  if (json_object_object_get_ex(root, "warm", &x)) {
    if (!json_object_is_type(x, json_type_boolean)) return sbp_fail(c, SBP_E_BAD_REQUEST, "warm must be true or false");
    ex->warm = json_object_get_boolean(x);
  }
  x = NULL;
  json_object_object_get_ex(root, "files", &x);
  if (parse_files(c, x, ex) != 0) return -1;
  if (has_steps) return parse_steps(c, steps, ex);
  return parse_toolchain(c, root, tc, ex);
}

void sbp_exec_clear(sbp_exec *ex) {
  for (size_t i = 0; ex->files && i < ex->n_files; i++) {
    free(ex->files[i].path);
    free(ex->files[i].data);
  }
  free(ex->files);
  for (size_t i = 0; ex->steps && i < ex->n_steps; i++) {
    sbp_step *st = &ex->steps[i];
    free(st->name);
    sbp_strv_free(st->argv);
    sbp_strv_free(st->env);
    free(st->stdin_data);
    sbp_strv_free(st->outputs);
    sbp_cases_clear(&st->cases);
  }
  free(ex->steps);
  sbp_strv_free(ex->outputs);
  free(ex->toolchain);
  if (ex->options) json_object_put(ex->options);
  sbp_strv_free(ex->args);
  sbp_strv_free(ex->compile_args);
  free(ex->stdin_data);
  free(ex->profile);
  sbp_cases_clear(&ex->cases);
  memset(ex, 0, sizeof *ex);
}
