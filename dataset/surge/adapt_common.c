/* What every adapter shares: choosing toolchains on this machine, building
 * exec requests, and a POSIX shell-word splitter (SURGE's TC/SC commands run
 * without a shell, split as Python's shlex.split does). */
#include "adapt_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const subset_names[SBS_N_SUBSETS] = {"ml", "cl", "rl", "sc", "tc", "bg", "dr", "fl"};

const char *sbs_subset_name(sbs_subset s) { return (unsigned)s < SBS_N_SUBSETS ? subset_names[s] : "?"; }

int sbs_subset_parse(const char *s, sbs_subset *out) {
  for (int i = 0; i < SBS_N_SUBSETS; i++)
    if (strcmp(s, subset_names[i]) == 0) {
      *out = (sbs_subset)i;
      return 0;
    }
  return -1;
}

json_object *sbs_tc_find(json_object *list, const char *name) {
  for (size_t i = 0; list && i < json_object_array_length(list); i++) {
    json_object *t = json_object_array_get_idx(list, i), *v;
    if (json_object_object_get_ex(t, "name", &v) && strcmp(json_object_get_string(v), name) == 0) return t;
  }
  return NULL;
}

static json_object *find_tc(const sbs_env *e, const char *name) { return sbs_tc_find(e->toolchains, name); }

static const char *tc_field(json_object *t, const char *key) {
  json_object *v;
  return json_object_object_get_ex(t, key, &v) && v ? json_object_get_string(v) : "";
}

static bool available(json_object *t) {
  json_object *v;
  return t && json_object_object_get_ex(t, "available", &v) && json_object_get_boolean(v);
}

bool sbs_env_has(const sbs_env *e, const char *toolchain) { return available(find_tc(e, toolchain)); }

bool sbs_env_best_has(const sbs_env *e, const char *toolchain) {
  return e->best_profile[0] && available(sbs_tc_find(e->best_toolchains, toolchain));
}

void sbs_env_timed_python(const sbs_env *e, char *path, size_t n, char *profile, size_t pn) {
  /* on the host, pyenv's 3.8 lies under /root, which a raw step does not see */
  json_object *t = e->run_profile[0] ? find_tc(e, "python3.8") : NULL;
  profile[0] = '\0';
  if (!available(t) && sbs_env_best_has(e, "python3.8")) {
    t = sbs_tc_find(e->best_toolchains, "python3.8");
    snprintf(profile, pn, "%s", e->best_profile);
  }
  snprintf(path, n, "%s", available(t) ? tc_field(t, "path") : e->python);
}

static void alt_free(sbs_env *e) {
  if (!e->alt) return;
  sbs_env_free(e->alt);
  free(e->alt);
  e->alt = NULL;
}

void sbs_env_set_best(sbs_env *e, const char *name, json_object *toolchains) {
  if (e->best_toolchains) json_object_put(e->best_toolchains);
  e->best_toolchains = json_object_get(toolchains);
  snprintf(e->best_profile, sizeof e->best_profile, "%s", toolchains && name ? name : "");
  alt_free(e);
  char err[128];
  if (toolchains && name && (e->alt = calloc(1, sizeof *e->alt)) && sbs_env_init(e->alt, toolchains, err, sizeof err) == 0) {
    snprintf(e->alt->run_profile, sizeof e->alt->run_profile, "%s", name);
    e->alt->inproc_time = e->inproc_time;
    e->alt->bg_mimic_gcc9 = e->alt->bg_mimic_gcc9 && e->bg_mimic_gcc9;
  } else {
    free(e->alt);
    e->alt = NULL;
  }
  sbs_env_fill_subs(e); /* roles closer to SURGE's there run there now */
}

void sbs_env_options(sbs_env *e, bool inproc_time, bool mimic) {
  e->inproc_time = inproc_time;
  e->bg_mimic_gcc9 = e->bg_mimic_gcc9 && mimic; /* never for a real GCC 9 */
  if (e->alt) sbs_env_options(e->alt, inproc_time, mimic);
}

