/* The compile cache: content-addressed by SHA-256 (nettle) of everything
 * that decides a compile's outcome — the toolchain's identity (name,
 * version, real path, the binary's mtime and size), the compile argv,
 * environment, working directory, mounts and limits, and every source file
 * (path, mode, bytes). A cryptographic hash because jobs are untrusted: a
 * crafted collision must not hand another job a poisoned binary.
 *
 * Entry: <dir>/objects/<2 hex>/<key>/{result.json, manifest.json, files/...},
 * written under <dir>/tmp and renamed into place, so a crash never leaves a
 * half entry and other daemons sharing the directory see whole ones only.
 * Bounded: least recently used entries (by the entry directory's mtime,
 * touched on every hit) go when the total passes max_bytes. Concurrent
 * identical jobs: the first compiles, the others wait for it. */
#include "cleanup.h"
#include "clock.h"
#include "internal.h"
#include "sha256.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_FORMAT "surgebox-compile-cache-v1"
#define MAX_ARTIFACT_BYTES ((uint64_t)256 << 20)

typedef struct {
  char key[65];
  uint64_t bytes;
  int64_t last_use;
} entry;

typedef struct {
  char key[65];
  sbd_call *waiters;
  size_t n_waiters;
} inflight;

struct sbd_cache {
  char dir[4096];
  uint64_t max_bytes, total_bytes;
  entry *entries;
  size_t n_entries, cap_entries;
  inflight *flights;
  size_t n_flights;
  uint64_t hits, misses, waits, stores, evictions, store_failures;
  uv_loop_t *loop;
  uv_timer_t wake;
  sbd_call *ready; /* waiters to wake on the next loop turn */
  size_t n_ready;
  uint64_t seq;
};

/* ---- small file helpers ---- */
static uint64_t du(const char *path);


static void entry_dir(const sbd_cache *c, const char *key, char *out, size_t cap) {
  snprintf(out, cap, "%s/objects/%.2s/%s", c->dir, key, key);
}

static entry *find_entry(sbd_cache *c, const char *key) {
  for (size_t i = 0; i < c->n_entries; i++)
    if (strcmp(c->entries[i].key, key) == 0) return &c->entries[i];
  return NULL;
}

static void add_entry(sbd_cache *c, const char *key, uint64_t bytes, int64_t last_use) {
  if (c->n_entries == c->cap_entries) {
    size_t cap = c->cap_entries ? c->cap_entries * 2 : 256;
    entry *e = realloc(c->entries, cap * sizeof *e);
    if (!e) return;
    c->entries = e;
    c->cap_entries = cap;
  }
  entry *e = &c->entries[c->n_entries++];
  snprintf(e->key, sizeof e->key, "%s", key);
  e->bytes = bytes;
  e->last_use = last_use;
  c->total_bytes += bytes;
}

static void remove_entry(sbd_cache *c, size_t i) {
  char path[4200];
  entry_dir(c, c->entries[i].key, path, sizeof path);
  sb_rm_rf(path);
  c->total_bytes -= c->entries[i].bytes;
  c->entries[i] = c->entries[--c->n_entries];
}

static int by_age(const void *a, const void *b) {
  const entry *x = a, *y = b;
  return (x->last_use > y->last_use) - (x->last_use < y->last_use);
}

static void evict(sbd_cache *c) {
  if (c->total_bytes <= c->max_bytes) return;
  qsort(c->entries, c->n_entries, sizeof *c->entries, by_age);
  /* Oldest first, down to 90 % so that eviction is not paid on every store. */
  size_t i = 0;
  while (i < c->n_entries && c->total_bytes > c->max_bytes / 10 * 9) {
    bool busy = false;
    for (size_t f = 0; f < c->n_flights; f++) busy |= strcmp(c->flights[f].key, c->entries[i].key) == 0;
    if (busy) {
      i++;
      continue;
    }
    remove_entry(c, i); /* moves the last entry here: re-sort what is left */
    qsort(c->entries + i, c->n_entries - i, sizeof *c->entries, by_age);
    c->evictions++;
  }
}

/* ---- sizes ---- */
static uint64_t du_total;
static int du_one(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)p;
  (void)f;
  if (flag == FTW_F) du_total += (uint64_t)st->st_blocks * 512;
  return 0;
}
static uint64_t du(const char *path) {
  du_total = 0;
  nftw(path, du_one, 16, FTW_PHYS);
  return du_total;
}

