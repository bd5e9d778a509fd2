/* Aggregation in the shape of the SURGE paper's Table 2 (SURGE's tab.py),
 * per-item JSON Lines, and the stderr coverage report. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval_run.h"
#include "eval_unicode.h"

#define NCOLS 15

/* Table columns; lang NULL = whole subset; "*" = ML's "Others". */
static const struct {
  const char *label, *head, *sub;
  sbe_category cat;
  const char *lang;
} cols[NCOLS] = {
    {"ML_CPP", "ML", "CPP", SBE_CAT_ML, "cpp"},       {"ML_Rust", "", "Rust", SBE_CAT_ML, "rust"},
    {"ML_Python", "", "Python", SBE_CAT_ML, "python"}, {"ML_Julia", "", "Julia", SBE_CAT_ML, "julia"},
    {"ML_Java", "", "Java", SBE_CAT_ML, "java"},       {"ML_Others", "", "Others", SBE_CAT_ML, "*"},
    {"CL", "CL", "", SBE_CAT_CL, NULL},                {"RL", "RL", "", SBE_CAT_RL, NULL},
    {"SC", "SC", "", SBE_CAT_SC, NULL},                {"TC", "TC", "", SBE_CAT_TC, NULL},
    {"BG_CPP", "BG", "CPP", SBE_CAT_BG, "cpp"},       {"BG_Java", "", "Java", SBE_CAT_BG, "java"},
    {"BG_Python", "", "Python", SBE_CAT_BG, "python3"}, {"DR", "DR", "", SBE_CAT_DR, NULL},
    {"FL", "FL", "", SBE_CAT_FL, NULL},
};
/* SURGE's order when averaging: ML columns, BG columns, then CL RL SC TC DR FL. */
static const int avg_order[NCOLS] = {0, 1, 2, 3, 4, 5, 10, 11, 12, 6, 7, 8, 9, 13, 14};

void sbe_fmt_double(char *buf, size_t n, double d) {
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, n, "%.*g", prec, d);
    if (strtod(buf, NULL) == d) return;
  }
}

json_object *sbe_json_num(double d) {
  char buf[40];
  sbe_fmt_double(buf, sizeof buf, d);
  return json_object_new_double_s(d, buf);
}

const char *sbe_feature_str(json_object *item, const char *key) {
  json_object *f, *v;
  if (!json_object_object_get_ex(item, "custom_features", &f) || !json_object_object_get_ex(f, key, &v) ||
      !json_object_is_type(v, json_type_string))
    return NULL;
  return json_object_get_string(v);
}

/* Whether reference item (c, i) belongs to column k (SURGE's language buckets). */
static int in_column(const sbe_run *run, int k, sbe_category c, size_t i) {
  if (cols[k].cat != c) return 0;
  if (!cols[k].lang) return 1;
  const char *lang = sbe_feature_str(run->refs.items[c][i].item, "language");
  if (!strcmp(cols[k].lang, "*")) {
    for (int j = 0; j < NCOLS; j++)
      if (cols[j].cat == SBE_CAT_ML && strcmp(cols[j].lang, "*") && lang && !strcasecmp(lang, cols[j].lang))
        return 0;
    return 1; /* C, C# and anything else */
  }
  return lang && !strcasecmp(lang, cols[k].lang);
}

typedef struct {
  double score[NCOLS]; /* mean x 100, 0 when empty (calc_avg) */
  size_t count[NCOLS]; /* 0: no prediction in the group: "-", null in JSON */
  double avg;
  int groups;          /* columns with a prediction (0: no Avg. either) */
} row;

