/* surgebox regen --shard: which SURGE items are this shard's, and the
 * shard's manifest (<out>/shard.json) that `surgebox merge` checks.
 *
 * An item's key hashes its subset's name and its JSON text; its expected
 * cost is the subset's typical cost per item on this kind of machine
 * (bench/RESULTS.md: DR 0.2 s, BG 0.4 s, compiles ~0.5 s, a Python script
 * 0.15 s) plus the time SURGE recorded for it where the data has one (TC's
 * tsp.py items: "143.9115 seconds" for 12 cities; SC's heat_eq_x: seconds
 * as a number). */
#include "regen_shard.h"

#include "adapt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double sbs_surge_item_cost(sbs_subset s, json_object *item) {
  static const double typical[SBS_N_SUBSETS] = {
      [SBS_ML] = 0.5, [SBS_CL] = 0.5, [SBS_RL] = 1.0, [SBS_SC] = 0.15,
      [SBS_TC] = 0.15, [SBS_BG] = 0.4, [SBS_DR] = 0.2, [SBS_FL] = 0.5};
  double cost = typical[s];
  json_object *cf, *t;
  if (json_object_object_get_ex(item, "custom_features", &cf) && json_object_object_get_ex(cf, "time", &t) && t) {
    double v = json_object_is_type(t, json_type_string) ? strtod(json_object_get_string(t), NULL) : json_object_get_double(t);
    if (v > 0 && v < 1e6) cost += v;
  }
  return cost;
}

uint64_t sbs_surge_item_key(sbs_subset s, json_object *item) {
  const char *name = sbs_subset_name(s);
  const char *text = json_object_to_json_string_ext(item, JSON_C_TO_STRING_PLAIN);
  return sbr_shard_key(name, strlen(name), text, strlen(text));
}

int sbs_regen_shard_plan(const sbr_shard *sh, json_object *const *published, const sbs_subset *subsets, size_t n_subsets,
                         const char *only, bool **mine, json_object **owned, double *share) {
  size_t n = 0;
  for (size_t s = 0; s < n_subsets; s++) n += json_object_array_length(published[s]);
  sbr_shard_item *items = calloc(n ? n : 1, sizeof *items);
  size_t *where_s = calloc(n ? n : 1, sizeof *where_s), *where_i = calloc(n ? n : 1, sizeof *where_i);
  unsigned *owner = calloc(n ? n : 1, sizeof *owner);
  double *load = calloc(sh->count, sizeof *load);
  if (!items || !where_s || !where_i || !owner || !load) abort();
  size_t k = 0;
  double total = 0;
  for (size_t s = 0; s < n_subsets; s++)
    for (size_t i = 0; i < json_object_array_length(published[s]); i++) {
      if (!sbs_in_only(only, i)) continue;
      json_object *it = json_object_array_get_idx(published[s], i);
      items[k] = (sbr_shard_item){sbs_surge_item_key(subsets[s], it), sbs_surge_item_cost(subsets[s], it)};
      total += items[k].cost;
      where_s[k] = s;
      where_i[k++] = i;
    }
  sbr_shard_assign(items, k, sh->count, owner, load);
  *owned = json_object_new_object();
  for (size_t s = 0; s < n_subsets; s++) {
    mine[s] = calloc(json_object_array_length(published[s]) + 1, sizeof **mine);
    json_object_object_add(*owned, sbs_subset_name(subsets[s]), json_object_new_array());
  }
  for (size_t j = 0; j < k; j++)
    if (owner[j] == sh->index) {
      mine[where_s[j]][where_i[j]] = true;
      json_object_array_add(json_object_object_get(*owned, sbs_subset_name(subsets[where_s[j]])),
                            json_object_new_int64((int64_t)where_i[j]));
    }
  *share = total > 0 ? load[sh->index] / total : 0;
  free(items);
  free(where_s);
  free(where_i);
  free(owner);
  free(load);
  return 0;
}

/* SHA-256 over every toolchain's name, version and availability, in the
 * daemon's order: two machines with the same identity give the same hex. */
void sbs_toolchains_sha256(json_object *toolchains, char hex[65]) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  for (size_t i = 0; f && toolchains && i < json_object_array_length(toolchains); i++) {
    json_object *t = json_object_array_get_idx(toolchains, i), *a;
    const char *name = json_object_get_string(json_object_object_get(t, "name"));
    const char *ver = json_object_get_string(json_object_object_get(t, "version"));
    bool avail = !json_object_object_get_ex(t, "available", &a) || json_object_get_boolean(a);
    fprintf(f, "%s%c%s%c%d%c", name ? name : "", 0, ver ? ver : "", 0, avail, 0);
  }
  if (f) fclose(f);
  sbu_sha256_hex(buf ? buf : "", buf ? len : 0, hex);
  free(buf);
}