static void scan(sbd_cache *c) {
  char objects[4200];
  snprintf(objects, sizeof objects, "%s/objects", c->dir);
  DIR *top = opendir(objects);
  struct dirent *a;
  while (top && (a = readdir(top))) {
    if (a->d_name[0] == '.') continue;
    char sub[4400];
    snprintf(sub, sizeof sub, "%s/%s", objects, a->d_name);
    DIR *d = opendir(sub);
    struct dirent *b;
    while (d && (b = readdir(d))) {
      if (strlen(b->d_name) != 64) continue;
      char path[4500];
      snprintf(path, sizeof path, "%s/%s", sub, b->d_name);
      struct stat st;
      if (stat(path, &st) < 0) continue;
      add_entry(c, b->d_name, du(path), (int64_t)st.st_mtime);
    }
    if (d) closedir(d);
  }
  if (top) closedir(top);
}

int sbd_cache_open(sbd_cache **out, uv_loop_t *loop, const char *dir, uint64_t max_bytes, char *err, size_t err_len) {
  *out = NULL;
  sbd_cache *c = calloc(1, sizeof *c);
  if (!c) return -1;
  snprintf(c->dir, sizeof c->dir, "%s", dir);
  c->max_bytes = max_bytes;
  c->loop = loop;
  char path[4200];
  snprintf(path, sizeof path, "%s/objects", dir);
  int rc = sb_mkdir_p(path, 0755);
  snprintf(path, sizeof path, "%s/tmp", dir);
  if (rc == 0) {
    sb_rm_rf(path); /* half-written entries of a crashed daemon */
    rc = sb_mkdir_p(path, 0700);
  }
  if (rc < 0) {
    snprintf(err, err_len, "compile cache %s: %s", dir, strerror(-rc));
    free(c);
    return -1;
  }
  scan(c);
  uv_timer_init(loop, &c->wake);
  c->wake.data = c;
  evict(c);
  *out = c;
  return 0;
}

static void on_wake_closed(uv_handle_t *h) { free(h->data); }

void sbd_cache_close(sbd_cache *c) {
  if (!c) return;
  free(c->entries);
  for (size_t i = 0; i < c->n_flights; i++) free(c->flights[i].waiters);
  free(c->flights);
  free(c->ready);
  uv_close((uv_handle_t *)&c->wake, on_wake_closed); /* frees c */
}

/* ---- the key ---- */
static void hash_str(struct sha256_ctx *h, const char *s) {
  sha256_update(h, strlen(s) + 1, (const uint8_t *)(s ? s : "")); /* with the NUL: "ab","c" != "a","bc" */
}
static void hash_u64(struct sha256_ctx *h, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
  sha256_update(h, 8, b);
}

static int by_path(const void *a, const void *b) {
  return strcmp(**(const char *const *const *)a, **(const char *const *const *)b);
}

/* A raw step names its compiler inside argv (often through a shell): key
 * it on every installed toolchain instead, so that an upgrade of any of
 * them invalidates it. */
static void hash_all_toolchains(struct sha256_ctx *h, const sbt_registry *r) {
  for (size_t i = 0; i < r->n_tcs; i++) {
    hash_str(h, r->tcs[i].bin_real);
    hash_str(h, r->tcs[i].version);
    hash_u64(h, r->tcs[i].bin_mtime_ns);
    hash_u64(h, r->tcs[i].bin_size);
  }
}

/* The workspace as a step will see it, once a program ran in it: an
 * earlier step may have rewritten a source, so the request's files no
 * longer say what the cached step compiles. Every entry in path order:
 * path, type and mode, then the bytes (regular files) or the target
 * (symlinks). Link-safe (sb_workspace_walk). Bounded, since it runs on the
 * loop thread: a bigger tree is simply not cached. */
#define KEY_MAX_BYTES ((uint64_t)64 << 20)
#define KEY_MAX_ENTRIES 20000

typedef struct {
  char *path;
  uint32_t mode;
  uint64_t size;
  uint8_t digest[SHA256_DIGEST_SIZE]; /* of the bytes or the symlink's target */
} ws_item;

typedef struct {
  ws_item *v;
  size_t n, cap;
  uint64_t bytes;
} ws_items;