static row compute_row(const sbe_run *run, const sbe_model *m) {
  row r;
  memset(&r, 0, sizeof r);
  for (int k = 0; k < NCOLS; k++) {
    sbe_category c = cols[k].cat;
    double sum = 0;
    for (size_t i = 0; i < run->refs.count[c]; i++)
      if (m->present[c][i] && in_column(run, k, c, i)) sum += m->score[c][i], r.count[k]++;
    r.score[k] = r.count[k] ? sum / (double)r.count[k] * 100 : 0;
    r.groups += r.count[k] != 0;
  }
  double sum = 0;
  size_t n = 0;
  for (int k = 0; k < NCOLS; k++)
    if (r.score[avg_order[k]] != 0) sum += r.score[avg_order[k]], n++; /* groups at exactly 0 are left out */
  r.avg = n ? sum / (double)n : 0;
  return r;
}

int sbe_name_width(const sbe_run *run) {
  int w = 5;
  for (size_t i = 0; i < run->nmodels; i++)
    if ((int)strlen(run->models[i].name) > w) w = (int)strlen(run->models[i].name);
  return w;
}

/* "model: nan_constant 1, no_answer 2" for each model with any flag. */
static void print_flags(const sbe_run *run, FILE *out) {
  for (size_t i = 0; i < run->nmodels; i++) {
    const sbe_model *m = &run->models[i];
    const char *sep = "";
    for (int k = 0; k < 7; k++) {
      if (!m->flags[k]) continue;
      if (!*sep) fprintf(out, "%s:", m->name);
      fprintf(out, "%s %s %zu", sep, sbe_flag_names[k], m->flags[k]);
      sep = ",";
    }
    if (*sep) fprintf(out, "\n");
  }
}

void sbe_print_table(const sbe_run *run, FILE *out) {
  int w = sbe_name_width(run);
  fprintf(out, "SURGE scores: mean x 100 per group; Avg. leaves out groups at exactly 0 (SURGE's tab.py)\n");
  if (run->options & SBE_SCORE_FL_EXTRACT)
    fprintf(out, "FL: --fl-extract (SURGE's extract_code() applied to predictions; not the published FL scoring)\n");
  fprintf(out, "%-*s", w, "Model");
  for (int k = 0; k < NCOLS; k++) fprintf(out, cols[k].sub[0] ? " %-7s" : " %7s", cols[k].head);
  fprintf(out, " %7s\n%-*s", "", w, "");
  for (int k = 0; k < NCOLS; k++) fprintf(out, " %7s", cols[k].sub);
  fprintf(out, " %7s\n", "Avg.");
  for (size_t i = 0; i < run->nmodels; i++) {
    row r = compute_row(run, &run->models[i]);
    fprintf(out, "%-*s", w, run->models[i].name);
    for (int k = 0; k < NCOLS; k++) { /* "-": no prediction in the group (null in --json) */
      if (r.count[k])
        fprintf(out, " %7.2f", r.score[k]);
      else
        fprintf(out, " %7s", "-");
    }
    if (r.groups)
      fprintf(out, " %7.2f\n", r.avg);
    else
      fprintf(out, " %7s\n", "-");
  }
  if (run->nmodels == 0) fprintf(out, "(no predictions scored)\n");
  print_flags(run, out);
  sbe_print_excluded(run, "", out);
}

/* items without a prediction (those not regenerated are counted apart) */
static size_t missing_count(const sbe_run *run, const sbe_model *m, sbe_category c) {
  size_t n = 0;
  for (size_t i = 0; i < run->refs.count[c]; i++) n += !m->present[c][i] && !run->refs.items[c][i].not_regenerated;
  return n;
}

