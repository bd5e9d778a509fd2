/* surgebox report: what the page is made of, read from OUT. The figures
 * are regen's own (sbs_regen_summary over the items, the function regen
 * --summary writes with), never derived a second time here. */
#include "protocol.h"
#include "report.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* a verify --json document (surge) or a CRUXEval scored file: 0, or 1 said */
static int load_verify(sbrp_report *r, const char *path) {
  if (r->n_verify == SBRP_MAX_VERIFY) {
    fprintf(stderr, "report: more than %d verify files; give fewer\n", SBRP_MAX_VERIFY);
    return 1;
  }
  json_object *doc = json_object_from_file(path);
  if (!doc || !json_object_is_type(doc, json_type_object) ||
      !(json_object_object_get_ex(doc, "models", NULL) || json_object_object_get_ex(doc, "pass_at_1", NULL))) {
    fprintf(stderr,
            "report: %s is neither a `verify --benchmark surge --json` document nor a CRUXEval scored file "
            "(verify --benchmark cruxeval --out FILE)\n", path);
    json_object_put(doc);
    return 1;
  }
  sbrp_verify *v = &r->verify[r->n_verify++];
  snprintf(v->path, sizeof v->path, "%s", path);
  v->doc = doc;
  return 0;
}

/* OUT/verify*.json, in name order */
static int verify_in_dir(sbrp_report *r, const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  char *names[SBRP_MAX_VERIFY + 1];
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n <= SBRP_MAX_VERIFY) {
    size_t len = strlen(e->d_name);
    if (strncmp(e->d_name, "verify", 6) || len < 11 || strcmp(e->d_name + len - 5, ".json")) continue;
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, cmp_str);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    if (!rc) rc = load_verify(r, path);
    free(names[i]);
  }
  return rc;
}

int sbrp_gather(sbrp_report *r, const sbrp_opts *o) {
  memset(r, 0, sizeof *r);
  r->o = o;
  struct stat st;
  if (stat(o->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "report: %s is not a directory: give the --out DIR of surgebox regen (or verify --benchmark surge)\n", o->dir);
    return 1;
  }
  for (int s = 0; s < SBS_N_SUBSETS; s++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", o->dir, sbs_subset_name((sbs_subset)s));
    if (access(path, F_OK) != 0) continue;
    char why[600] = "not a list";
    json_object *items = sbp_json_file(path, why, sizeof why);
    if (!items || !json_object_is_type(items, json_type_array)) {
      fprintf(stderr, "report: %s: %s (a regenerated subset is a JSON list)\n", path, why);
      json_object_put(items);
      return 1;
    }
    r->subsets[r->n] = (sbs_subset)s;
    r->items[r->n] = items;
    if (o->data) {
      snprintf(path, sizeof path, "%s/%s.json", o->data, sbs_subset_name((sbs_subset)s));
      r->published[r->n] = json_object_from_file(path);
      if (!r->published[r->n] || !json_object_is_type(r->published[r->n], json_type_array) ||
          json_object_array_length(r->published[r->n]) != json_object_array_length(items)) {
        fprintf(stderr, "report: %s is not the published subset of %s/%s.json (--data must be SURGE's data directory)\n",
                path, o->dir, sbs_subset_name((sbs_subset)s));
        return 1;
      }
    }
    r->n++;
  }
  if (!r->n) {
    fprintf(stderr, "report: %s holds no ml.json ... fl.json: run surgebox regen --out %s first\n", o->dir, o->dir);
    return 1;
  }
  /* SURGE's published data (no item carries regen's "exec" record) is no
   * regen output: a page of it would show "n 0" everywhere, and be written
   * into the dataset's own directory */
  bool regenerated = false;
  for (size_t k = 0; k < r->n && !regenerated; k++)
    for (size_t i = 0; i < json_object_array_length(r->items[k]) && !regenerated; i++)
      regenerated = json_object_object_get_ex(json_object_array_get_idx(r->items[k], i), "exec", NULL);
  if (!regenerated) {
    fprintf(stderr, "report: %s holds no regenerated item (no \"exec\" record: SURGE's published data?): "
                    "give the --out DIR of surgebox regen\n", o->dir);
    return 1;
  }
  r->summary = sbs_regen_summary(r->items, r->subsets, r->n, &r->failed);
  char path[4200];
  snprintf(path, sizeof path, "%s/summary.json", o->dir);
  r->summary_file = access(path, F_OK) == 0;
  if (verify_in_dir(r, o->dir)) return 1;
  for (size_t i = 0; i < o->n_verify; i++)
    if (load_verify(r, o->verify[i])) return 1;
  return 0;
}

void sbrp_free(sbrp_report *r) {
  for (size_t k = 0; k < r->n; k++) {
    json_object_put(r->items[k]);
    json_object_put(r->published[k]);
  }
  for (size_t i = 0; i < r->n_verify; i++) json_object_put(r->verify[i].doc);
  json_object_put(r->summary);
  memset(r, 0, sizeof *r);
}

const char *sbrp_published(const sbrp_report *r, size_t k, size_t i, size_t *len) {
  json_object *v = NULL;
  json_object *it = json_object_array_get_idx(r->items[k], i);
  if (!json_object_object_get_ex(it, "gt_published", &v) || !v) {
    v = NULL;
    if (r->published[k]) json_object_object_get_ex(json_object_array_get_idx(r->published[k], i), "gt", &v);
  }
  if (!v || !json_object_is_type(v, json_type_string)) return NULL;
  *len = (size_t)json_object_get_string_len(v);
  return json_object_get_string(v);
}