static int key_one(const char *rel, const struct stat *st, int dirfd, const char *name, void *ud) {
  ws_items *w = ud;
  if (w->n == KEY_MAX_ENTRIES) return -E2BIG;
  if (w->n == w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 64;
    ws_item *v = realloc(w->v, cap * sizeof *v);
    if (!v) return -ENOMEM;
    w->v = v;
    w->cap = cap;
  }
  ws_item *it = &w->v[w->n];
  memset(it, 0, sizeof *it);
  it->mode = (uint32_t)st->st_mode;
  unsigned char *data = NULL;
  size_t len = 0;
  if (S_ISREG(st->st_mode)) {
    char err[SB_ERR_MAX];
    if (sb_workspace_read_at(dirfd, name, KEY_MAX_BYTES - w->bytes, &data, &len, NULL, err) < 0) return -EIO;
    w->bytes += len;
  } else if (S_ISLNK(st->st_mode)) {
    data = malloc(PATH_MAX);
    ssize_t n = data ? readlinkat(dirfd, name, (char *)data, PATH_MAX) : -1;
    if (n < 0) {
      free(data);
      return -EIO;
    }
    len = (size_t)n;
  }
  struct sha256_ctx h;
  sha256_init(&h);
  if (len) sha256_update(&h, len, data);
  sha256_digest(&h, sizeof it->digest, it->digest);
  free(data);
  it->size = len;
  if (!(it->path = strdup(rel))) return -ENOMEM;
  w->n++;
  return 0;
}

static int by_item_path(const void *a, const void *b) {
  return strcmp(((const ws_item *)a)->path, ((const ws_item *)b)->path);
}

static int hash_workspace(struct sha256_ctx *h, sb_workspace *ws) {
  ws_items w = {0};
  char err[SB_ERR_MAX];
  int rc = sb_workspace_walk(ws, key_one, &w, err);
  if (rc == 0) {
    qsort(w.v, w.n, sizeof *w.v, by_item_path);
    hash_str(h, "\x04workspace");
    hash_u64(h, w.n);
    for (size_t i = 0; i < w.n; i++) {
      hash_str(h, w.v[i].path);
      hash_u64(h, w.v[i].mode);
      hash_u64(h, w.v[i].size);
      sha256_update(h, sizeof w.v[i].digest, w.v[i].digest);
    }
  }
  for (size_t i = 0; i < w.n; i++) free(w.v[i].path);
  free(w.v);
  return rc;
}

int sbd_cache_key(const sbd_job *job, char out[65]) {
  struct sha256_ctx h;
  sha256_init(&h);
  hash_str(&h, CACHE_FORMAT);
  const sbt_plan *p = &job->plan;
  const sbd_jstep *js = &job->steps[job->step];
  if (job->has_plan) {
    /* the identity object is built in a fixed key order by sbt_plan_make */
    hash_str(&h, json_object_to_json_string_ext(p->identity, JSON_C_TO_STRING_PLAIN));
    hash_u64(&h, job->tc_mtime_ns);
    hash_u64(&h, job->tc_size);
    hash_str(&h, p->cwd);
    for (size_t m = 0; m < p->n_mounts; m++) {
      hash_str(&h, p->mounts[m].source);
      hash_str(&h, p->mounts[m].target);
    }
  } else if (job->root) { /* a profile: its verified content stands for its toolchains */
    hash_str(&h, "\x03profile");
    hash_str(&h, job->root);
    hash_str(&h, json_object_to_json_string_ext(job->profile, JSON_C_TO_STRING_PLAIN));
  } else {
    hash_str(&h, "\x02raw");
    if (job->srv->have_toolchains) hash_all_toolchains(&h, &job->srv->toolchains);
  }
  for (char **a = js->argv; a && *a; a++) hash_str(&h, *a);
  hash_str(&h, "\x01env");
  for (char **e = js->env; e && *e; e++) hash_str(&h, *e);
  hash_u64(&h, js->merge_output);
  hash_u64(&h, js->output_base64); /* the cached document has *_b64 or not */
  hash_u64(&h, js->stdin_data ? js->stdin_len + 1 : 0);
  if (js->stdin_data) sha256_update(&h, js->stdin_len, js->stdin_data);
  hash_u64(&h, js->limits.memory_mib);
  hash_u64(&h, js->limits.pids);
  hash_u64(&h, (uint64_t)(js->limits.wall_time_s * 1000));
  hash_u64(&h, (uint64_t)(js->limits.cpu_time_s * 1000));
  /* files, in path order, under the names they get in /app */
  const sbp_exec *ex = &job->req->exec;
  const char ***order = calloc(ex->n_files + 1, sizeof *order);
  const char **names = calloc(ex->n_files + 1, sizeof *names);
  for (size_t i = 0; order && names && i < ex->n_files; i++) {
    names[i] = job->has_plan && i == p->main_index ? p->main_path : ex->files[i].path;
    order[i] = &names[i];
  }
  if (order && names) qsort(order, ex->n_files, sizeof *order, by_path);
  for (size_t k = 0; order && names && k < ex->n_files; k++) {
    size_t i = (size_t)(order[k] - names);
    hash_str(&h, names[i]);
    hash_u64(&h, ex->files[i].has_mode ? ex->files[i].mode : 0644);
    hash_u64(&h, ex->files[i].len);
    sha256_update(&h, ex->files[i].len, ex->files[i].data);
  }
  free(order);
  free(names);
  if (job->ran_program && hash_workspace(&h, job->ws) < 0) return -1;
  sbu_sha256_digest_hex(&h, out);
  return 0;
}

