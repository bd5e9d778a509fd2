/* http/languages.json: SandboxFusion's `language` values -> toolchains
 * (schema: http/README.md). Read once at start; a mistake in it stops the
 * daemon with a line naming the file, the language and the field. */
#include "internal.h"

#include "runtime_paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sbh_languages_default_path(char *out, size_t cap) {
  if (sbu_installed_dir("http/languages.json", out, cap)) return;
  snprintf(out, cap, "%s", SURGEBOX_HTTP_SOURCE_DIR "/languages.json");
}

static bool strings_only(json_object *v, bool array) {
  if (array) {
    if (!json_object_is_type(v, json_type_array)) return false;
    for (size_t i = 0; i < json_object_array_length(v); i++)
      if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string)) return false;
    return true;
  }
  if (!json_object_is_type(v, json_type_object)) return false;
  json_object_object_foreach(v, k, x) {
    (void)k;
    if (!json_object_is_type(x, json_type_string)) return false;
  }
  return true;
}

/* Field key of entry v, when present, into *out (a new reference): an
 * array of strings, or an object of strings; -1: of another type. */
static int take_strings(json_object *v, const char *key, bool array, json_object **out) {
  json_object *x;
  if (!json_object_object_get_ex(v, key, &x)) return 0;
  if (!strings_only(x, array)) return -1;
  *out = json_object_get(x);
  return 0;
}

static int load_one(sbh_language *l, const char *name, json_object *v, const char *file, char *err, size_t n) {
  static const char *const known[] = {"toolchain", "source", "options", "compile_args", "args", "files", "warm",
                                      "profile",   "missing",   "note",   NULL};
  if (!json_object_is_type(v, json_type_object)) {
    snprintf(err, n, "%s: \"%s\" must be an object (see http/README.md)", file, name);
    return -1;
  }
  json_object_object_foreach(v, key, fv) {
    bool ok = false;
    for (size_t i = 0; known[i]; i++) ok |= !strcmp(known[i], key);
    if (!ok) {
      snprintf(err, n, "%s: \"%s\" has an unknown field \"%s\" (see http/README.md)", file, name, key);
      return -1;
    }
    (void)fv;
  }
  l->name = strdup(name);
  json_object *x;
  if (json_object_object_get_ex(v, "missing", &x)) {
    if (!json_object_is_type(x, json_type_string)) goto bad_type;
    l->missing = strdup(json_object_get_string(x));
    return 0;
  }
  json_object *tc = NULL, *src = NULL;
  if (!json_object_object_get_ex(v, "toolchain", &tc) || !json_object_is_type(tc, json_type_string) ||
      !json_object_object_get_ex(v, "source", &src) || !json_object_is_type(src, json_type_string) ||
      !json_object_get_string_len(src)) {
    snprintf(err, n, "%s: \"%s\" needs \"toolchain\" and \"source\" (strings), or \"missing\"", file, name);
    return -1;
  }
  l->toolchain = strdup(json_object_get_string(tc));
  l->source = strdup(json_object_get_string(src));
  if (take_strings(v, "options", false, &l->options) < 0 || take_strings(v, "compile_args", true, &l->compile_args) < 0 ||
      take_strings(v, "args", true, &l->args) < 0 || take_strings(v, "files", false, &l->files) < 0)
    goto bad_type;
  if (json_object_object_get_ex(v, "profile", &x)) {
    if (!json_object_is_type(x, json_type_string) || !json_object_get_string_len(x)) goto bad_type;
    l->profile = strdup(json_object_get_string(x));
  }
  if (json_object_object_get_ex(v, "warm", &x)) {
    if (!json_object_is_type(x, json_type_boolean)) goto bad_type;
    l->warm = json_object_get_boolean(x);
  }
  return 0;
bad_type:
  snprintf(err, n, "%s: \"%s\": a field of the wrong type (see http/README.md)", file, name);
  return -1;
}

int sbh_languages_load(sbh_languages *l, const char *file, char *err, size_t n) {
  memset(l, 0, sizeof *l);
  snprintf(l->path, sizeof l->path, "%s", file);
  json_object *root = json_object_from_file(file);
  if (!root || !json_object_is_type(root, json_type_object)) {
    snprintf(err, n, "%s: cannot read a JSON object (%s); give another with --http-languages FILE", file,
             json_util_get_last_err() ? json_util_get_last_err() : "not an object");
    if (root) json_object_put(root);
    return -1;
  }
  l->v = calloc((size_t)json_object_object_length(root) + 1, sizeof *l->v);
  int rc = l->v ? 0 : -1;
  json_object_object_foreach(root, name, v) {
    if (rc < 0) break;
    rc = load_one(&l->v[l->n], name, v, file, err, n);
    l->n++;
  }
  json_object_put(root);
  if (rc < 0) {
    if (!l->v) snprintf(err, n, "out of memory");
    sbh_languages_free(l);
  }
  return rc;
}

void sbh_languages_free(sbh_languages *l) {
  for (size_t i = 0; l->v && i < l->n; i++) {
    sbh_language *x = &l->v[i];
    char *strings[] = {x->name, x->toolchain, x->source, x->profile, x->missing};
    json_object *values[] = {x->options, x->compile_args, x->args, x->files};
    for (size_t k = 0; k < sizeof strings / sizeof strings[0]; k++) free(strings[k]);
    for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) json_object_put(values[k]); /* NULL: nothing */
  }
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

const sbh_language *sbh_language_find(const sbh_languages *l, const char *name) {
  for (size_t i = 0; i < l->n; i++)
    if (!strcmp(l->v[i].name, name)) return &l->v[i];
  return NULL;
}
