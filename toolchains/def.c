/* Reading toolchain files (json-c). Every field is checked; a file with a
 * mistake is refused with a message naming the file and the field. */
#include "toolchain.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *file;
  char *err;
} ctx;

static int bad(ctx *c, const char *field, const char *why) {
  snprintf(c->err, SBT_ERR_MAX, "%s: field \"%s\": %s", c->file, field, why);
  return -1;
}

static char *dup_str(json_object *o) { return o ? strdup(json_object_get_string(o)) : NULL; }

static int get_string(ctx *c, json_object *obj, const char *key, bool required, char **out) {
  json_object *v;
  *out = NULL;
  if (!json_object_object_get_ex(obj, key, &v)) return required ? bad(c, key, "missing") : 0;
  if (!json_object_is_type(v, json_type_string)) return bad(c, key, "must be a string");
  *out = dup_str(v);
  return 0;
}

static int strv_from(ctx *c, const char *key, json_object *v, char ***out);

/* A JSON array of strings -> NULL-terminated char**. */
static int get_strv(ctx *c, json_object *obj, const char *key, bool required, char ***out) {
  json_object *v;
  *out = NULL;
  if (!json_object_object_get_ex(obj, key, &v)) return required ? bad(c, key, "missing") : 0;
  return strv_from(c, key, v, out);
}

static int strv_from(ctx *c, const char *key, json_object *v, char ***out) {
  *out = NULL;
  if (!json_object_is_type(v, json_type_array)) return bad(c, key, "must be an array of strings");
  size_t n = json_object_array_length(v);
  char **a = calloc(n + 1, sizeof *a);
  for (size_t i = 0; a && i < n; i++) {
    json_object *e = json_object_array_get_idx(v, i);
    if (!json_object_is_type(e, json_type_string)) {
      for (size_t k = 0; k < i; k++) free(a[k]);
      free(a);
      return bad(c, key, "must be an array of strings");
    }
    a[i] = dup_str(e);
  }
  *out = a;
  return a ? 0 : bad(c, key, "out of memory");
}

/* "limits": {"compile": {...}, "run": {...}}, each read as a request's limits are. */
static int get_limits(ctx *c, json_object *v, sbp_step_limits *compile, sbp_step_limits *run) {
  memset(compile, 0, sizeof *compile);
  memset(run, 0, sizeof *run);
  if (!v) return 0;
  if (!json_object_is_type(v, json_type_object)) return bad(c, "limits", "must be an object");
  json_object_object_foreach(v, key, val) {
    char field[64], why[256];
    if (strcmp(key, "compile") && strcmp(key, "run")) return bad(c, "limits", "only \"compile\" and \"run\" are allowed");
    snprintf(field, sizeof field, "limits.%s", key);
    if (sbp_limits_read(val, field, strcmp(key, "run") ? compile : run, why, sizeof why) != SBP_LIMITS_OK)
      return bad(c, "limits", why);
  }
  return 0;
}

static int get_option(ctx *c, const char *name, json_object *o, sbt_option *opt) {
  opt->name = strdup(name);
  if (!json_object_is_type(o, json_type_object)) return bad(c, name, "an option must be an object");
  if (get_string(c, o, "flag", false, &opt->flag) || get_string(c, o, "default", true, &opt->default_value) ||
      get_strv(c, o, "probe", false, &opt->probe))
    return -1;
  json_object *vals;
  if (!json_object_object_get_ex(o, "values", &vals)) return bad(c, name, "option without \"values\"");
  if (json_object_is_type(vals, json_type_array)) {
    if (!opt->flag) return bad(c, name, "a list of values needs a \"flag\" template");
    if (get_strv(c, o, "values", true, &opt->values)) return -1;
    while (opt->values[opt->n_values]) opt->n_values++;
  } else if (json_object_is_type(vals, json_type_object)) {
    size_t n = (size_t)json_object_object_length(vals);
    opt->values = calloc(n + 1, sizeof *opt->values);
    opt->value_args = calloc(n + 1, sizeof *opt->value_args);
    if (!opt->values || !opt->value_args) return bad(c, name, "out of memory");
    json_object_object_foreach(vals, k, v) {
      opt->values[opt->n_values] = strdup(k);
      if (strv_from(c, k, v, &opt->value_args[opt->n_values])) return -1;
      opt->n_values++;
    }
  } else {
    return bad(c, name, "\"values\" must be a list or an object");
  }
  bool found = false;
  for (size_t i = 0; i < opt->n_values; i++) found |= strcmp(opt->values[i], opt->default_value) == 0;
  if (!found) return bad(c, name, "the default is not one of the values");
  return 0;
}

