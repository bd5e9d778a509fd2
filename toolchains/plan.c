/* Expanding a toolchain job (toolchain + options + files + args) into the
 * steps, environment and mounts the daemon runs. */
#include "toolchain.h"
#include "nearest.h"

#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char **v;
  size_t n, cap;
} strv;

static void strv_push(strv *s, char *item) {
  if (s->n + 2 > s->cap) {
    s->cap = s->cap ? s->cap * 2 : 8;
    char **p = realloc(s->v, s->cap * sizeof *p);
    if (!p) abort();
    s->v = p;
  }
  s->v[s->n++] = item;
  s->v[s->n] = NULL;
}

static void strv_free(char **v) {
  for (char **p = v; p && *p; p++) free(*p);
  free(v);
}

__attribute__((format(printf, 3, 4))) static sbt_plan_result fail(char err[SBT_ERR_MAX], sbt_plan_result r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, SBT_ERR_MAX, fmt, ap);
  va_end(ap);
  return r;
}

static bool is_source(const sbt_def *d, const char *path) {
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  size_t n = strlen(path);
  for (char **s = d->sources; *s; s++) {
    size_t k = strlen(*s);
    if ((*s)[0] == '.' ? (n > k && strcmp(path + n - k, *s) == 0) : strcmp(base, *s) == 0) return true;
  }
  return false;
}

/* The start offset of regex's group (0: the whole match) in text (first match, or the last one
 * starting before limit when limit >= 0), or -1; *len gets its length. */
static regoff_t find_group(const char *regex, int group, const char *text, regoff_t limit, regoff_t *len) {
  regex_t re;
  if (!regex || group < 0 || group > 9 || regcomp(&re, regex, REG_EXTENDED) != 0) return -1;
  regmatch_t m[10];
  regoff_t found = -1, at = 0;
  while (regexec(&re, text + at, 10, m, at ? REG_NOTBOL : 0) == 0 && m[0].rm_eo > 0) {
    if (limit >= 0 && at + m[0].rm_so >= limit) break;
    if (m[group].rm_so >= 0) found = at + m[group].rm_so, *len = m[group].rm_eo - m[group].rm_so;
    if (limit < 0) break;
    at += m[0].rm_eo;
  }
  regfree(&re);
  return found;
}

/* Java: the file is named after its public class, else (MultiPL-E's
 * "class Problem") after the class declared last before main. */
static char *renamed(const sbt_def *d, const char *path, const unsigned char *data, size_t len) {
  if (!d->rename_regex) return NULL;
  char *text = strndup((const char *)data, len);
  if (!text) return NULL;
  regoff_t n = 0, at = find_group(d->rename_regex, d->rename_group > 0 ? d->rename_group : 1, text, -1, &n);
  if (at < 0 && d->rename_fallback_regex) {
    regoff_t mlen, before = find_group(d->rename_fallback_before, 0, text, -1, &mlen);
    if (before >= 0) at = find_group(d->rename_fallback_regex, d->rename_fallback_group, text, before, &n);
  }
  char *out = NULL;
  if (at >= 0) {
    char name[512];
    snprintf(name, sizeof name, "%.*s", (int)n, text + at);
    const char *slash = strrchr(path, '/');
    char buf[4096];
    const char *p = strstr(d->rename_to, "{1}");
    if (p)
      snprintf(buf, sizeof buf, "%.*s%.*s%s%s", slash ? (int)(slash - path + 1) : 0, path, (int)(p - d->rename_to),
               d->rename_to, name, p + 3);
    else
      snprintf(buf, sizeof buf, "%s", d->rename_to);
    out = strdup(buf);
  }
  free(text);
  return out;
}

void sbt_limits_apply(sb_limits *l, const sbp_step_limits *o) {
  if (!o) return;
  if (o->has_time_s) {
    l->wall_time_s = o->time_s;
    if (!o->has_cpu_time_s) l->cpu_time_s = o->time_s;
  }
  if (o->has_cpu_time_s) l->cpu_time_s = o->cpu_time_s;
  if (o->has_memory_mib) l->memory_mib = o->memory_mib;
  if (o->has_pids) l->pids = o->pids;
  if (o->has_output_bytes) l->output_bytes = o->output_bytes;
}

void sbt_limits_resolve(sb_limits *out, const sbp_step_limits *toolchain, const sbp_step_limits *request) {
  sb_limits_default(out);
  sbt_limits_apply(out, toolchain);
  sbt_limits_apply(out, request);
}

