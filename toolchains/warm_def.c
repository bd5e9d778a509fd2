/* Warm-capable languages as data (docs/toolchains.md "Warm and traced
 * languages"): each language's folder under the warm files' directory
 * (toolchains/warm/<lang>/warm.json, beside its zygote) says what makes its
 * interpreter warm-capable; read into the sandbox library's sb_warm_lang
 * (runners/warm_lang.h), and which language a step's argv[0] is. Every
 * field is checked; a file with a mistake is refused, naming it. */
#include "cleanup.h"
#include "runtime_paths.h"
#include "toolchain.h"

#include <dirent.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A string field: 0 (absent and optional: *out NULL), or -1 with why. */
static int str(json_object *o, const char *key, bool required, char **out, char *why, size_t n) {
  json_object *v;
  *out = NULL;
  if (!json_object_object_get_ex(o, key, &v)) {
    if (required) snprintf(why, n, "\"%s\" missing", key);
    return required ? -1 : 0;
  }
  if (!json_object_is_type(v, json_type_string) || !(*out = strdup(json_object_get_string(v)))) {
    snprintf(why, n, "\"%s\" must be a string", key);
    return -1;
  }
  return 0;
}

/* {"NAME": "why", ...} -> pairs. */
static int why_map(json_object *o, const char *key, sb_warm_cold_var **out, size_t *count, char *why, size_t n) {
  json_object *m;
  *out = NULL;
  *count = 0;
  if (!json_object_object_get_ex(o, key, &m)) return 0;
  if (!json_object_is_type(m, json_type_object) || !(*out = calloc((size_t)json_object_object_length(m) + 1, sizeof **out))) {
    snprintf(why, n, "\"%s\" must be an object of NAME: why", key);
    return -1;
  }
  json_object_object_foreach(m, name, v) {
    if (!json_object_is_type(v, json_type_string)) {
      snprintf(why, n, "\"%s\": %.64s: must be a string (why)", key, name);
      return -1;
    }
    (*out)[*count].name = strdup(name);
    (*out)[(*count)++].why = strdup(json_object_get_string(v));
  }
  return 0;
}

/* "NAME" (or "PREFIX*"): {"words": [...], "ranges": [[lo, hi], ...],
 * "chars": "...", "max": N, "forbid": "..", "must": "..."} */
static int var(const char *name, json_object *o, sb_warm_var *r, char *why, size_t n) {
  json_object *v;
  size_t len = strlen(name);
  r->prefix = len > 1 && name[len - 1] == '*';
  r->name = strndup(name, r->prefix ? len - 1 : len);
  if (!json_object_is_type(o, json_type_object) || str(o, "must", true, &r->must, why, n) < 0 ||
      str(o, "chars", false, &r->chars, why, n) < 0 || str(o, "forbid", false, &r->forbid, why, n) < 0)
    goto bad;
  r->has_chars = r->chars != NULL;
  r->max = json_object_object_get_ex(o, "max", &v) ? (size_t)json_object_get_int64(v) : 0;
  if (r->has_chars && (r->max < 1 || r->max > 256)) {
    snprintf(why, n, "%.64s: \"chars\" needs a \"max\" of 1..256 bytes", name);
    return -1;
  }
  if (json_object_object_get_ex(o, "words", &v)) {
    size_t k = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
    r->words = calloc(k + 1, sizeof *r->words);
    for (size_t i = 0; r->words && i < k; i++) r->words[i] = strdup(json_object_get_string(json_object_array_get_idx(v, i)));
  }
  if (json_object_object_get_ex(o, "ranges", &v)) {
    size_t k = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : SB_WARM_VAR_RANGES + 1;
    if (k > SB_WARM_VAR_RANGES) {
      snprintf(why, n, "%.64s: \"ranges\" must be at most %d [lo, hi] pairs", name, SB_WARM_VAR_RANGES);
      return -1;
    }
    for (size_t i = 0; i < k; i++) {
      json_object *p = json_object_array_get_idx(v, i);
      if (!json_object_is_type(p, json_type_array) || json_object_array_length(p) != 2) {
        snprintf(why, n, "%.64s: \"ranges\" must be at most %d [lo, hi] pairs", name, SB_WARM_VAR_RANGES);
        return -1;
      }
      r->ranges[i][0] = json_object_get_uint64(json_object_array_get_idx(p, 0));
      r->ranges[i][1] = json_object_get_uint64(json_object_array_get_idx(p, 1));
    }
    r->n_ranges = k;
  }
  if (!r->words && !r->n_ranges && !r->has_chars) {
    snprintf(why, n, "%.64s: needs \"words\", \"ranges\" or \"chars\" (the values it takes)", name);
    return -1;
  }
  return 0;
bad:
  if (!why[0]) snprintf(why, n, "%.64s: must be an object with \"must\"", name);
  else {
    char inner[256];
    snprintf(inner, sizeof inner, "%s", why);
    snprintf(why, n, "%.64s: %s", name, inner);
  }
  return -1;
}