/* ---- snapshots of a workspace (link-safe walk: a program ran in it) ---- */
static int snap_one(const char *rel, const struct stat *st, int dirfd, const char *name, void *ud) {
  (void)dirfd;
  (void)name;
  sbd_snapshot *s = ud;
  if (!S_ISREG(st->st_mode)) return 0;
  char **p = realloc(s->paths, (s->n + 1) * sizeof *p);
  if (p) s->paths = p;
  uint64_t *z = realloc(s->sizes, (s->n + 1) * sizeof *z);
  if (z) s->sizes = z;
  int64_t *m = realloc(s->mtimes, (s->n + 1) * sizeof *m);
  if (m) s->mtimes = m;
  if (!p || !z || !m || !(s->paths[s->n] = strdup(rel))) return -ENOMEM;
  s->sizes[s->n] = (uint64_t)st->st_size;
  s->mtimes[s->n] = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
  s->n++;
  return 0;
}

void sbd_snapshot_take(sb_workspace *ws, sbd_snapshot *s) {
  sbd_snapshot_free(s);
  char err[SB_ERR_MAX];
  s->failed = sb_workspace_walk(ws, snap_one, s, err) < 0;
}

void sbd_snapshot_free(sbd_snapshot *s) {
  for (size_t i = 0; i < s->n; i++) free(s->paths[i]);
  free(s->paths);
  free(s->sizes);
  free(s->mtimes);
  memset(s, 0, sizeof *s);
}

/* ---- lookups ---- */
static inflight *flight(sbd_cache *c, const char *key) {
  for (size_t i = 0; i < c->n_flights; i++)
    if (strcmp(c->flights[i].key, key) == 0) return &c->flights[i];
  return NULL;
}

static unsigned char *slurp(const char *path, size_t *len) {
  SBU_AUTOCLOSE int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  SBU_AUTOFREE unsigned char *buf = NULL;
  if (fd < 0 || fstat(fd, &st) < 0 || !(buf = malloc((size_t)st.st_size + 1))) return NULL;
  ssize_t n = read(fd, buf, (size_t)st.st_size);
  if (n != st.st_size) return NULL;
  *len = (size_t)n;
  return sbu_take_ptr(&buf);
}

/* Copy the entry's artifacts into ws and parse its result; -1 if the entry
 * is broken, -2 if the workspace refused them (a name in the way: the
 * entry is fine, this job compiles instead). */
static int restore(sbd_cache *c, const char *key, sb_workspace *ws, json_object **doc) {
  char dir[4200], path[8400];
  entry_dir(c, key, dir, sizeof dir);
  snprintf(path, sizeof path, "%s/manifest.json", dir);
  SBU_AUTOPUT json_object *manifest = json_object_from_file(path);
  snprintf(path, sizeof path, "%s/result.json", dir);
  SBU_AUTOPUT json_object *res = manifest ? json_object_from_file(path) : NULL;
  int rc = res && json_object_is_type(manifest, json_type_array) ? 0 : -1;
  for (size_t i = 0; rc == 0 && i < json_object_array_length(manifest); i++) {
    json_object *f = json_object_array_get_idx(manifest, i), *p, *m;
    if (!json_object_object_get_ex(f, "path", &p) || !json_object_object_get_ex(f, "mode", &m)) {
      rc = -1;
      break;
    }
    snprintf(path, sizeof path, "%s/files/%s", dir, json_object_get_string(p));
    size_t len = 0;
    SBU_AUTOFREE unsigned char *data = slurp(path, &len);
    char err[SB_ERR_MAX];
    if (!data) rc = -1;
    else if (sb_workspace_write(ws, json_object_get_string(p), data, len, (mode_t)json_object_get_int(m), err) < 0)
      rc = -2;
  }
  if (rc < 0) return rc;
  json_object_object_add(res, "cached", json_object_new_boolean(true));
  json_object_object_add(res, "cache_key", json_object_new_string(key));
  *doc = sbu_take_ptr(&res);
  utimensat(AT_FDCWD, dir, NULL, 0); /* last use, for LRU across restarts */
  return 0;
}