typedef struct {
  const sbt_vars *vars;
  char **sources;
  const char *const *args;
  const sbt_def *def;
  char ***option_args; /* per def option */
} expand_ctx;

static char **expand_argv(char *const *tmpl, const expand_ctx *c) {
  strv out = {0};
  strv_push(&out, NULL);
  out.n = 0;
  for (size_t i = 0; tmpl && tmpl[i]; i++) {
    const char *t = tmpl[i];
    if (strcmp(t, "{sources}") == 0) {
      for (char **s = c->sources; s && *s; s++) strv_push(&out, strdup(*s));
    } else if (strcmp(t, "{args}") == 0) {
      for (const char *const *a = c->args; a && *a; a++) strv_push(&out, strdup(*a));
    } else if (strncmp(t, "{option:", 8) == 0) {
      for (size_t o = 0; o < c->def->n_options; o++)
        if (strncmp(t + 8, c->def->options[o].name, strlen(c->def->options[o].name)) == 0 &&
            t[8 + strlen(c->def->options[o].name)] == '}')
          for (char **a = c->option_args[o]; a && *a; a++) strv_push(&out, strdup(*a));
    } else {
      strv_push(&out, sbt_expand_string(t, c->vars));
    }
  }
  return out.v;
}


/* GCC's and Clang's names of a C or C++ standard before it was published
 * (c++2b for c++23), or NULL. */
static const char *old_std_name(const char *value) {
  static const char *const names[][2] = {{"0x", "11"}, {"1y", "14"}, {"1z", "17"}, {"2a", "20"}, {"2b", "23"},
                                         {"2c", "26"}, {"1x", "11"}, {"2x", "23"}};
  static char out[16];
  const char *plus = strstr(value, "++");
  size_t pre = plus ? (size_t)(plus - value) + 2 : 1; /* "c++", "gnu++"; "c", "gnu" for C */
  if (!plus) pre = strncmp(value, "gnu", 3) == 0 ? 3 : 1;
  if (pre + 2 != strlen(value) || pre > 5) return NULL;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(value + pre, names[i][0]) == 0) {
      snprintf(out, sizeof out, "%.*s%s", (int)pre, value, names[i][1]);
      return out;
    }
  return NULL;
}

/* 1. Every option the request names is one of the toolchain's, as a string. */
static sbt_plan_result check_option_names(const sbt_toolchain *tc, json_object *options, char err[SBT_ERR_MAX]) {
  const sbt_def *d = tc->def;
  if (!options) return SBT_OK;
  json_object_object_foreach(options, key, val) {
    bool known = false;
    for (size_t o = 0; o < d->n_options; o++) known |= strcmp(d->options[o].name, key) == 0;
    if (!known) {
      char names[256] = "";
      const char *cands[64];
      size_t nc = 0;
      for (size_t o = 0; o < d->n_options; o++) {
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", o ? ", " : "", d->options[o].name);
        if (nc < 64) cands[nc++] = d->options[o].name;
      }
      const char *near = sbu_nearest(key, cands, nc);
      if (near)
        return fail(err, SBT_BAD_OPTION, "%s has no option \"%s\": did you mean \"%s\"? (it has: %s)", tc->name, key,
                    near, names);
      return fail(err, SBT_BAD_OPTION, "%s has no option \"%s\" (it has: %s)", tc->name, key, d->n_options ? names : "none");
    }
    if (!json_object_is_type(val, json_type_string))
      return fail(err, SBT_BAD_OPTION, "option \"%s\" must be a string", key);
  }
  return SBT_OK;
}

/* A value that is none of the option's: the nearest one, or the value a
 * compiler's pre-publication name (c++2b) stands for. */
static sbt_plan_result unknown_value(const sbt_toolchain *tc, const sbt_option *op, const char *value,
                                    char err[SBT_ERR_MAX]) {
  char vals[512] = "";
  for (size_t i = 0; i < op->n_values; i++)
    snprintf(vals + strlen(vals), sizeof vals - strlen(vals), "%s%s", i ? ", " : "", op->values[i]);
  const char *near = sbu_nearest(value, (const char *const *)op->values, op->n_values);
  const char *alias = old_std_name(value);
  bool alias_known = false;
  for (size_t i = 0; alias && i < op->n_values; i++) alias_known |= strcmp(op->values[i], alias) == 0;
  if (alias && alias_known)
    return fail(err, SBT_BAD_OPTION, "%s: %s=%s is not one of: %s; did you mean %s=%s? (%s is the old name of %s)",
                tc->name, op->name, value, vals, op->name, alias, value, alias);
  if (alias)
    return fail(err, SBT_BAD_OPTION, "%s: %s=%s is not one of: %s (%s is the old name of %s, which is not one of them)",
                tc->name, op->name, value, vals, value, alias);
  if (near)
    return fail(err, SBT_BAD_OPTION, "%s: %s=%s is not one of: %s; did you mean %s=%s?", tc->name, op->name, value, vals,
                op->name, near);
  return fail(err, SBT_BAD_OPTION, "%s: %s=%s is not one of: %s", tc->name, op->name, value, vals);
}

