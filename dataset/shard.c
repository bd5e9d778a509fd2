/* The partition of a benchmark's items into shards; see shard.h. */
#include "shard.h"
#include "atomic_write.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_uint(const char *s, unsigned *out) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (*end || errno || v > 1000000 || s[0] == '-' || s[0] == '+' || s[0] == ' ') return -1;
  *out = (unsigned)v;
  return 0;
}

static int from_env(unsigned shards, sbr_shard *out, char *err, size_t err_len) {
  const char *id = getenv("SLURM_ARRAY_TASK_ID");
  if (id && *id) {
    unsigned task, count, min = 0, step = 1;
    const char *m = getenv("SLURM_ARRAY_TASK_MIN"), *st = getenv("SLURM_ARRAY_TASK_STEP");
    if (parse_uint(id, &task) < 0 || parse_uint(getenv("SLURM_ARRAY_TASK_COUNT"), &count) < 0 ||
        (m && *m && parse_uint(m, &min) < 0) || (st && *st && (parse_uint(st, &step) < 0 || step == 0)) ||
        task < min || (task - min) % step) {
      snprintf(err, err_len, "--shard auto: SLURM_ARRAY_TASK_ID/_COUNT/_MIN/_STEP are not a plain array");
      return -1;
    }
    if (shards && shards != count) {
      snprintf(err, err_len, "--shard auto: --shards %u but the Slurm array has %u tasks", shards, count);
      return -1;
    }
    out->index = (task - min) / step;
    out->count = count;
  } else if ((id = getenv("JOB_COMPLETION_INDEX")) && *id) {
    const char *env = getenv("SURGEBOX_SHARDS");
    if (!shards && env && *env && (parse_uint(env, &shards) < 0 || !shards)) {
      snprintf(err, err_len, "--shard auto: SURGEBOX_SHARDS=%s is not a count", env);
      return -1;
    }
    if (!shards) {
      snprintf(err, err_len, "--shard auto: JOB_COMPLETION_INDEX needs the count: --shards N or SURGEBOX_SHARDS");
      return -1;
    }
    if (parse_uint(id, &out->index) < 0) {
      snprintf(err, err_len, "--shard auto: JOB_COMPLETION_INDEX=%s is not an index", id);
      return -1;
    }
    out->count = shards;
  } else {
    snprintf(err, err_len, "--shard auto: neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set");
    return -1;
  }
  if (out->index >= out->count) {
    snprintf(err, err_len, "--shard auto: shard %u of %u is out of range", out->index, out->count);
    return -1;
  }
  return 0;
}

int sbr_shard_parse(const char *arg, unsigned shards, sbr_shard *out, char *err, size_t err_len) {
  out->index = out->count = 0;
  if (!strcmp(arg, "auto")) return from_env(shards, out, err, err_len);
  char buf[32];
  const char *slash = strchr(arg, '/');
  if (!slash || (size_t)(slash - arg) >= sizeof buf) goto bad;
  memcpy(buf, arg, (size_t)(slash - arg));
  buf[slash - arg] = '\0';
  if (parse_uint(buf, &out->index) < 0 || parse_uint(slash + 1, &out->count) < 0 || out->count == 0 ||
      out->index >= out->count)
    goto bad;
  if (shards && shards != out->count) {
    snprintf(err, err_len, "--shard %s disagrees with --shards %u", arg, shards);
    return -1;
  }
  return 0;
bad:
  out->index = out->count = 0;
  snprintf(err, err_len, "--shard %s: expected I/N with 0 <= I < N, or auto", arg);
  return -1;
}

const sbo_opt sbr_shard_opts[] = {
    {"shard", SBR_O_SHARD, "I/N|auto", "run only shard I of N (auto: SLURM_ARRAY_TASK_* or JOB_COMPLETION_INDEX); "
                                       "`surgebox merge` joins the shards' --out"},
    {"shards", SBR_O_SHARDS, "N", "N for --shard auto on Kubernetes (else $SURGEBOX_SHARDS)"},
    {NULL, 0, NULL, NULL}};

bool sbr_shard_apply(sbr_shard_args *a, int key, const char *val) {
  if (key == SBR_O_SHARD) a->shard = val;
  else if (key == SBR_O_SHARDS) a->shards = val;
  else return false;
  return true;
}

int sbr_shard_from_args(const char *prog, const char *shard, const char *shards, sbr_shard *out) {
  unsigned n = 0;
  char err[256];
  out->index = out->count = 0;
  if (shards && (parse_uint(shards, &n) < 0 || n == 0)) {
    fprintf(stderr, "%s: --shards %s: expected a count >= 1\n", prog, shards);
    return -1;
  }
  if (!shard) {
    if (shards) fprintf(stderr, "%s: --shards needs --shard I/N or --shard auto\n", prog);
    return shards ? -1 : 0;
  }
  if (sbr_shard_parse(shard, n, out, err, sizeof err) < 0) {
    fprintf(stderr, "%s: %s\n", prog, err);
    return -1;
  }
  return 0;
}

uint64_t sbr_shard_key(const void *a, size_t a_len, const void *b, size_t b_len) {
  struct sha256_ctx h;
  uint8_t d[SHA256_DIGEST_SIZE], sep = 0;
  sha256_init(&h);
  sha256_update(&h, a_len, a);
  sha256_update(&h, 1, &sep); /* "ab","c" != "a","bc" */
  sha256_update(&h, b_len, b);
  sha256_digest(&h, sizeof d, d);
  uint64_t k = 0;
  for (int i = 0; i < 8; i++) k = k << 8 | d[i];
  return k;
}

