/* SURGE's recorded environment (RECIPES.md: Python 3.8, GCC 9, clang 17-20
 * on GCC 9's libstdc++, JDK 11-15; Julia 1.5 for ML) against the toolchains
 * chosen here: which jobs run on something else, said before anything runs
 * (or refused under --strict). Only toolchains whose version shows in the
 * references are recorded: a traceback, a diagnostic's wording or column. */
#include "adapt_internal.h"

#include <stdlib.h>
#include <string.h>

static const struct {
  const char *items, *surge;
} surge_env[SBS_N_ENV] = {
    [SBS_ENV_BG_PYTHON] = {"BG python3", "Python 3.8"},
    [SBS_ENV_GXX] = {"DR g++ and BG cpp", "GCC 9"},
    [SBS_ENV_CLANG] = {"DR clang++", "clang 17-20 on GCC 9's libstdc++"},
    [SBS_ENV_JAVA] = {"BG java", "JDK 11-15"},
    [SBS_ENV_JULIA] = {"ML Julia", "Julia 1.5"},
};

/* "3.8.18" is 3.8, "3.80" is not */
static bool has_prefix_version(const char *v, const char *want) {
  size_t n = strlen(want);
  return v && !strncmp(v, want, n) && (v[n] == '\0' || v[n] == '.');
}

static int java_major(const char *v) { /* "17.0.15" -> 17, "1.8.0" -> 8 */
  int m = v ? atoi(v) : 0;
  if (m == 1 && v[1] == '.') m = atoi(v + 2);
  return m;
}

/* used = "<name> <version>", or "" when the toolchain is not there at all. */
static bool set_used(sbs_env_sub *r, const char *name, const char *version) {
  if (!name || !name[0] || !version) {
    r->used[0] = '\0';
    return false;
  }
  snprintf(r->used, sizeof r->used, "%s %s", name, version);
  return true;
}

/* Role k as environment e would run it: r->used and r->substituted, and how
 * far its version is from SURGE's (0: SURGE's). */
static int candidate(const sbs_env *e, int k, sbs_env_sub *r) {
  const char *v = NULL;
  int dist = 0;
  r->used[0] = '\0';
  r->substituted = false;
  switch (k) {
  case SBS_ENV_BG_PYTHON:
    v = sbs_env_has(e, e->bg_python) ? sbs_env_version(e, e->bg_python) : NULL;
    r->substituted = set_used(r, e->bg_python, v) && !has_prefix_version(v, "3.8");
    /* 3.9's tracebacks have 3.8's shape; 3.11's carry ^^^ markers */
    if (r->substituted) dist = atoi(v) == 3 && strchr(v, '.') ? abs(atoi(strchr(v, '.') + 1) - 8) : 100;
    break;
  case SBS_ENV_GXX:
    v = e->gxx_name[0] ? sbs_env_version(e, e->gxx_name) : NULL;
    r->substituted = set_used(r, e->gxx_name, v) && atoi(v) != 9;
    if (r->substituted) dist = abs(atoi(v) - 9);
    break;
  case SBS_ENV_CLANG:
    v = e->clang_name[0] ? sbs_env_version(e, e->clang_name) : NULL;
    if (set_used(r, e->clang_name, v)) {
      int major = atoi(v);
      /* the libstdc++ it compiles against: the GCC given by --gcc-install-dir
       * (a profile's launcher passes its own: not seen from here) */
      const char *gcc = e->gcc_install_dir[0] ? strrchr(e->gcc_install_dir, '/') : NULL;
      bool other_gcc = gcc && strcmp(gcc + 1, "9") != 0;
      if (other_gcc) {
        size_t len = strlen(r->used);
        snprintf(r->used + len, sizeof r->used - len, " on GCC %s's libstdc++", gcc + 1);
      }
      r->substituted = major < 17 || major > 20 || other_gcc;
      dist = (major < 17 ? 17 - major : major > 20 ? major - 20 : 0) + other_gcc;
    }
    break;
  case SBS_ENV_JAVA: {
    v = sbs_env_has(e, "java") ? sbs_env_version(e, "java") : NULL;
    int m = java_major(v);
    r->substituted = set_used(r, "java", v) && (m < 11 || m > 15);
    dist = m < 11 ? 11 - m : m > 15 ? m - 15 : 0;
    break;
  }
  case SBS_ENV_JULIA:
    v = sbs_env_has(e, "julia") ? sbs_env_version(e, "julia") : NULL;
    r->substituted = set_used(r, "julia", v) && !has_prefix_version(v, "1.5");
    if (r->substituted) dist = atoi(v) == 1 && strchr(v, '.') ? abs(atoi(strchr(v, '.') + 1) - 5) : 100;
    break;
  }
  return dist;
}

