/* How closely regenerated references reproduce the published ones, and why
 * each mismatch happens.
 *
 *   exact       byte equality after SURGE's own post-processing (the adapter
 *               strips where SURGE stripped)
 *   normalized  equality after N1-N5 (+ N6 for whitespace-insensitive refs)
 *   jaccard     SURGE's metric: lower-cased whitespace token sets
 * Mismatch classes: missing_toolchain, timeout, nondeterministic (repeats
 * differ), toolchain_drift (equal once toolchain-controlled text is
 * normalised, or both sides are the same compile failure in another
 * compiler's words, or any miss of an item run on another toolchain than
 * SURGE's: sbs_exec_substitution), other. */
#include "fidelity.h"
#include "eval_metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool looks_like_compile_failure(const char *s) {
  return strstr(s, "Compilation Error:") || strstr(s, ": error:") || strstr(s, ": error ") ||
         strstr(s, "error: ld returned") || strstr(s, "linker command failed");
}

void sbs_compare(const char *published, const char *regenerated, bool whitespace_free, bool compile_failed,
                 sbs_compare_result *out) {
  memset(out, 0, sizeof *out);
  out->jaccard = sbe_jaccard(published ? published : "", regenerated ? regenerated : "");
  if (!published || !regenerated) return;
  out->exact = strcmp(published, regenerated) == 0;
  char *a = sbs_normalize(published, whitespace_free), *b = sbs_normalize(regenerated, whitespace_free);
  out->normalized = out->exact || (a && b && strcmp(a, b) == 0);
  free(a);
  free(b);
  out->drift = out->normalized || (compile_failed && looks_like_compile_failure(published));
}

const char *sbs_classify(const char *status, bool missing, bool deterministic, const sbs_compare_result *c) {
  if (missing) return "missing_toolchain";
  if (c->exact) return NULL;
  if (!deterministic) return "nondeterministic";
  if (status && strcmp(status, "timeout") == 0) return "timeout";
  if (c->drift) return "toolchain_drift";
  return "other";
}

void sbs_exec_substitution(json_object *exec, const sbs_job *j) {
  if (!j->substituted) return;
  json_object *sub = json_object_new_object(), *v;
  json_object_object_add(sub, "used", json_object_new_string(j->substituted->used));
  json_object_object_add(sub, "surge", json_object_new_string(j->substituted->surge));
  json_object_object_add(exec, "substituted", sub);
  bool ran = json_object_object_get_ex(exec, "regenerated", &v) && json_object_get_boolean(v);
  const char *cls = json_object_object_get_ex(exec, "class", &v) && v ? json_object_get_string(v) : NULL;
  if (ran && cls && !strcmp(cls, "other")) /* a miss nothing else explains: the other environment's */
    json_object_object_add(exec, "class", json_object_new_string("toolchain_drift"));
}

/* ---- the report ---- */
static const char *const class_names[] = {"nondeterministic", "toolchain_drift", "missing_toolchain", "timeout",
                                          "memory_limit",     "host_killed",     "unchecked",         "other"};
#define N_CLASSES 8

typedef struct {
  int n, ran, exact, normalized, missing, nondet;
  double jaccard_sum;
  char envs[128];    /* where the items ran: "host", a profile's name, or several joined by '+' */
  char toolchains[256]; /* what ran them: "g++-9 9.3.0", several joined by ", " */
  char absent[128];  /* toolchains missing here, joined by ", " */
  char substituted[256]; /* "python3 3.11.2 (SURGE: Python 3.8)", several joined by "; " */
} counts;

/* Append word to list (words separated by sep) unless it is there already. */
static void add_word(char *list, size_t n, const char *word, const char *sep) {
  size_t wl = strlen(word), sl = strlen(sep);
  for (const char *p = list; *p;) {
    const char *end = strstr(p, sep);
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == wl && !strncmp(p, word, wl)) return;
    p = end ? end + sl : p + len;
  }
  size_t len = strlen(list);
  snprintf(list + len, n - len, "%s%s", len ? sep : "", word);
}