const char *sbs_env_version(const sbs_env *e, const char *toolchain) {
  json_object *t = find_tc(e, toolchain), *v;
  return t && json_object_object_get_ex(t, "version", &v) && v ? json_object_get_string(v) : NULL;
}


int sbs_env_init(sbs_env *e, json_object *toolchains, char *err, size_t err_len) {
  memset(e, 0, sizeof *e);
  e->toolchains = json_object_get(toolchains);
  e->bg_mimic_gcc9 = true;
  e->inproc_time = true;
  /* g++: the oldest versioned one installed (SURGE used GCC 9); clang++:
   * the newest (SURGE's matched clang 19). */
  int best_gxx = 1000, best_clang = -1;
  for (size_t i = 0; toolchains && i < json_object_array_length(toolchains); i++) {
    json_object *t = json_object_array_get_idx(toolchains, i), *v;
    if (!json_object_object_get_ex(t, "available", &v) || !json_object_get_boolean(v)) continue;
    const char *fam = tc_field(t, "family"), *name = tc_field(t, "name");
    int n = atoi(tc_field(t, "version"));
    if (strcmp(fam, "g++") == 0 && strchr(name, '-') && n < best_gxx) {
      best_gxx = n;
      snprintf(e->gxx, sizeof e->gxx, "%s", tc_field(t, "path"));
      snprintf(e->gxx_name, sizeof e->gxx_name, "%s", name);
    }
    /* a profile may declare clang++-19 as a family of its own */
    if (strncmp(fam, "clang++", 7) == 0 && strchr(name, '-') && n > best_clang) {
      best_clang = n;
      snprintf(e->clang_dir, sizeof e->clang_dir, "%s", tc_field(t, "real_path"));
      char *slash = strrchr(e->clang_dir, '/');
      if (slash) *slash = '\0';
      snprintf(e->clang_name, sizeof e->clang_name, "%s", name);
    }
  }
  if (!e->gxx[0] && sbs_env_has(e, "g++")) {
    snprintf(e->gxx, sizeof e->gxx, "%s", tc_field(find_tc(e, "g++"), "path"));
    snprintf(e->gxx_name, sizeof e->gxx_name, "g++");
    best_gxx = atoi(tc_field(find_tc(e, "g++"), "version"));
  }
  /* GCC 9 itself needs no mimicry (and rejects -Wno-vexing-parse) */
  if (best_gxx < 10) e->bg_mimic_gcc9 = false;
  if (e->gxx[0]) {
    snprintf(e->gcc_install_dir, sizeof e->gcc_install_dir, "/usr/lib/gcc/x86_64-linux-gnu/%d", best_gxx);
    if (access(e->gcc_install_dir, F_OK) != 0) e->gcc_install_dir[0] = '\0';
  }
  snprintf(e->bg_python, sizeof e->bg_python, "%s", sbs_env_has(e, "python3.8") ? "python3.8" : "python3");
  snprintf(e->python, sizeof e->python, "%s", sbs_env_has(e, "python3") ? tc_field(find_tc(e, "python3"), "path") : "python3");
  e->subs = calloc(SBS_N_ENV, sizeof *e->subs);
  if (!e->subs) {
    snprintf(err, err_len, "out of memory");
    return -1;
  }
  sbs_env_fill_subs(e);
  return 0;
}

void sbs_env_free(sbs_env *e) {
  alt_free(e);
  if (e->toolchains) json_object_put(e->toolchains);
  if (e->best_toolchains) json_object_put(e->best_toolchains);
  e->toolchains = e->best_toolchains = NULL;
  free(e->subs);
  e->subs = NULL;
}

void sbs_job_free(sbs_job *j) {
  if (j->request) json_object_put(j->request);
  memset(j, 0, sizeof *j);
}