static const sbr_shard_item *sort_items;
static int by_cost_then_key(const void *pa, const void *pb) {
  size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
  const sbr_shard_item *x = &sort_items[a], *y = &sort_items[b];
  if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (a > b) - (a < b); /* identical items: their order in the data */
}

void sbr_shard_assign(const sbr_shard_item *items, size_t n, unsigned count, unsigned *owner, double *load) {
  size_t *order = malloc((n ? n : 1) * sizeof *order);
  double *l = calloc(count ? count : 1, sizeof *l);
  if (!order || !l) abort();
  for (size_t i = 0; i < n; i++) order[i] = i;
  sort_items = items;
  qsort(order, n, sizeof *order, by_cost_then_key);
  for (size_t k = 0; k < n; k++) {
    unsigned best = 0;
    for (unsigned s = 1; s < count; s++)
      if (l[s] < l[best]) best = s;
    owner[order[k]] = best;
    l[best] += items[order[k]].cost;
  }
  if (load) memcpy(load, l, count * sizeof *l);
  free(order);
  free(l);
}

/* m without the fields that may differ between machines (*_path) */
static json_object *without_paths(json_object *m) {
  json_object *c = json_tokener_parse(json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN)), *drop = json_object_new_array();
  if (c) {
    json_object_object_foreach(c, k, v) {
      (void)v;
      size_t n = strlen(k);
      if (n > 5 && !strcmp(k + n - 5, "_path")) json_object_array_add(drop, json_object_new_string(k));
    }
    for (size_t i = 0; i < json_object_array_length(drop); i++)
      json_object_object_del(c, json_object_get_string(json_object_array_get_idx(drop, i)));
  }
  json_object_put(drop);
  return c;
}

int sbr_shard_write_manifest(const char *path, json_object *m, const char *prog) {
  json_object *prev = json_object_from_file(path);
  int rc = 0;
  if (prev) {
    json_object *a = without_paths(prev), *b = without_paths(m);
    if (!json_object_equal(a, b)) {
      fprintf(stderr, "%s: %s belongs to another run (another shard, options or input): give each shard its own --out\n",
              prog, path);
      rc = -1;
    }
    json_object_put(a);
    json_object_put(b);
    json_object_put(prev);
  }
  if (!rc && sbu_write_json_atomic(path, m, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE) < 0) {
    fprintf(stderr, "%s: cannot write %s\n", prog, path);
    rc = -1;
  }
  return rc;
}

void sbr_shard_add_file(json_object *m, const char *name, const char *path) {
  char key[128], hex[65];
  if (sbu_sha256_file_hex(path, hex) < 0) snprintf(hex, sizeof hex, "unreadable");
  snprintf(key, sizeof key, "%s_sha256", name);
  json_object_object_add(m, key, json_object_new_string(hex));
  char *abs = realpath(path, NULL);
  snprintf(key, sizeof key, "%s_path", name);
  json_object_object_add(m, key, json_object_new_string(abs ? abs : path));
  free(abs);
}

const char *sbr_shard_file_path(json_object *m, const char *name) {
  char key[128];
  snprintf(key, sizeof key, "%s_path", name);
  return json_object_get_string(json_object_object_get(m, key));
}

json_object *sbr_shard_manifest_new(const char *command, const sbr_shard *sh) {
  json_object *m = json_object_new_object();
  json_object_object_add(m, "surgebox_shard", json_object_new_int(1));
  json_object_object_add(m, "command", json_object_new_string(command));
  json_object_object_add(m, "shard", json_object_new_int((int)sh->index));
  json_object_object_add(m, "shards", json_object_new_int((int)sh->count));
  return m;
}

int sbr_shard_finish_by_count(const sbr_shard *sh, json_object *m, const char *part, const uint64_t *keys,
                              const char *const *names, size_t n, bool *mine, const char *out, const char *prog) {
  char path[4200];
  snprintf(path, sizeof path, "%s.shard.json", out);
  return sbr_shard_finish_by_count_at(sh, m, part, keys, names, n, mine, path, prog);
}

int sbr_shard_finish_by_count_at(const sbr_shard *sh, json_object *m, const char *part, const uint64_t *keys,
                                 const char *const *names, size_t n, bool *mine, const char *path, const char *prog) {
  sbr_shard_item *items = calloc(n + 1, sizeof *items);
  unsigned *owner = calloc(n + 1, sizeof *owner);
  if (!items || !owner) abort();
  for (size_t i = 0; i < n; i++) items[i] = (sbr_shard_item){keys[i], 1.0};
  sbr_shard_assign(items, n, sh->count, owner, NULL);
  json_object *list = json_object_new_array(), *owned = json_object_new_object();
  for (size_t i = 0; i < n; i++)
    if ((mine[i] = owner[i] == sh->index)) json_object_array_add(list, json_object_new_string(names[i]));
  json_object_object_add(owned, part, list);
  json_object_object_add(m, "items", owned);
  free(items);
  free(owner);
  int rc = sbr_shard_write_manifest(path, m, prog);
  json_object_put(m);
  return rc;
}