static void add(counts *c, json_object *exec) {
  json_object *v, *pf;
  c->n++;
  if (json_object_object_get_ex(exec, "missing", &v) && v)
    add_word(c->absent, sizeof c->absent, json_object_get_string(v), ", ");
  if (json_object_object_get_ex(exec, "profile", &pf) && json_object_object_get_ex(pf, "name", &v) && v)
    add_word(c->envs, sizeof c->envs, json_object_get_string(v), "+");
  json_object *tc, *name, *ver;
  bool did_run = json_object_object_get_ex(exec, "regenerated", &v) && json_object_get_boolean(v);
  if (did_run && json_object_object_get_ex(exec, "toolchain", &tc) && json_object_object_get_ex(tc, "name", &name) && name) {
    char word[160];
    bool has_ver = json_object_object_get_ex(tc, "version", &ver) && ver;
    snprintf(word, sizeof word, "%s%s%s", json_object_get_string(name), has_ver ? " " : "",
             has_ver ? json_object_get_string(ver) : "");
    add_word(c->toolchains, sizeof c->toolchains, word, ", ");
  }
  json_object *sub, *used, *surge;
  if (json_object_object_get_ex(exec, "substituted", &sub) && json_object_object_get_ex(sub, "used", &used) &&
      json_object_object_get_ex(sub, "surge", &surge)) {
    char word[200];
    snprintf(word, sizeof word, "%s (SURGE: %s)", json_object_get_string(used), json_object_get_string(surge));
    add_word(c->substituted, sizeof c->substituted, word, "; ");
  }
  bool ran = json_object_object_get_ex(exec, "regenerated", &v) && json_object_get_boolean(v);
  if (!ran) {
    if (json_object_object_get_ex(exec, "class", &v) && v && !strcmp(json_object_get_string(v), "missing_toolchain"))
      c->missing++;
    return;
  }
  c->ran++;
  const char *m = json_object_object_get_ex(exec, "matched", &v) ? json_object_get_string(v) : "no";
  if (!strcmp(m, "exact")) c->exact++, c->normalized++;
  else if (!strcmp(m, "normalized")) c->normalized++;
  if (json_object_object_get_ex(exec, "deterministic", &v) && !json_object_get_boolean(v)) c->nondet++;
  if (json_object_object_get_ex(exec, "jaccard", &v)) c->jaccard_sum += json_object_get_double(v);
}

static json_object *counts_json(const counts *c) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "n", json_object_new_int(c->n));
  json_object_object_add(o, "ran", json_object_new_int(c->ran));
  json_object_object_add(o, "exact", json_object_new_int(c->exact));
  json_object_object_add(o, "normalized", json_object_new_int(c->normalized));
  char j[32];
  snprintf(j, sizeof j, "%.4f", c->ran ? c->jaccard_sum / c->ran : 0.0);
  json_object_object_add(o, "jaccard_mean", json_object_new_double_s(strtod(j, NULL), j));
  json_object_object_add(o, "missing_toolchain", json_object_new_int(c->missing));
  json_object_object_add(o, "nondeterministic", json_object_new_int(c->nondet));
  /* which environment the items ran in (null: none ran) */
  json_object_object_add(o, "environment", c->envs[0] ? json_object_new_string(c->envs) : NULL);
  /* what ran the items, with versions (null: none ran) */
  json_object_object_add(o, "toolchains", c->toolchains[0] ? json_object_new_string(c->toolchains) : NULL);
  /* the toolchains used instead of SURGE's (null: none) */
  json_object_object_add(o, "substituted", c->substituted[0] ? json_object_new_string(c->substituted) : NULL);
  return o;
}