json_object *sbe_json(const sbe_run *run, const char *by) {
  json_object *root = json_object_new_object(), *columns = json_object_new_array(), *models = json_object_new_array();
  json_object_object_add(root, "fl_extract", json_object_new_boolean((run->options & SBE_SCORE_FL_EXTRACT) != 0));
  for (int k = 0; k < NCOLS; k++) json_object_array_add(columns, json_object_new_string(cols[k].label));
  json_object_object_add(root, "columns", columns);
  for (size_t i = 0; i < run->nmodels; i++) {
    const sbe_model *m = &run->models[i];
    row r = compute_row(run, m);
    json_object *mo = json_object_new_object(), *sc = json_object_new_object(), *cn = json_object_new_object(),
                *fl = json_object_new_object(), *mi = json_object_new_object();
    for (int k = 0; k < NCOLS; k++) {
      json_object_object_add(sc, cols[k].label, r.count[k] ? sbe_json_num(r.score[k]) : NULL);
      json_object_object_add(cn, cols[k].label, json_object_new_int64((int64_t)r.count[k]));
    }
    for (int k = 0; k < 7; k++) json_object_object_add(fl, sbe_flag_names[k], json_object_new_int64((int64_t)m->flags[k]));
    for (int c = 1; c < SBE_CAT_COUNT; c++)
      json_object_object_add(mi, sbe_category_subset((sbe_category)c),
                             json_object_new_int64((int64_t)missing_count(run, m, (sbe_category)c)));
    json_object_object_add(mo, "model", json_object_new_string(m->name));
    json_object_object_add(mo, "scores", sc);
    json_object_object_add(mo, "counts", cn);
    json_object_object_add(mo, "avg", r.groups ? sbe_json_num(r.avg) : NULL);
    json_object_object_add(mo, "scored", json_object_new_int64((int64_t)m->nscored));
    json_object_object_add(mo, "missing", mi);
    json_object_object_add(mo, "flags", fl);
    json_object_array_add(models, mo);
  }
  json_object_object_add(root, "models", models);
  const sbe_pred_stats *st = &run->stats;
  json_object *un = json_object_new_object();
  json_object_object_add(un, "unknown_subset", json_object_new_int64((int64_t)st->unknown_subset));
  json_object *absent = json_object_new_object(); /* {"cl": n}: a subset the data directory has no items of */
  for (int c = 0; c < SBE_CAT_COUNT; c++)
    if (st->subset_absent_by[c])
      json_object_object_add(absent, sbe_category_subset((sbe_category)c),
                             json_object_new_int64((int64_t)st->subset_absent_by[c]));
  json_object_object_add(un, "subset_not_in_data", absent);
  json_object_object_add(un, "bad_index", json_object_new_int64((int64_t)st->bad_index));
  json_object_object_add(un, "question_not_found", json_object_new_int64((int64_t)st->question_not_found));
  json_object_object_add(un, "question_ambiguous", json_object_new_int64((int64_t)st->question_ambiguous));
  json_object_object_add(un, "malformed", json_object_new_int64((int64_t)st->malformed));
  json_object_object_add(un, "duplicates", json_object_new_int64((int64_t)st->duplicates));
  json_object_object_add(root, "unmatched", un);
  json_object_object_add(root, "excluded", sbe_excluded_json(run));
  if (by) json_object_object_add(root, "by", sbe_by_json(run, by));
  return root;
}