/* The chosen options: per option its arguments (option_args[o]), and for the
 * identity each value by name and every argument in order. */
typedef struct {
  char ***option_args; /* per def option, NULL-terminated */
  json_object *values, *flags;
} chosen_options;

static void chosen_free(chosen_options *ch, size_t n_options) {
  for (size_t o = 0; ch->option_args && o < n_options; o++) strv_free(ch->option_args[o]);
  free(ch->option_args);
  json_object_put(ch->values);
  json_object_put(ch->flags);
}

/* 2. Each option's value (the request's, else the default), supported by
 * this toolchain's version, expanded into its arguments. */
static sbt_plan_result choose_options(const sbt_toolchain *tc, json_object *options, chosen_options *ch,
                                      char err[SBT_ERR_MAX]) {
  const sbt_def *d = tc->def;
  ch->option_args = calloc(d->n_options + 1, sizeof *ch->option_args);
  ch->values = json_object_new_object();
  ch->flags = json_object_new_array();
  for (size_t o = 0; o < d->n_options; o++) {
    const sbt_option *op = &d->options[o];
    json_object *v = NULL;
    const char *value = options && json_object_object_get_ex(options, op->name, &v) ? json_object_get_string(v)
                                                                                     : op->default_value;
    size_t k = 0;
    while (k < op->n_values && strcmp(op->values[k], value) != 0) k++;
    if (k == op->n_values) return unknown_value(tc, op, value, err);
    if (!tc->value_ok[o][k])
      return fail(err, SBT_UNSUPPORTED, "%s %s does not support %s=%s", tc->name, tc->version, op->name, value);
    strv a = {0};
    strv_push(&a, NULL);
    a.n = 0;
    if (op->value_args) {
      for (char **p = op->value_args[k]; *p; p++) strv_push(&a, strdup(*p));
    } else {
      sbt_vars vv = {.value = value};
      char *f = sbt_expand_string(op->flag, &vv);
      if (f[0]) strv_push(&a, f);
      else free(f);
    }
    ch->option_args[o] = a.v;
    for (char **p = a.v; p && *p; p++) json_object_array_add(ch->flags, json_object_new_string(*p));
    json_object_object_add(ch->values, op->name, json_object_new_string(value));
  }
  return SBT_OK;
}

/* 3. The main file (the first source, else the only file), renamed if the
 * toolchain says so, then the other sources in the request's order. */
static sbt_plan_result pick_sources(const sbt_toolchain *tc, const sbt_file *files, size_t n_files, sbt_plan *out,
                                    strv *sources, char err[SBT_ERR_MAX]) {
  const sbt_def *d = tc->def;
  size_t main = n_files;
  for (size_t i = 0; i < n_files && main == n_files; i++)
    if (is_source(d, files[i].path)) main = i;
  if (main == n_files && n_files == 1) main = 0;
  if (main == n_files)
    return fail(err, SBT_NO_SOURCE, "no source file for %s (expected a file named like *%s)", tc->name, d->sources[0]);
  char *rn = renamed(d, files[main].path, files[main].data, files[main].len);
  out->main_path = rn ? rn : strdup(files[main].path);
  out->main_index = main;
  strv_push(sources, strdup(out->main_path));
  for (size_t i = 0; i < n_files; i++)
    if (i != main && is_source(d, files[i].path)) strv_push(sources, strdup(files[i].path));
  return SBT_OK;
}

/* 4. The compile step (if any) and the run step. */
static void make_steps(const sbt_def *d, const expand_ctx *c, const sbp_step_limits *run_override, sbt_plan *out) {
  size_t s = 0;
  if (d->compile) {
    out->steps[s].name = strdup("compile");
    out->steps[s].argv = expand_argv(d->compile, c);
    out->steps[s].is_compile = true;
    sbt_limits_resolve(&out->steps[s].limits, &d->compile_limits, NULL);
    s++;
  }
  out->steps[s].name = strdup("run");
  out->steps[s].argv = expand_argv(d->run, c);
  sbt_limits_resolve(&out->steps[s].limits, &d->run_limits, run_override);
  out->n_steps = s + 1;
}