static int parse_def(ctx *c, json_object *root, sbt_def *d) {
  if (!json_object_is_type(root, json_type_object)) return bad(c, "(top)", "must be an object");
  if (get_string(c, root, "name", true, &d->name) || get_string(c, root, "language", true, &d->language) ||
      get_string(c, root, "description", false, &d->description) ||
      get_string(c, root, "install", false, &d->install) ||
      get_string(c, root, "default_source", true, &d->default_source) ||
      get_strv(c, root, "sources", true, &d->sources) || get_strv(c, root, "compile", false, &d->compile) ||
      get_strv(c, root, "run", true, &d->run) || get_string(c, root, "cwd", false, &d->cwd))
    return -1;
  json_object *v, *e;
  /* binaries */
  if (!json_object_object_get_ex(root, "binaries", &v) || !json_object_is_type(v, json_type_array) ||
      json_object_array_length(v) == 0)
    return bad(c, "binaries", "must be a non-empty list");
  d->n_binaries = json_object_array_length(v);
  d->binaries = calloc(d->n_binaries, sizeof *d->binaries);
  for (size_t i = 0; i < d->n_binaries; i++) {
    e = json_object_array_get_idx(v, i);
    sbt_binary *b = &d->binaries[i];
    if (get_string(c, e, "path", false, &b->path) || get_string(c, e, "glob", false, &b->glob) ||
        get_string(c, e, "name", true, &b->name))
      return -1;
    if (!b->path == !b->glob) return bad(c, "binaries", "each entry needs exactly one of \"path\" and \"glob\"");
  }
  /* version */
  if (!json_object_object_get_ex(root, "version", &v)) return bad(c, "version", "missing");
  if (get_strv(c, v, "argv", true, &d->version_argv) || get_string(c, v, "regex", true, &d->version_regex))
    return -1;
  /* options */
  if (json_object_object_get_ex(root, "options", &v)) {
    if (!json_object_is_type(v, json_type_object)) return bad(c, "options", "must be an object");
    d->options = calloc((size_t)json_object_object_length(v) + 1, sizeof *d->options);
    json_object_object_foreach(v, k, o) {
      if (get_option(c, k, o, &d->options[d->n_options++])) return -1;
    }
  }
  /* env */
  if (json_object_object_get_ex(root, "env", &v)) {
    if (!json_object_is_type(v, json_type_object)) return bad(c, "env", "must be an object of strings");
    d->env = calloc((size_t)json_object_object_length(v) + 1, sizeof *d->env);
    size_t n = 0;
    json_object_object_foreach(v, k, val) {
      if (!json_object_is_type(val, json_type_string)) return bad(c, "env", "values must be strings");
      size_t len = strlen(k) + strlen(json_object_get_string(val)) + 2;
      d->env[n] = malloc(len);
      snprintf(d->env[n++], len, "%s=%s", k, json_object_get_string(val));
    }
  }
  /* mounts */
  if (json_object_object_get_ex(root, "mounts", &v)) {
    if (!json_object_is_type(v, json_type_array)) return bad(c, "mounts", "must be a list");
    d->n_mounts = json_object_array_length(v);
    d->mount_sources = calloc(d->n_mounts + 1, sizeof(char *));
    d->mount_targets = calloc(d->n_mounts + 1, sizeof(char *));
    for (size_t i = 0; i < d->n_mounts; i++) {
      e = json_object_array_get_idx(v, i);
      if (get_string(c, e, "source", true, &d->mount_sources[i]) || get_string(c, e, "target", true, &d->mount_targets[i]))
        return -1;
      if (d->mount_targets[i][0] != '/') return bad(c, "mounts", "targets must be absolute");
    }
  }
  /* rename (Java: the file is named after its public class) */
  if (json_object_object_get_ex(root, "rename", &v)) {
    if (get_string(c, v, "regex", true, &d->rename_regex) || get_string(c, v, "to", true, &d->rename_to)) return -1;
    d->rename_group = json_object_object_get_ex(v, "group", &e) ? json_object_get_int(e) : 1;
    if (json_object_object_get_ex(v, "fallback", &e)) {
      json_object *g;
      if (get_string(c, e, "regex", true, &d->rename_fallback_regex) ||
          get_string(c, e, "last_before", true, &d->rename_fallback_before))
        return -1;
      d->rename_fallback_group = json_object_object_get_ex(e, "group", &g) ? json_object_get_int(g) : 1;
      if (d->rename_fallback_group < 1 || d->rename_fallback_group > 9) return bad(c, "rename", "\"group\" must be 1 to 9");
    }
  }
  /* limits */
  if (get_limits(c, json_object_object_get_ex(root, "limits", &v) ? v : NULL, &d->compile_limits, &d->run_limits))
    return -1;
  /* seccomp additions */
  if (json_object_object_get_ex(root, "seccomp", &v) && get_strv(c, v, "deny", false, &d->seccomp_deny)) return -1;
  if (json_object_object_get_ex(root, "libraries", &v)) {
    if (get_string(c, v, "join", true, &d->library_join) || get_strv(c, v, "paths", true, &d->library_paths)) return -1;
    for (char **p = d->library_paths; *p; p++)
      if ((*p)[0] != '/') return bad(c, "libraries", "paths must be absolute");
  }
  if (json_object_object_get_ex(root, "language_level", &v)) {
    if (get_string(c, v, "text", false, &d->level_text) || get_strv(c, v, "argv", false, &d->level_argv) ||
        get_string(c, v, "regex", false, &d->level_regex) || get_string(c, v, "format", false, &d->level_format) ||
        get_string(c, v, "option", false, &d->level_option))
      return -1;
    d->level_group = json_object_object_get_ex(v, "group", &e) ? json_object_get_int(e) : 1;
    if (!d->level_text && !d->level_format && !d->level_option)
      return bad(c, "language_level", "needs one of \"text\", \"format\" and \"option\"");
    if (d->level_argv && !d->level_regex) return bad(c, "language_level", "\"argv\" needs a \"regex\"");
    if (d->level_group < 1 || d->level_group > 9) return bad(c, "language_level", "\"group\" must be 1 to 9");
    bool known = !d->level_option;
    for (size_t i = 0; i < d->n_options; i++) known |= d->level_option && !strcmp(d->options[i].name, d->level_option);
    if (!known) return bad(c, "language_level", "\"option\" names no option of this toolchain");
  }
  if (json_object_object_get_ex(root, "trace", &v)) {
    if (get_string(c, v, "tracer", true, &d->tracer)) return -1;
    if (strcmp(d->tracer, "python") != 0 && strcmp(d->tracer, "gdb") != 0)
      return bad(c, "trace", "\"tracer\" must be one of python, gdb (toolchains/tracers/)");
  }
  if (d->run[0] == NULL) return bad(c, "run", "must not be empty");
  return 0;
}