sbd_cache_lookup_result sbd_cache_lookup(sbd_cache *c, const char *key, sbd_call wake, sb_workspace *ws,
                                         json_object **doc) {
  if (!c) return SBD_CACHE_OFF;
  inflight *fl = flight(c, key);
  if (fl && !wake.fn) return SBD_CACHE_OFF; /* a caller that cannot wait (a checker's build) compiles uncached */
  if (fl) { /* someone compiles exactly this now */
    sbd_call *w = realloc(fl->waiters, (fl->n_waiters + 1) * sizeof *w);
    if (w) {
      fl->waiters = w;
      fl->waiters[fl->n_waiters++] = wake;
      c->waits++;
      return SBD_CACHE_WAIT;
    }
  }
  entry *e = find_entry(c, key);
  if (!e) { /* another daemon sharing the directory may have stored it */
    char dir[4200];
    entry_dir(c, key, dir, sizeof dir);
    struct stat st;
    if (stat(dir, &st) == 0) {
      add_entry(c, key, du(dir), (int64_t)st.st_mtime);
      e = &c->entries[c->n_entries - 1];
    }
  }
  int rc = e ? restore(c, key, ws, doc) : -1;
  if (rc == 0) {
    e->last_use = (int64_t)sbu_now_s();
    c->hits++;
    return SBD_CACHE_HIT;
  }
  if (e && rc == -1) remove_entry(c, (size_t)(e - c->entries)); /* unreadable: recompile */
  c->misses++;
  inflight *f = realloc(c->flights, (c->n_flights + 1) * sizeof *f);
  if (!f) return SBD_CACHE_OFF;
  c->flights = f;
  f = &c->flights[c->n_flights++];
  memset(f, 0, sizeof *f);
  snprintf(f->key, sizeof f->key, "%s", key);
  return SBD_CACHE_LEAD;
}

static void on_wake(uv_timer_t *t) {
  sbd_cache *c = t->data;
  while (c->n_ready) {
    sbd_call w = c->ready[0];
    memmove(c->ready, c->ready + 1, (c->n_ready - 1) * sizeof *c->ready);
    c->n_ready--;
    w.fn(w.arg);
  }
}

/* The compile ended: its waiters look again on the next loop turn (not from
 * inside the leader's own callback). */
static void land(sbd_cache *c, const char *key) {
  inflight *fl = flight(c, key);
  if (!fl) return;
  sbd_call *r = realloc(c->ready, (c->n_ready + fl->n_waiters + 1) * sizeof *r);
  if (r) {
    c->ready = r;
    for (size_t i = 0; i < fl->n_waiters; i++) c->ready[c->n_ready++] = fl->waiters[i];
  }
  free(fl->waiters);
  *fl = c->flights[--c->n_flights];
  if (c->n_ready) uv_timer_start(&c->wake, on_wake, 0, 0);
}

void sbd_cache_abandon(sbd_cache *c, const char *key) {
  if (c) land(c, key);
}

bool sbd_cache_forget_waiter(sbd_cache *c, const void *arg) {
  if (!c) return false;
  bool found = false;
  for (size_t i = 0; i < c->n_flights; i++)
    for (size_t k = 0; k < c->flights[i].n_waiters; k++)
      if (c->flights[i].waiters[k].arg == arg) {
        c->flights[i].waiters[k] = c->flights[i].waiters[--c->flights[i].n_waiters];
        found = true;
        break;
      }
  for (size_t k = 0; k < c->n_ready; k++)
    if (c->ready[k].arg == arg) {
      memmove(c->ready + k, c->ready + k + 1, (c->n_ready - k - 1) * sizeof *c->ready);
      c->n_ready--;
      found = true;
      break;
    }
  return found;
}