/* ---- request builders ---- */
json_object *sbs_req_new(void) {
  json_object *r = json_object_new_object();
  json_object_object_add(r, "type", json_object_new_string("exec"));
  json_object_object_add(r, "files", json_object_new_array());
  return r;
}

void sbs_req_file(json_object *req, const char *path, const char *content, size_t len, int mode) {
  json_object *files = json_object_object_get(req, "files");
  json_object *f = json_object_new_object();
  json_object_object_add(f, "path", json_object_new_string(path));
  json_object_object_add(f, "content", json_object_new_string_len(content, (int)len));
  if (mode) json_object_object_add(f, "mode", json_object_new_int(mode));
  json_object_array_add(files, f);
}

/* SURGE ran in the POSIX locale (g++ prints ASCII quotes there). */
json_object *sbs_posix_env(const char *path) {
  json_object *env = json_object_new_object();
  json_object_object_add(env, "PATH", json_object_new_string(path ? path : "/usr/local/bin:/usr/bin:/bin"));
  json_object_object_add(env, "HOME", json_object_new_string("/tmp"));
  return env;
}

json_object *sbs_req_step(json_object *req, const char *name, const char *const *argv, double time_s) {
  json_object *steps;
  if (!json_object_object_get_ex(req, "steps", &steps)) {
    steps = json_object_new_array();
    json_object_object_add(req, "steps", steps);
  }
  json_object *s = json_object_new_object(), *a = json_object_new_array();
  json_object_object_add(s, "name", json_object_new_string(name));
  for (const char *const *p = argv; *p; p++) json_object_array_add(a, json_object_new_string(*p));
  json_object_object_add(s, "argv", a);
  json_object_object_add(s, "env", sbs_posix_env(NULL));
  if (time_s > 0) {
    json_object *l = json_object_new_object();
    json_object_object_add(l, "time_s", json_object_new_double(time_s));
    json_object_object_add(s, "limits", l);
  }
  json_object_array_add(steps, s);
  return s;
}

json_object *sbs_req_toolchain(const char *toolchain, double time_s) {
  json_object *r = sbs_req_new();
  json_object_object_add(r, "toolchain", json_object_new_string(toolchain));
  json_object_object_add(r, "options", json_object_new_object());
  if (time_s > 0) {
    json_object *l = json_object_new_object();
    json_object_object_add(l, "time_s", json_object_new_double(time_s));
    json_object_object_add(r, "limits", l);
  }
  return r;
}

/* ---- shlex.split (POSIX mode) ---- */
char **sbs_shell_split(const char *s, size_t *n_out) {
  size_t cap = 8, n = 0;
  char **out = calloc(cap, sizeof *out);
  size_t len = strlen(s);
  char *word = malloc(len + 1);
  size_t w = 0;
  bool in_word = false;
  for (const char *p = s; out && word;) {
    char c = *p;
    if (c == '\0' || isspace((unsigned char)c)) {
      if (in_word) {
        word[w] = '\0';
        if (n + 2 > cap) {
          char **nout = realloc(out, (cap *= 2) * sizeof *out);
          if (!nout) break;
          out = nout;
        }
        out[n++] = strdup(word);
        w = 0;
        in_word = false;
      }
      if (c == '\0') break;
      p++;
      continue;
    }
    in_word = true;
    if (c == '\'') { /* literal up to the next quote */
      for (p++; *p && *p != '\''; p++) word[w++] = *p;
      if (*p) p++;
    } else if (c == '"') { /* backslash escapes only \\ \" \$ \` */
      for (p++; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1] && strchr("\\\"$`", p[1])) p++;
        word[w++] = *p;
      }
      if (*p) p++;
    } else if (c == '\\' && p[1]) {
      word[w++] = p[1];
      p += 2;
    } else {
      word[w++] = c;
      p++;
    }
  }
  free(word);
  if (out) out[n] = NULL;
  *n_out = n;
  return out;
}

void sbs_strv_free(char **v) {
  for (char **p = v; p && *p; p++) free(*p);
  free(v);
}