/* One warm.json into d: 0, or -1 with why. */
static int parse(json_object *o, sbt_warm_def *d, char *why, size_t n) {
  json_object *vars;
  why[0] = '\0';
  sb_warm_lang *l = d->lang = calloc(1, sizeof *l);
  SBU_AUTOFREE char *interp = NULL;
  if (!l || !json_object_is_type(o, json_type_object)) {
    snprintf(why, n, "must be an object");
    return -1;
  }
  if (str(o, "label", true, &l->label, why, n) < 0 || str(o, "zygote", true, &l->zygote, why, n) < 0 ||
      str(o, "interpreter", true, &interp, why, n) < 0 || str(o, "own_prefix", false, &l->own_prefix, why, n) < 0 ||
      str(o, "seed_var", false, &l->seed_var, why, n) < 0 ||
      why_map(o, "cold_vars", &l->cold, &l->n_cold, why, n) < 0 ||
      why_map(o, "userns_cold_vars", &l->userns_cold, &l->n_userns_cold, why, n) < 0)
    return -1;
  /* the zygote's script: a name under the warm files' directory */
  if (l->zygote[0] == '/' || strstr(l->zygote, "..")) {
    snprintf(why, n, "\"zygote\" must be a path under the warm directory (python/sbzygote.py)");
    return -1;
  }
  d->interp = calloc(1, sizeof *d->interp);
  int rc = d->interp ? regcomp(d->interp, interp, REG_EXTENDED | REG_NOSUB) : REG_ESPACE;
  if (rc != 0) {
    free(d->interp);
    d->interp = NULL;
    snprintf(why, n, "\"interpreter\" must be an extended regular expression (on argv[0]'s last component)");
    return -1;
  }
  if (!json_object_object_get_ex(o, "start_vars", &vars) || !json_object_is_type(vars, json_type_object)) {
    snprintf(why, n, "\"start_vars\" must be an object of NAME: {values}");
    return -1;
  }
  if (!(l->vars = calloc((size_t)json_object_object_length(vars) + 1, sizeof *l->vars))) return -1;
  json_object_object_foreach(vars, name, v) {
    if (var(name, v, &l->vars[l->n_vars++], why, n) < 0) return -1;
  }
  return 0;
}

static void def_free(sbt_warm_def *d) {
  sb_warm_lang *l = d->lang;
  if (d->interp) regfree(d->interp);
  free(d->interp);
  if (!l) return;
  for (size_t i = 0; i < l->n_vars; i++) {
    sb_warm_var *r = &l->vars[i];
    for (char **w = r->words; w && *w; w++) free(*w);
    free(r->words);
    free(r->name);
    free(r->chars);
    free(r->forbid);
    free(r->must);
  }
  for (size_t i = 0; i < l->n_cold; i++) free(l->cold[i].name), free(l->cold[i].why);
  for (size_t i = 0; i < l->n_userns_cold; i++) free(l->userns_cold[i].name), free(l->userns_cold[i].why);
  free(l->cold);
  free(l->userns_cold);
  free(l->vars);
  free(l->label);
  free(l->zygote);
  free(l->own_prefix);
  free(l->seed_var);
  free(l);
}

void sbt_warm_langs_free(sbt_warm_langs *w) {
  for (size_t i = 0; i < w->n; i++) def_free(&w->defs[i]);
  free(w->defs);
  w->defs = NULL;
  w->n = 0;
}

static int lang_dir(const struct dirent *e) { return e->d_name[0] != '.'; }

int sbt_warm_langs_load(sbt_warm_langs *w, const char *dir, char err[SBT_ERR_MAX]) {
  struct dirent **names;
  memset(w, 0, sizeof *w);
  int count = scandir(dir, &names, lang_dir, alphasort);
  if (count < 0) return 0; /* no warm files: nothing is warm-capable (warm.c says the zygote's files are missing) */
  int rc = 0;
  w->defs = calloc((size_t)count + 1, sizeof *w->defs);
  for (int i = 0; i < count; i++) {
    char path[PATH_MAX], why[256];
    snprintf(path, sizeof path, "%s/%s/warm.json", dir, names[i]->d_name);
    json_object *o = rc == 0 && w->defs && access(path, R_OK) == 0 ? json_object_from_file(path) : NULL;
    if (o && parse(o, &w->defs[w->n++], why, sizeof why) < 0) {
      snprintf(err, SBT_ERR_MAX, "%s: %s", path, why);
      rc = -1;
    } else if (!o && rc == 0 && access(path, R_OK) == 0) {
      snprintf(err, SBT_ERR_MAX, "%s: not JSON (%s)", path, json_util_get_last_err());
      rc = -1;
    }
    json_object_put(o);
    free(names[i]);
  }
  free(names);
  if (rc < 0 || !w->defs) {
    if (!w->defs) snprintf(err, SBT_ERR_MAX, "%s: out of memory", dir);
    sbt_warm_langs_free(w);
    return -1;
  }
  return 0;
}

const sb_warm_lang *sbt_warm_lang_of(const sbt_warm_langs *w, const char *argv0) {
  if (!w || !argv0) return NULL;
  const char *base = strrchr(argv0, '/');
  base = base ? base + 1 : argv0;
  for (size_t i = 0; i < w->n; i++)
    if (regexec(w->defs[i].interp, base, 0, NULL, 0) == 0) return w->defs[i].lang;
  return NULL;
}

#ifndef SURGEBOX_WARM_SOURCE_DIR
#define SURGEBOX_WARM_SOURCE_DIR "/usr/share/surgebox/warm"
#endif

const char *sbt_warm_dir(void) {
  static char installed[PATH_MAX];
  return sbu_data_dir("SURGEBOX_WARM", "warm", installed, sizeof installed, SURGEBOX_WARM_SOURCE_DIR, NULL);
}