static int write_new(const char *dst, const unsigned char *data, size_t len, mode_t mode) {
  int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode & 0777);
  ssize_t n = fd >= 0 ? write(fd, data, len) : -1;
  if (fd >= 0) close(fd);
  return n == (ssize_t)len ? 0 : -1;
}

void sbd_cache_store(sbd_cache *c, const char *key, json_object *doc, sb_workspace *ws, const sbd_snapshot *before) {
  if (!c) return;
  sbd_snapshot after = {0};
  sbd_snapshot_take(ws, &after);
  char tmp[4200], path[8400], dst[8400];
  snprintf(tmp, sizeof tmp, "%s/tmp/%s.%d.%llu", c->dir, key, (int)getpid(), (unsigned long long)++c->seq);
  snprintf(path, sizeof path, "%s/files", tmp);
  int rc = before->failed || after.failed ? -1 : sb_mkdir_p(path, 0755); /* a tree we could not walk: not stored */
  json_object *manifest = json_object_new_array();
  uint64_t bytes = 0;
  for (size_t i = 0; rc == 0 && i < after.n; i++) {
    bool same = false;
    for (size_t k = 0; k < before->n && !same; k++)
      same = strcmp(before->paths[k], after.paths[i]) == 0 && before->sizes[k] == after.sizes[i] &&
             before->mtimes[k] == after.mtimes[i];
    if (same) continue; /* an input, unchanged */
    bytes += after.sizes[i];
    if (bytes > MAX_ARTIFACT_BYTES) {
      rc = -1;
      break;
    }
    snprintf(path, sizeof path, "%s/files/%s", tmp, after.paths[i]);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    sb_mkdir_p(path, 0755);
    *slash = '/';
    /* from the workspace link-safely: a name the program swapped for a
     * symlink, a FIFO or a directory since the walk fails the store */
    unsigned char *data = NULL;
    size_t len = 0;
    mode_t mode = 0;
    char err[SB_ERR_MAX];
    if (sb_workspace_read(ws, after.paths[i], MAX_ARTIFACT_BYTES - (bytes - after.sizes[i]), &data, &len, &mode, err) < 0 ||
        write_new(path, data, len, mode) < 0)
      rc = -1;
    free(data);
    json_object *f = json_object_new_object();
    json_object_object_add(f, "path", json_object_new_string(after.paths[i]));
    json_object_object_add(f, "mode", json_object_new_int((int)mode));
    json_object_array_add(manifest, f);
  }
  snprintf(path, sizeof path, "%s/manifest.json", tmp);
  if (rc == 0 && json_object_to_file_ext(path, manifest, JSON_C_TO_STRING_PLAIN) < 0) rc = -1;
  snprintf(path, sizeof path, "%s/result.json", tmp);
  if (rc == 0 && json_object_to_file_ext(path, doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) < 0) rc = -1;
  json_object_put(manifest);
  sbd_snapshot_free(&after);
  entry_dir(c, key, dst, sizeof dst);
  char *slash = strrchr(dst, '/');
  *slash = '\0';
  if (rc == 0) sb_mkdir_p(dst, 0755);
  *slash = '/';
  if (rc == 0 && rename(tmp, dst) == 0) {
    c->stores++;
    add_entry(c, key, du(dst), (int64_t)sbu_now_s());
    evict(c);
  } else {
    c->store_failures++; /* too big, or another daemon stored it first */
    sb_rm_rf(tmp);
  }
  land(c, key);
}

json_object *sbd_cache_stats(sbd_cache *c) {
  if (!c) return NULL;
  json_object *o = json_object_new_object();
  json_object_object_add(o, "dir", json_object_new_string(c->dir));
  json_object_object_add(o, "entries", json_object_new_int64((int64_t)c->n_entries));
  json_object_object_add(o, "bytes", json_object_new_int64((int64_t)c->total_bytes));
  json_object_object_add(o, "max_bytes", json_object_new_int64((int64_t)c->max_bytes));
  json_object_object_add(o, "hits", json_object_new_int64((int64_t)c->hits));
  json_object_object_add(o, "misses", json_object_new_int64((int64_t)c->misses));
  json_object_object_add(o, "waits", json_object_new_int64((int64_t)c->waits));
  json_object_object_add(o, "stores", json_object_new_int64((int64_t)c->stores));
  json_object_object_add(o, "evictions", json_object_new_int64((int64_t)c->evictions));
  json_object_object_add(o, "in_flight", json_object_new_int64((int64_t)c->n_flights));
  return o;
}
