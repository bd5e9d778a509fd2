/* Looking toolchains up, and listing them. */
#include "runtime_paths.h"
#include "toolchain.h"
#include "nearest.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SURGEBOX_TOOLCHAINS_SOURCE_DIR
#define SURGEBOX_TOOLCHAINS_SOURCE_DIR "/usr/share/surgebox/toolchains"
#endif

const char *sbt_default_dir(void) {
  static char installed[4096];
  return sbu_data_dir("SURGEBOX_TOOLCHAINS", "toolchains", installed, sizeof installed, SURGEBOX_TOOLCHAINS_SOURCE_DIR,
                      "/usr/share/surgebox/toolchains");
}

const sbt_toolchain *sbt_find(const sbt_registry *r, const char *name) {
  for (size_t i = 0; i < r->n_tcs; i++)
    if (strcmp(r->tcs[i].name, name) == 0) return &r->tcs[i];
  return NULL;
}

const char *sbt_nearest_name(const sbt_registry *r, const char *name) {
  const char **names = calloc(r->n_tcs + 1, sizeof *names);
  if (!names) return NULL;
  for (size_t i = 0; i < r->n_tcs; i++) names[i] = r->tcs[i].name;
  const char *near = sbu_nearest(name, names, r->n_tcs);
  free(names);
  return near;
}

/* "g++-13" belongs to the g++ family, "python3.8" to python3's. */
const sbt_def *sbt_family_of(const sbt_registry *r, const char *name) {
  for (size_t i = 0; i < r->n_defs; i++) {
    const char *fam = r->defs[i].name;
    size_t n = strlen(fam);
    if (strcmp(name, fam) == 0) return &r->defs[i];
    if (strncmp(name, fam, n) == 0 && name[n] == '-' && isdigit((unsigned char)name[n + 1])) return &r->defs[i];
  }
  /* python3.8 -> python3 (family "python3", versioned "python3.N") */
  for (size_t i = 0; i < r->n_defs; i++) {
    const char *fam = r->defs[i].name;
    size_t n = strlen(fam);
    if (n > 1 && isdigit((unsigned char)fam[n - 1]) && strncmp(name, fam, n) == 0 && name[n] == '.') return &r->defs[i];
  }
  return NULL;
}

json_object *sbt_list_json(const sbt_registry *r) {
  json_object *arr = json_object_new_array();
  for (size_t i = 0; i < r->n_tcs; i++) {
    const sbt_toolchain *t = &r->tcs[i];
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(t->name));
    json_object_object_add(o, "family", json_object_new_string(t->def->name));
    json_object_object_add(o, "language", json_object_new_string(t->def->language));
    json_object_object_add(o, "version", json_object_new_string(t->version));
    json_object_object_add(o, "path", json_object_new_string(t->bin));
    json_object_object_add(o, "real_path", json_object_new_string(t->bin_real));
    json_object_object_add(o, "available", json_object_new_boolean(true));
    char *level = sbt_level(t);
    json_object_object_add(o, "language_level", level ? json_object_new_string(level) : NULL);
    free(level);
    json_object *opts = json_object_new_object();
    json_object *unsupported = json_object_new_object(), *defaults = json_object_new_object();
    for (size_t k = 0; k < t->def->n_options; k++) {
      const sbt_option *op = &t->def->options[k];
      json_object *vals = json_object_new_array(), *bad = json_object_new_array();
      for (size_t v = 0; v < op->n_values; v++)
        json_object_array_add(t->value_ok[k][v] ? vals : bad, json_object_new_string(op->values[v]));
      json_object_object_add(opts, op->name, vals);
      if (op->default_value) json_object_object_add(defaults, op->name, json_object_new_string(op->default_value));
      if (json_object_array_length(bad)) json_object_object_add(unsupported, op->name, bad);
      else json_object_put(bad);
    }
    json_object_object_add(o, "options", opts);
    json_object_object_add(o, "defaults", defaults); /* the value an option takes when not given */
    json_object_object_add(o, "unsupported", unsupported);
    json_object_array_add(arr, o);
  }
  /* Declared families with nothing installed: say what to install. */
  for (size_t i = 0; i < r->n_defs; i++) {
    bool any = false;
    for (size_t k = 0; k < r->n_tcs; k++) any |= r->tcs[k].def == &r->defs[i];
    if (any) continue;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(r->defs[i].name));
    json_object_object_add(o, "family", json_object_new_string(r->defs[i].name));
    json_object_object_add(o, "language", json_object_new_string(r->defs[i].language));
    json_object_object_add(o, "version", NULL);
    json_object_object_add(o, "available", json_object_new_boolean(false));
    json_object_object_add(o, "install", r->defs[i].install ? json_object_new_string(r->defs[i].install) : NULL);
    json_object_object_add(o, "options", json_object_new_object());
    json_object_array_add(arr, o);
  }
  return arr;
}