void sbe_print_json(const sbe_run *run, const char *by, FILE *out) {
  json_object *root = sbe_json(run, by);
  fprintf(out, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(root);
}

int sbe_write_items(const sbe_run *run, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return -1;
  }
  for (size_t i = 0; i < run->nmodels; i++) {
    const sbe_model *m = &run->models[i];
    json_object *name = json_object_new_string(m->name);
    const char *qname = json_object_to_json_string_ext(name, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    for (int c = 1; c < SBE_CAT_COUNT; c++) {
      for (size_t k = 0; k < run->refs.count[c]; k++) {
        if (!m->present[c][k]) continue;
        char num[40];
        sbe_fmt_double(num, sizeof num, m->score[c][k]);
        fprintf(f, "{\"subset\": \"%s\", \"index\": %zu, \"model\": %s, \"score\": %s}\n",
                sbe_category_subset((sbe_category)c), k, qname, num);
      }
    }
    json_object_put(name);
  }
  int err = ferror(f);
  if (fclose(f) != 0 || err) {
    fprintf(stderr, "eval: %s: write error\n", path);
    return -1;
  }
  return 0;
}

int sbe_strict_status(const sbe_run *run, const char *prog, FILE *err) {
  const sbe_pred_stats *st = &run->stats;
  size_t unmatched = st->unknown_subset + st->subset_absent + st->bad_index + st->question_not_found + st->question_ambiguous +
                     st->malformed;
  size_t dropped = unmatched + st->duplicates + run->excluded_total, scored = 0;
  for (size_t i = 0; i < run->nmodels; i++) scored += run->models[i].nscored;
  if (!dropped && scored) return 0;
  if (!scored)
    fprintf(err, "%s --strict: nothing was scored (%zu prediction(s) not matched to a reference item): exit 2\n", prog,
            dropped);
  else
    fprintf(err,
            "%s --strict: %zu prediction(s) not scored (%zu unmatched or malformed, %zu duplicate, %zu excluded), %zu "
            "scored: exit 2\n",
            prog, dropped, unmatched, st->duplicates, run->excluded_total, scored);
  return 2;
}

void sbe_report_missing(const sbe_run *run, FILE *err) {
  const sbe_pred_stats *st = &run->stats;
  size_t unmatched = st->unknown_subset + st->subset_absent + st->bad_index + st->question_not_found + st->question_ambiguous +
                     st->malformed;
  if (st->subset_absent) { /* one line, not one per prediction */
    fprintf(err, "eval: %zu prediction(s) for subsets the data directory has no items of, not scored (", st->subset_absent);
    char names[64] = "";
    for (int c = 0, k = 0; c < SBE_CAT_COUNT; c++)
      if (st->subset_absent_by[c]) {
        fprintf(err, "%s%s %zu", k ? ", " : "", sbe_category_subset((sbe_category)c), st->subset_absent_by[c]);
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k++ ? "," : "",
                 sbe_category_subset((sbe_category)c));
      }
    fprintf(err, "): regen --subset %s into it to score them\n", names);
  }
  if (unmatched > st->subset_absent)
    fprintf(err,
            "eval: %zu prediction(s) not scored: %zu unknown subset, %zu index out of range, %zu question not found, "
            "%zu ambiguous question, %zu malformed\n",
            unmatched - st->subset_absent, st->unknown_subset, st->bad_index, st->question_not_found,
            st->question_ambiguous, st->malformed);
  if (st->duplicates) fprintf(err, "eval: %zu duplicate prediction(s) ignored (the first one counts)\n", st->duplicates);
  if (st->non_text_keys) fprintf(err, "eval: %zu extra key(s) holding no text ignored\n", st->non_text_keys);
  sbe_print_excluded(run, "eval: ", err);
  for (size_t i = 0; i < run->nmodels; i++) {
    const sbe_model *m = &run->models[i];
    size_t total = 0;
    for (int c = 1; c < SBE_CAT_COUNT; c++) total += missing_count(run, m, (sbe_category)c);
    if (!total) continue;
    fprintf(err, "eval: model %s: %zu reference item(s) without a prediction (", m->name, total);
    int first = 1;
    for (int c = 1; c < SBE_CAT_COUNT; c++) {
      size_t n = missing_count(run, m, (sbe_category)c);
      if (!n) continue;
      fprintf(err, "%s%s %zu/%zu", first ? "" : ", ", sbe_category_subset((sbe_category)c), n, run->refs.count[c]);
      first = 0;
    }
    fprintf(err, "); means are over the items present, as SURGE's tab.py does\n");
  }
  for (size_t i = 0; i < run->nmodels; i++) {
    const sbe_model *m = &run->models[i];
    if (m->flags[3])
      fprintf(err, "eval: model %s: %zu sorting item(s) with a constant list (NaN in SURGE) scored 0\n", m->name,
              m->flags[3]);
    if (m->flags[4]) fprintf(err, "eval: model %s: %zu other NaN score(s) scored 0\n", m->name, m->flags[4]);
  }
}