json_object *sbs_summary(json_object *const *items_by_subset, const sbs_subset *subsets, size_t n_subsets) {
  json_object *root = json_object_new_object();
  for (size_t s = 0; s < n_subsets; s++) {
    json_object *items = items_by_subset[s];
    counts all = {0};
    json_object *by = json_object_new_object();
    json_object *classes = json_object_new_object();
    for (int k = 0; k < N_CLASSES; k++) json_object_object_add(classes, class_names[k], json_object_new_array());
    size_t n = items ? json_object_array_length(items) : 0;
    /* groups in first-seen order */
    const char **gnames = calloc(n + 1, sizeof *gnames);
    counts *gcounts = calloc(n + 1, sizeof *gcounts);
    size_t ng = 0, not_run = 0;
    for (size_t i = 0; i < n; i++) {
      json_object *it = json_object_array_get_idx(items, i), *exec, *v;
      if (!json_object_object_get_ex(it, "exec", &exec)) { /* never ran here (eval_regen.c's rule) */
        not_run++;
        continue;
      }
      add(&all, exec);
      const char *g = json_object_object_get_ex(exec, "group", &v) ? json_object_get_string(v) : "?";
      size_t k = 0;
      while (k < ng && strcmp(gnames[k], g)) k++;
      if (k == ng) gnames[ng++] = g;
      add(&gcounts[k], exec);
      if (json_object_object_get_ex(exec, "class", &v) && v) {
        json_object *arr = json_object_object_get(classes, json_object_get_string(v));
        if (arr) json_object_array_add(arr, json_object_new_int((int)i));
      }
    }
    for (size_t k = 0; k < ng; k++) json_object_object_add(by, gnames[k], counts_json(&gcounts[k]));
    json_object *o = counts_json(&all);
    json_object_object_add(o, "by", by);
    /* items of a regen output with no record: outside --only, or left by an
     * interrupted run (never in n, never scored: said) */
    if (all.n && not_run) json_object_object_add(o, "not_run", json_object_new_int((int)not_run));
    if (all.missing) { /* said once, not as a failure per item */
      json_object *nr = json_object_new_object();
      char why[192];
      snprintf(why, sizeof why, "toolchain absent here: %s", all.absent[0] ? all.absent : "?");
      json_object_object_add(nr, "count", json_object_new_int(all.missing));
      json_object_object_add(nr, "reason", json_object_new_string(why));
      json_object_object_add(nr, "all", json_object_new_boolean(all.missing == all.n));
      json_object_object_add(o, "not_regenerated", nr);
      if (all.missing == all.n) /* the whole subset: no list of n indices */
        json_object_object_add(classes, "missing_toolchain", json_object_new_array());
    }
    json_object_object_add(o, "mismatches", classes);
    json_object_object_add(root, sbs_subset_name(subsets[s]), o);
    free(gnames);
    free(gcounts);
  }
  return root;
}

/* "host", or "host; python3 3.11.2 (SURGE: Python 3.8)" when substituted */
static const char *env_of(json_object *o, char *buf, size_t n) {
  json_object *e = json_object_object_get(o, "environment"), *sub = json_object_object_get(o, "substituted");
  snprintf(buf, n, "%s%s%s", e ? json_object_get_string(e) : "-", sub ? "; " : "", sub ? json_object_get_string(sub) : "");
  return buf;
}
#define ENV(o) env_of(o, envbuf, sizeof envbuf)

/* One row of the table; where nothing ran, "-" for the rates and the
 * Jaccard mean (not 0.0%: nothing was compared). */
static void print_row(FILE *f, const char *indent, int width, const char *name, json_object *o, const char *env) {
#define G(k) json_object_get_int(json_object_object_get(o, k))
  int ran = G("ran");
  char ex[16] = "     -", nm[16] = "     -", jac[16] = "       -";
  if (ran) {
    snprintf(ex, sizeof ex, "%5.1f%%", 100.0 * G("exact") / ran);
    snprintf(nm, sizeof nm, "%5.1f%%", 100.0 * G("normalized") / ran);
    snprintf(jac, sizeof jac, "%8.3f", json_object_get_double(json_object_object_get(o, "jaccard_mean")));
  }
  fprintf(f, "%s%-*.*s %5d %5d %6d %6s %6d %6s %8s %8d %8d  %s\n", indent, width, width, name, G("n"), ran, G("exact"), ex,
          G("normalized"), nm, jac, G("missing_toolchain"), G("nondeterministic"), env);
#undef G
}