static void free_strv(char **v) {
  for (char **p = v; p && *p; p++) free(*p);
  free(v);
}

static void free_def(sbt_def *d) {
  free(d->file);
  free(d->name);
  free(d->language);
  free(d->tracer);
  free(d->description);
  free(d->install);
  free(d->default_source);
  free_strv(d->sources);
  for (size_t i = 0; i < d->n_binaries; i++) {
    free(d->binaries[i].path);
    free(d->binaries[i].glob);
    free(d->binaries[i].name);
  }
  free(d->binaries);
  free_strv(d->version_argv);
  free(d->version_regex);
  for (size_t i = 0; i < d->n_options; i++) {
    sbt_option *o = &d->options[i];
    free(o->name);
    free(o->flag);
    free(o->default_value);
    free_strv(o->probe);
    for (size_t k = 0; o->value_args && k < o->n_values; k++) free_strv(o->value_args[k]);
    free(o->value_args);
    free_strv(o->values);
  }
  free(d->options);
  free_strv(d->compile);
  free_strv(d->run);
  free_strv(d->env);
  free_strv(d->mount_sources);
  free_strv(d->mount_targets);
  free(d->cwd);
  free(d->rename_regex);
  free(d->rename_to);
  free(d->rename_fallback_regex);
  free(d->rename_fallback_before);
  free_strv(d->seccomp_deny);
  free_strv(d->library_paths);
  free(d->library_join);
  free(d->level_text);
  free_strv(d->level_argv);
  free(d->level_regex);
  free(d->level_format);
  free(d->level_option);
}

void sbt_defs_free(sbt_def *defs, size_t n);
void sbt_defs_free(sbt_def *defs, size_t n) {
  for (size_t i = 0; i < n; i++) free_def(&defs[i]);
  free(defs);
}

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

static int json_file(const struct dirent *e) {
  size_t n = strlen(e->d_name);
  return n > 5 && strcmp(e->d_name + n - 5, ".json") == 0;
}

int sbt_registry_load(sbt_registry *r, const char *dir, char err[SBT_ERR_MAX]) {
  memset(r, 0, sizeof *r);
  struct dirent **names;
  int n = scandir(dir, &names, json_file, by_name);
  if (n < 0) {
    snprintf(err, SBT_ERR_MAX, "cannot read toolchain directory %s: %s", dir, strerror(errno));
    return -1;
  }
  r->defs = calloc((size_t)n + 1, sizeof *r->defs);
  int rc = r->defs ? 0 : -1;
  for (int i = 0; i < n; i++) {
    if (rc == 0) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
      json_object *root = json_object_from_file(path);
      sbt_def *d = &r->defs[r->n_defs++];
      d->file = strdup(path);
      ctx c = {d->file, err};
      if (!root) {
        snprintf(err, SBT_ERR_MAX, "%s: not valid JSON (%s)", path, json_util_get_last_err());
        rc = -1;
      } else {
        rc = parse_def(&c, root, d);
        json_object_put(root);
      }
    }
    free(names[i]);
  }
  free(names);
  if (rc) {
    sbt_defs_free(r->defs, r->n_defs);
    r->defs = NULL;
    r->n_defs = 0;
  }
  return rc;
}