json_object *sbs_regen_manifest(const sbr_shard *sh, const char *data_dir, const sbs_subset *subsets, size_t n_subsets,
                                const sbs_regen_manifest_opts *o, json_object *toolchains, json_object *owned,
                                double share) {
  json_object *m = json_object_new_object(), *data = json_object_new_object(), *subs = json_object_new_array();
  json_object_object_add(m, "surgebox_shard", json_object_new_int(1));
  json_object_object_add(m, "command", json_object_new_string("regen"));
  json_object_object_add(m, "shard", json_object_new_int((int)sh->index));
  json_object_object_add(m, "shards", json_object_new_int((int)sh->count));
  for (size_t s = 0; s < n_subsets; s++) {
    char path[4200], hex[65];
    snprintf(path, sizeof path, "%s/%s.json", data_dir, sbs_subset_name(subsets[s]));
    if (sbu_sha256_file_hex(path, hex) < 0) snprintf(hex, sizeof hex, "unreadable");
    json_object_object_add(data, sbs_subset_name(subsets[s]), json_object_new_string(hex));
    json_object_array_add(subs, json_object_new_string(sbs_subset_name(subsets[s])));
  }
  json_object_object_add(m, "data_sha256", data);
  json_object_object_add(m, "subsets", subs);
  json_object_object_add(m, "only", o->only ? json_object_new_string(o->only) : NULL);
  json_object *opts = json_object_new_object();
  json_object_object_add(opts, "repeat", json_object_new_int(o->repeat));
  json_object_object_add(opts, "inproc_time", json_object_new_boolean(o->inproc));
  json_object_object_add(opts, "gcc9_mimic", json_object_new_boolean(o->mimic));
  json_object_object_add(m, "options", opts);
  json_object_object_add(m, "profile", json_object_new_string(o->profile ? o->profile : "host"));
  char hex[65];
  sbs_toolchains_sha256(toolchains, hex);
  json_object_object_add(m, "toolchains_sha256", json_object_new_string(hex));
  char sh_s[32];
  snprintf(sh_s, sizeof sh_s, "%.6f", share);
  json_object_object_add(m, "expected_share", json_object_new_double_s(strtod(sh_s, NULL), sh_s));
  json_object_object_add(m, "items", json_object_get(owned));
  return m;
}

int sbs_regen_shard_check_resume(const char *path, json_object *manifest) {
  json_object *prev = json_object_from_file(path);
  if (!prev) return 0; /* a fresh --out */
  int rc = json_object_equal(prev, manifest) ? 0 : -1;
  if (rc < 0) {
    json_object *sh = json_object_object_get(prev, "shard"), *n = json_object_object_get(prev, "shards");
    fprintf(stderr, "regen: %s belongs to another run (shard %s/%s, or other data, options, profile or toolchains): "
                    "give each shard its own --out\n",
            path, json_object_get_string(sh), json_object_get_string(n));
  }
  json_object_put(prev);
  return rc;
}

int sbs_regen_shard_print_plan(unsigned count, json_object *const *published, const sbs_subset *subsets,
                               size_t n_subsets, const char *only, bool as_json, FILE *f) {
  double largest = 0, total = 0;
  json_object *doc = json_object_new_object(), *plan = json_object_new_array();
  if (!as_json) fprintf(f, "%-8s %6s %14s %8s\n", "shard", "items", "expected (s)", "share");
  for (unsigned k = 0; k < count; k++) {
    sbr_shard sh = {k, count};
    bool *mine[SBS_N_SUBSETS] = {0};
    json_object *owned;
    double share, cost = 0;
    size_t items = 0;
    sbs_regen_shard_plan(&sh, published, subsets, n_subsets, only, mine, &owned, &share);
    for (size_t s = 0; s < n_subsets; s++) {
      for (size_t i = 0; i < json_object_array_length(published[s]); i++)
        if (mine[s][i]) {
          items++;
          cost += sbs_surge_item_cost(subsets[s], json_object_array_get_idx(published[s], i));
        }
      free(mine[s]);
    }
    if (as_json) {
      json_object *row = json_object_new_object();
      json_object_object_add(row, "shard", json_object_new_int((int)k));
      json_object_object_add(row, "n_items", json_object_new_int64((int64_t)items));
      json_object_object_add(row, "expected_s", json_object_new_double(cost));
      json_object_object_add(row, "items", owned);
      json_object_array_add(plan, row);
    } else {
      json_object_put(owned);
      fprintf(f, "%u/%-6u %6zu %14.1f %7.2f%%\n", k, count, items, cost, share * 100);
    }
    total += cost;
    if (cost > largest) largest = cost;
  }
  if (as_json) {
    json_object_object_add(doc, "shards", json_object_new_int((int)count));
    json_object_object_add(doc, "expected_total_s", json_object_new_double(total));
    json_object_object_add(doc, "largest_share", json_object_new_double(total > 0 ? largest / total : 0));
    json_object_object_add(doc, "plan", plan);
    fprintf(f, "%s\n", json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN));
  } else {
    json_object_put(plan);
    fprintf(f, "largest shard: %.4f of the expected total %.1f s (ideal 1/%u = %.4f)\n",
            total > 0 ? largest / total : 0, total, count, 1.0 / count);
  }
  json_object_put(doc);
  return 0;
}