void sbs_env_fill_subs(sbs_env *e) {
  if (!e->subs) return;
  for (int k = 0; k < SBS_N_ENV; k++) {
    sbs_env_sub host = {.items = surge_env[k].items, .surge = surge_env[k].surge}, alt = host;
    int dh = candidate(e, k, &host), da = e->alt ? candidate(e->alt, k, &alt) : 0;
    /* the profile when it has the role and the host has not, or when it is
     * closer to SURGE's; a tie stays here */
    bool use_alt = e->alt && alt.used[0] &&
                   (!host.used[0] || (host.substituted && (!alt.substituted || da < dh)));
    sbs_env_sub *r = &e->subs[k];
    size_t jobs = r->jobs;
    *r = use_alt ? alt : host;
    r->jobs = jobs;
    snprintf(r->profile, sizeof r->profile, "%s", use_alt ? e->alt->run_profile : "");
    e->in_alt[k] = use_alt;
  }
}

bool sbs_env_role_in(int k, const sbs_subset *subsets, size_t n) {
  for (size_t i = 0; i < n; i++) {
    sbs_subset s = subsets[i];
    if ((s == SBS_BG && (k == SBS_ENV_BG_PYTHON || k == SBS_ENV_GXX || k == SBS_ENV_JAVA)) ||
        (s == SBS_DR && (k == SBS_ENV_GXX || k == SBS_ENV_CLANG)) || (s == SBS_ML && k == SBS_ENV_JULIA))
      return true;
  }
  return false;
}

void sbs_env_say_choices(const sbs_env *e, const char *cmd, const sbs_subset *subsets, size_t n, FILE *f) {
  for (int k = 0; e->subs && k < SBS_N_ENV; k++) {
    const sbs_env_sub *r = &e->subs[k];
    if (!sbs_env_role_in(k, subsets, n)) continue; /* a group this run does not touch */
    fprintf(f, "%s: %s: %s%s%s%s (SURGE: %s)%s\n", cmd, r->items, r->used[0] ? r->used : "none here",
            r->profile[0] ? " in profile " : "", r->profile,
            !r->profile[0] && r->used[0] ? (e->run_profile[0] ? " in the run's profile" : " on the host") : "", r->surge,
            r->used[0] && !r->substituted ? "" : r->used[0] ? ": substituted" : "");
  }
}

int sbs_env_role_of(sbs_subset s, const sbs_job *j) {
  switch (s) {
  case SBS_BG:
    if (!strcmp(j->group, "python3")) return SBS_ENV_BG_PYTHON;
    if (!strcmp(j->group, "cpp")) return SBS_ENV_GXX;
    if (!strcmp(j->group, "java")) return SBS_ENV_JAVA;
    return -1;
  case SBS_DR: /* the group is the key: "clang++-C++11--O1" */
    if (!strncmp(j->group, "clang++-", 8)) return SBS_ENV_CLANG;
    if (!strncmp(j->group, "g++-", 4)) return SBS_ENV_GXX;
    return -1;
  case SBS_ML: return !strcmp(j->group, "Julia") ? SBS_ENV_JULIA : -1;
  default: return -1;
  }
}

const sbs_env_sub *sbs_env_tag(const sbs_env *e, sbs_subset s, const sbs_job *j) {
  int k = j->request && e->subs ? sbs_env_role_of(s, j) : -1;
  if (k < 0 || !e->subs[k].substituted) return NULL;
  e->subs[k].jobs++;
  return &e->subs[k];
}

int sbs_env_say_substitutions(const sbs_env *e, const char *cmd, bool strict, FILE *f) {
  size_t n = 0;
  for (int k = 0; e->subs && k < SBS_N_ENV; k++) {
    const sbs_env_sub *r = &e->subs[k];
    if (!r->substituted || !r->jobs) continue;
    n++;
    if (strict)
      fprintf(f, "%s: --strict: %s (%zu item(s)) would run on %s%s%s, not SURGE's %s\n", cmd, r->items, r->jobs, r->used,
              r->profile[0] ? " in profile " : "", r->profile, r->surge);
    else
      fprintf(f, "%s: warning: %s (%zu item(s)) run on %s%s%s, not SURGE's %s: their misses are classed toolchain_drift\n",
              cmd, r->items, r->jobs, r->used, r->profile[0] ? " in profile " : "", r->profile, r->surge);
  }
  if (!n) return 0;
  /* how to get SURGE's: the profile (its Python 3.8 is pyenv's, imported when present at create time) */
  bool in_best = !strcmp(e->run_profile, SBS_BEST_PROFILE);
  for (int k = 0; e->subs && k < SBS_N_ENV; k++)
    if (e->subs[k].substituted && e->subs[k].jobs && !strcmp(e->subs[k].profile, SBS_BEST_PROFILE)) in_best = true;
  fprintf(f, "%s: %s%s%s\n", cmd, strict ? "nothing ran; " : "",
          in_best ? "profile " SBS_BEST_PROFILE " lacks these: surgebox profile create --force " SBS_BEST_PROFILE
                  : "SURGE's environment: surgebox profile create " SBS_BEST_PROFILE ", then --profile " SBS_BEST_PROFILE,
          strict ? "" : " (--strict refuses to run instead)");
  return strict ? -1 : 0;
}
