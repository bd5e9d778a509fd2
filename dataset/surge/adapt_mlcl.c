/* ML and CL: single-file programs; SURGE recorded no commands, these
 * reproduce its references: gcc main.c -lm, g++, python3, rustc (plain:
 * edition 2015), javac <C>.java && java <C> (C = the public class, else the
 * class with main), mcs + mono, julia, node. The reference is stdout,
 * stripped. Quirk: ML item 43 (Java) printed dates in Chinese: its JVM ran
 * with the zh_CN locale.
 * Where: each language runs in the run's environment; Julia, whose version
 * shows in the references, in SBS_BEST_PROFILE when that is closer to
 * SURGE's 1.5 (sbs_adapt, adapt_env.c: bullseye's 1.5.3 reproduced all 26
 * ML Julia items; Debian 12 has no Julia at all). */
#include "adapt_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *language, *toolchain, *file;
  const char *opt_key[2], *opt_val[2];
} lang_map;

static const lang_map langs[] = {
    {"C", "gcc", "main.c", {"std", "opt"}, {"gnu17", "O0"}},
    {"CPP", "g++", "test.cpp", {"std", "opt"}, {"gnu++17", "O0"}},
    {"Python", "python3", "main.py", {NULL, NULL}, {NULL, NULL}},
    {"Rust", "rustc", "main.rs", {"opt", "edition"}, {"O0", "2015"}},
    {"Java", "java", NULL, {NULL, NULL}, {NULL, NULL}},
    {"C#", "mono", "main.cs", {NULL, NULL}, {NULL, NULL}},
    {"Julia", "julia", "main.jl", {NULL, NULL}, {NULL, NULL}},
    {"JavaScript", "node", "main.js", {NULL, NULL}, {NULL, NULL}},
};

int sbs_adapt_mlcl(sbs_subset s, size_t index, json_object *item, const sbs_env *env, sbs_job *out, char *err,
                   size_t n) {
  const char *lang = sbs_feature_str(item, "language"), *q = sbs_item_str(item, "question");
  if (!lang || !q) {
    snprintf(err, n, "%s item without language or question", sbs_subset_name(s));
    return -1;
  }
  const lang_map *m = NULL;
  for (size_t i = 0; i < sizeof langs / sizeof langs[0]; i++)
    if (strcmp(langs[i].language, lang) == 0) m = &langs[i];
  if (!m) {
    snprintf(err, n, "%s language %s has no toolchain", sbs_subset_name(s), lang);
    return -1;
  }
  snprintf(out->group, sizeof out->group, "%s", lang);
  snprintf(out->toolchain, sizeof out->toolchain, "%s", m->toolchain);
  if (!sbs_env_has(env, m->toolchain)) {
    snprintf(out->missing, sizeof out->missing, "%s", m->toolchain);
    return 0;
  }
  json_object *req = sbs_req_toolchain(m->toolchain, SBS_DEFAULT_TIME_S);
  json_object *opts = json_object_object_get(req, "options");
  for (int k = 0; k < 2; k++)
    if (m->opt_key[k]) json_object_object_add(opts, m->opt_key[k], json_object_new_string(m->opt_val[k]));
  char path[300];
  if (m->file) {
    snprintf(path, sizeof path, "%s", m->file);
  } else {
    char *cls = sbs_java_class(q);
    snprintf(path, sizeof path, "%s.java", cls ? cls : "Main");
    free(cls);
    if (s == SBS_ML && index == 43) json_object_object_add(opts, "locale", json_object_new_string("zh_CN"));
  }
  sbs_req_file(req, path, q, strlen(q), 0);
  out->request = req;
  out->mode = SBS_OUT_STDOUT;
  out->strip = true;
  return 0;
}

int sbs_adapt_fl(size_t index, json_object *item, const sbs_env *env, sbs_job *out, char *err, size_t n) {
  (void)index;
  const char *q = sbs_item_str(item, "question");
  if (!q) {
    snprintf(err, n, "FL item without question");
    return -1;
  }
  snprintf(out->group, sizeof out->group, "lean4");
  snprintf(out->toolchain, sizeof out->toolchain, "lean4");
  if (!sbs_env_has(env, "lean4")) {
    snprintf(out->missing, sizeof out->missing, "lean4");
    return 0;
  }
  json_object *req = sbs_req_toolchain("lean4", 600);
  sbs_req_file(req, "Main.lean", q, strlen(q), 0);
  out->request = req;
  out->mode = SBS_OUT_STDOUT; /* Lean's JSON messages; sbs_reference turns them into SURGE's FL object */
  out->strip = false;
  return 0;
}