/* Group names in a stable order: numbers inside compared as numbers
 * ("g++-C++11--O1" before "g++-C++17--O0"), not by first appearance. */
static int group_cmp(const void *a, const void *b) { return strverscmp(*(const char *const *)a, *(const char *const *)b); }

size_t sbs_sorted_groups(json_object *by, const char **names, size_t max) {
  size_t n = 0;
  json_object_object_foreach(by, g, go) {
    (void)go;
    if (n < max) names[n++] = g;
  }
  qsort(names, n, sizeof *names, group_cmp);
  return n;
}

void sbs_print_table(json_object *summary, FILE *f) {
  char envbuf[512];
  fprintf(f, "\n%-22s %5s %5s %13s %13s %8s %8s %8s  %s\n", "subset / group", "n", "ran", "exact", "normalized",
          "jaccard", "missing", "nondet", "environment");
  json_object_object_foreach(summary, subset, o) {
    json_object *by = NULL;
    json_object_object_get_ex(o, "by", &by);
    print_row(f, "", 22, subset, o, ENV(o));
    const char *names[64];
    size_t groups = json_object_object_length(by);
    if (groups > 1 && groups <= 48) {
      sbs_sorted_groups(by, names, 64);
      for (size_t i = 0; i < groups; i++) {
        json_object *go = json_object_object_get(by, names[i]);
        print_row(f, "  ", 20, names[i], go, ENV(go));
      }
    }
  }
  bool any = false;
  json_object_object_foreach(summary, subset1, o1) {
    json_object *nr = json_object_object_get(o1, "not_regenerated");
    if (!nr) continue;
    if (!any) fprintf(f, "\nnot regenerated:\n");
    any = true;
    json_object *mm = json_object_object_get(json_object_object_get(o1, "mismatches"), "missing_toolchain");
    size_t n = json_object_array_length(mm);
    int count = json_object_get_int(json_object_object_get(nr, "count"));
    fprintf(f, "  %-4s %d %s%s (%s)%s", subset1, count, count == 1 ? "item" : "items",
            json_object_get_boolean(json_object_object_get(nr, "all")) ? ", the whole subset" : "",
            json_object_get_string(json_object_object_get(nr, "reason")), n ? ": " : "");
    for (size_t i = 0; i < n && i < 40; i++) fprintf(f, "%s%d", i ? "," : "", json_object_get_int(json_object_array_get_idx(mm, i)));
    fprintf(f, "%s\n", n > 40 ? ",..." : "");
  }
  json_object_object_foreach(summary, subset3, o3) {
    json_object *nr = json_object_object_get(o3, "not_run");
    if (nr)
      fprintf(f, "  %-4s %d %s not run here (outside --only, or left by an interrupted run): not counted above, "
                 "never scored\n", subset3, json_object_get_int(nr), json_object_get_int(nr) == 1 ? "item" : "items");
  }
  bool heading = false; /* said only when a class has items */
  json_object_object_foreach(summary, subset2, o2) {
    json_object *mm = json_object_object_get(o2, "mismatches");
    json_object_object_foreach(mm, cls, arr) {
      size_t n = json_object_array_length(arr);
      if (!n || !strcmp(cls, "missing_toolchain")) continue; /* listed above as not regenerated */
      if (!heading) fprintf(f, "\nmismatches by class (item indices):\n");
      heading = true;
      fprintf(f, "  %-4s %-18s %3zu: ", subset2, cls, n);
      for (size_t i = 0; i < n && i < 40; i++) fprintf(f, "%s%d", i ? "," : "", json_object_get_int(json_object_array_get_idx(arr, i)));
      fprintf(f, "%s\n", n > 40 ? ",..." : "");
    }
  }
  if (!heading) fprintf(f, "\nmismatches by class: none\n");
}