static char **copy_strv(char *const *v, const sbt_vars *expand) {
  strv out = {0};
  strv_push(&out, NULL);
  out.n = 0;
  for (char *const *p = v; p && *p; p++) strv_push(&out, expand ? sbt_expand_string(*p, expand) : strdup(*p));
  return out.v;
}

/* 5. What the steps run in: environment, mounts, working directory, the
 * toolchain's extra seccomp denials. */
static void make_surroundings(const sbt_toolchain *tc, const sbt_vars *vars, sbt_plan *out) {
  const sbt_def *d = tc->def;
  out->env = copy_strv(d->env, vars);
  out->n_mounts = d->n_mounts + (tc->prefix_mount ? 1 : 0);
  out->mounts = calloc(out->n_mounts + 1, sizeof *out->mounts);
  for (size_t m = 0; m < d->n_mounts; m++) {
    char *src = sbt_expand_string(d->mount_sources[m], vars);
    out->mounts[m].source = sbt_expand_env(src);
    free(src);
    out->mounts[m].target = sbt_expand_string(d->mount_targets[m], vars);
  }
  if (tc->prefix_mount) {
    out->mounts[d->n_mounts].source = strdup(tc->prefix_mount);
    out->mounts[d->n_mounts].target = strdup(tc->prefix_mount);
  }
  out->cwd = strdup(d->cwd ? d->cwd : "/app");
  out->seccomp_deny = copy_strv(d->seccomp_deny, NULL);
}

/* 6. The toolchain's identity in the job's record. */
static json_object *identity_of(const sbt_toolchain *tc, const chosen_options *ch) {
  json_object *id = json_object_new_object();
  json_object_object_add(id, "name", json_object_new_string(tc->name));
  json_object_object_add(id, "family", json_object_new_string(tc->def->name));
  json_object_object_add(id, "language", json_object_new_string(tc->def->language));
  json_object_object_add(id, "version", json_object_new_string(tc->version));
  json_object_object_add(id, "path", json_object_new_string(tc->bin));
  json_object_object_add(id, "real_path", json_object_new_string(tc->bin_real));
  json_object_object_add(id, "options", json_object_get(ch->values));
  json_object_object_add(id, "flags", json_object_get(ch->flags));
  return id;
}

sbt_plan_result sbt_plan_make(const sbt_toolchain *tc, json_object *options, const sbt_file *files, size_t n_files,
                              const char *const *args, const sbp_step_limits *run_override, sbt_plan *out,
                              char err[SBT_ERR_MAX]) {
  const sbt_def *d = tc->def;
  memset(out, 0, sizeof *out);
  sbt_plan_result rc = check_option_names(tc, options, err);
  if (rc != SBT_OK) return rc;
  chosen_options ch = {0};
  strv sources = {0};
  rc = choose_options(tc, options, &ch, err);
  if (rc == SBT_OK) rc = pick_sources(tc, files, n_files, out, &sources, err);
  if (rc == SBT_OK) {
    const char *base = strrchr(out->main_path, '/') ? strrchr(out->main_path, '/') + 1 : out->main_path;
    char *stem = strdup(base);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem) *dot = '\0';
    sbt_vars vars = {.bin = tc->bin, .bin_real = tc->bin_real, .bin_dir = tc->bin_dir, .main = out->main_path,
                     .main_stem = stem, .version = tc->version,
                     .libraries = tc->libraries ? tc->libraries : ""};
    expand_ctx c = {&vars, sources.v, args, d, ch.option_args};
    make_steps(d, &c, run_override, out);
    make_surroundings(tc, &vars, out);
    free(stem);
    out->identity = identity_of(tc, &ch);
  }
  strv_free(sources.v);
  chosen_free(&ch, d->n_options);
  if (rc != SBT_OK) sbt_plan_free(out);
  return rc;
}

void sbt_plan_free(sbt_plan *p) {
  for (size_t s = 0; s < 2; s++) {
    free(p->steps[s].name);
    strv_free(p->steps[s].argv);
  }
  strv_free(p->env);
  strv_free(p->seccomp_deny);
  for (size_t m = 0; p->mounts && m < p->n_mounts; m++) {
    free((char *)p->mounts[m].source);
    free((char *)p->mounts[m].target);
  }
  free(p->mounts);
  free(p->cwd);
  free(p->main_path);
  if (p->identity) json_object_put(p->identity);
  memset(p, 0, sizeof *p);
}
