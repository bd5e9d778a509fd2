/* --by breakdowns: ML/CL/BG by language, CL by difficulty, DR by compiler,
 * standard and optimisation (from custom_features.key, e.g. g++-C++11--O2). */
#include <stdlib.h>
#include <string.h>

#include "eval_run.h"
#include "eval_unicode.h"

/* The key of an item within a section. */
typedef void (*key_fn)(json_object *item, const char *part, char *buf, size_t n);

static void key_language(json_object *item, const char *part, char *buf, size_t n) {
  (void)part;
  const char *l = sbe_feature_str(item, "language");
  snprintf(buf, n, "%s", l ? l : "(none)");
}

static void key_difficulty(json_object *item, const char *part, char *buf, size_t n) {
  (void)part;
  json_object *f, *v;
  if (json_object_object_get_ex(item, "custom_features", &f) && json_object_object_get_ex(f, "difficulty", &v))
    snprintf(buf, n, "%s", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
  else
    snprintf(buf, n, "(none)");
}

/* custom_features.key "g++-C++11--O2" -> compiler g++, standard C++11, optimisation O2. */
static void key_config(json_object *item, const char *part, char *buf, size_t n) {
  const char *k = sbe_feature_str(item, "key");
  const char *dd = k ? strstr(k, "--") : NULL;
  if (!dd) {
    snprintf(buf, n, "(none)");
    return;
  }
  if (!strcmp(part, "optimisation")) {
    snprintf(buf, n, "%s", dd + 2);
    return;
  }
  const char *dash = dd;
  while (dash > k && dash[-1] != '-') dash--;
  if (dash == k) {
    snprintf(buf, n, "(none)");
  } else if (!strcmp(part, "compiler")) {
    snprintf(buf, n, "%.*s", (int)(dash - 1 - k), k);
  } else {
    snprintf(buf, n, "%.*s", (int)(dd - dash), dash);
  }
}

typedef struct {
  const char *by, *title, *part;
  sbe_category cat;
  key_fn key;
} section;

static const section sections[] = {
    {"language", "ML by language", "", SBE_CAT_ML, key_language},
    {"language", "CL by language", "", SBE_CAT_CL, key_language},
    {"language", "BG by language", "", SBE_CAT_BG, key_language},
    {"difficulty", "CL by difficulty", "", SBE_CAT_CL, key_difficulty},
    {"config", "DR by compiler", "compiler", SBE_CAT_DR, key_config},
    {"config", "DR by standard", "standard", SBE_CAT_DR, key_config},
    {"config", "DR by optimisation", "optimisation", SBE_CAT_DR, key_config},
};

typedef struct {
  char **keys;
  size_t nkeys;
  size_t *item_key; /* per reference item of the subset */
} grouping;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static grouping group_items(const sbe_run *run, const section *s) {
  grouping g = {0};
  size_t n = run->refs.count[s->cat];
  g.item_key = sbe_xmalloc((n ? n : 1) * sizeof *g.item_key);
  char buf[256];
  for (size_t i = 0; i < n; i++) {
    s->key(run->refs.items[s->cat][i].item, s->part, buf, sizeof buf);
    size_t k = 0;
    while (k < g.nkeys && strcmp(g.keys[k], buf)) k++;
    if (k == g.nkeys) {
      g.keys = sbe_xrealloc(g.keys, (g.nkeys + 1) * sizeof *g.keys);
      g.keys[g.nkeys++] = sbe_xstrndup(buf, strlen(buf));
    }
  }
  qsort(g.keys, g.nkeys, sizeof *g.keys, cmp_str);
  for (size_t i = 0; i < n; i++) {
    s->key(run->refs.items[s->cat][i].item, s->part, buf, sizeof buf);
    char *key = buf;
    g.item_key[i] = (size_t)((char **)bsearch(&key, g.keys, g.nkeys, sizeof *g.keys, cmp_str) - g.keys);
  }
  return g;
}

static void grouping_free(grouping *g) {
  for (size_t k = 0; k < g->nkeys; k++) free(g->keys[k]);
  free(g->keys);
  free(g->item_key);
}

/* Mean x 100 of model m's scores in group k; *count gets the number of items. */
static double group_score(const sbe_run *run, const section *s, const grouping *g, const sbe_model *m, size_t k,
                          size_t *count) {
  double sum = 0;
  size_t n = 0;
  for (size_t i = 0; i < run->refs.count[s->cat]; i++)
    if (g->item_key[i] == k && m->present[s->cat][i]) sum += m->score[s->cat][i], n++;
  *count = n;
  return n ? sum / (double)n * 100 : 0;
}

void sbe_print_by(const sbe_run *run, const char *by, FILE *out) {
  int w = sbe_name_width(run);
  for (size_t si = 0; si < sizeof sections / sizeof *sections; si++) {
    const section *s = &sections[si];
    if (strcmp(s->by, by) != 0 || run->refs.count[s->cat] == 0) continue;
    grouping g = group_items(run, s);
    fprintf(out, "\n%s\n%-*s", s->title, w, "Model");
    for (size_t k = 0; k < g.nkeys; k++) fprintf(out, " %8s", g.keys[k]);
    fprintf(out, "\n");
    for (size_t i = 0; i < run->nmodels; i++) {
      fprintf(out, "%-*s", w, run->models[i].name);
      for (size_t k = 0; k < g.nkeys; k++) {
        size_t n;
        double v = group_score(run, s, &g, &run->models[i], k, &n);
        if (n) /* "-": no prediction in the group (null in --json) */
          fprintf(out, " %8.2f", v);
        else
          fprintf(out, " %8s", "-");
      }
      fprintf(out, "\n");
    }
    grouping_free(&g);
  }
}

json_object *sbe_by_json(const sbe_run *run, const char *by) {
  json_object *arr = json_object_new_array();
  for (size_t si = 0; si < sizeof sections / sizeof *sections; si++) {
    const section *s = &sections[si];
    if (strcmp(s->by, by) != 0 || run->refs.count[s->cat] == 0) continue;
    grouping g = group_items(run, s);
    json_object *sec = json_object_new_object(), *groups = json_object_new_array(), *models = json_object_new_array();
    json_object_object_add(sec, "title", json_object_new_string(s->title));
    for (size_t k = 0; k < g.nkeys; k++) json_object_array_add(groups, json_object_new_string(g.keys[k]));
    json_object_object_add(sec, "groups", groups);
    for (size_t i = 0; i < run->nmodels; i++) {
      json_object *mo = json_object_new_object(), *sc = json_object_new_object(), *cn = json_object_new_object();
      for (size_t k = 0; k < g.nkeys; k++) {
        size_t n;
        double v = group_score(run, s, &g, &run->models[i], k, &n);
        json_object_object_add(sc, g.keys[k], n ? sbe_json_num(v) : NULL);
        json_object_object_add(cn, g.keys[k], json_object_new_int64((int64_t)n));
      }
      json_object_object_add(mo, "model", json_object_new_string(run->models[i].name));
      json_object_object_add(mo, "scores", sc);
      json_object_object_add(mo, "counts", cn);
      json_object_array_add(models, mo);
    }
    json_object_object_add(sec, "models", models);
    json_object_array_add(arr, sec);
    grouping_free(&g);
  }
  return arr;
}

