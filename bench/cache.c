/* bench_cache: a compile-cache hit against a cold compile of a typical C++
 * file, through surgeboxd and the toolchain form
 *   {"toolchain":"g++","options":{"std":"c++17","opt":"O2"},"files":[test.cpp]}
 *
 *   bench_cache --bin-dir DIR --source FILE [--n N] [--toolchain NAME] [--out FILE]
 *
 * One daemon (--jobs 1) with a fresh --cache-dir. Interleaved, N times each:
 *   cold    the source with a unique first comment line (a miss: compiles)
 *   hit     the source unchanged (compiled once before the loop: a hit)
 *   run-only  a raw exec of the hit's binary (read from the cache entry, uploaded
 *           as content_b64) with the toolchain's run argv and env: the hit's
 *           run step alone; hit − run-only (paired) is what the hit costs
 *   trivial a raw exec of /bin/true: the daemon's per-job cost without compiling
 * The compile step's "cached" flag is checked on every response. Reported per
 * kind: the whole job (request sent to response read), the compile step's
 * own setup+wall as the sandbox measured it (cold only: a hit runs nothing),
 * the run step's setup+wall, and the rest (whole job minus the steps that
 * ran: workspace, cache lookup/restore/store, daemon and socket). The
 * steps' setup_time_s and wall_time_s can overlap (the supervisor reads the
 * clock after sending GO), so "rest" is a lower estimate; "rest_upper"
 * subtracts only the steps' wall times (it keeps their sandbox set-up). */
#include "common.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  const char *id, *what;
  bc_vec whole, compile_step, run_step, rest, rest_upper, queue;
  int wrong_cached, failures;
  char failure[512];
} kind;

static double step_time(json_object *step) {
  return bc_jdouble(step, "setup_time_s") + bc_jdouble(step, "wall_time_s");
}

static json_object *toolchain_req(const char *tc, const char *id, const char *src) {
  json_object *r = json_object_new_object();
  json_object_object_add(r, "id", json_object_new_string(id));
  json_object_object_add(r, "type", json_object_new_string("exec"));
  json_object_object_add(r, "toolchain", json_object_new_string(tc));
  json_object *o = json_object_new_object();
  json_object_object_add(o, "std", json_object_new_string("c++17"));
  json_object_object_add(o, "opt", json_object_new_string("O2"));
  json_object_object_add(r, "options", o);
  json_object *files = json_object_new_array(), *f = json_object_new_object();
  json_object_object_add(f, "path", json_object_new_string("test.cpp"));
  json_object_object_add(f, "content", json_object_new_string(src));
  json_object_array_add(files, f);
  json_object_object_add(r, "files", files);
  return r;
}

/* Send, time, check; returns the response (caller frees) or NULL. */
static json_object *timed(sbc_conn *c, json_object *req, double *secs) {
  double t0 = sbu_now_s();
  json_object *resp = bc_call(c, req);
  *secs = sbu_now_s() - t0;
  json_object_put(req);
  return resp;
}

static void record(kind *k, json_object *resp, double whole, int want_cached) {
  const char *st = bc_jstr(resp, "status");
  if (!st || strcmp(st, "ok") != 0) {
    k->failures++;
    if (!k->failure[0]) snprintf(k->failure, sizeof k->failure, "%.500s", resp ? json_object_to_json_string(resp) : "no response");
    return;
  }
  json_object *steps = bc_jget(resp, "steps");
  size_t n = steps ? json_object_array_length(steps) : 0;
  double ran = 0, ran_wall = 0;
  for (size_t i = 0; i < n; i++) {
    json_object *s = json_object_array_get_idx(steps, i);
    const char *name = bc_jstr(s, "name");
    json_object *cached = bc_jget(s, "cached");
    bool is_cached = cached && json_object_get_boolean(cached);
    if (name && strcmp(name, "compile") == 0) {
      if (want_cached >= 0 && is_cached != (want_cached == 1)) k->wrong_cached++;
      if (!is_cached) {
        bc_vec_push(&k->compile_step, step_time(s));
        ran += step_time(s);
        ran_wall += bc_jdouble(s, "wall_time_s");
      }
    } else {
      bc_vec_push(&k->run_step, step_time(s));
      ran += step_time(s);
      ran_wall += bc_jdouble(s, "wall_time_s");
    }
  }
  bc_vec_push(&k->whole, whole);
  bc_vec_push(&k->rest, whole - ran);
  bc_vec_push(&k->rest_upper, whole - ran_wall);
  double q = bc_jdouble(resp, "queue_time_s");
  if (isfinite(q)) bc_vec_push(&k->queue, q);
}

static json_object *kind_json(kind *k) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "id", json_object_new_string(k->id));
  json_object_object_add(o, "what", json_object_new_string(k->what));
  json_object_object_add(o, "whole_job_s", bc_summary(&k->whole));
  json_object_object_add(o, "compile_step_s", bc_summary(&k->compile_step));
  json_object_object_add(o, "run_step_s", bc_summary(&k->run_step));
  json_object_object_add(o, "rest_s", bc_summary(&k->rest));
  json_object_object_add(o, "rest_upper_s", bc_summary(&k->rest_upper));
  json_object_object_add(o, "queue_s", bc_summary(&k->queue));
  json_object_object_add(o, "wrong_cached_flag", json_object_new_int(k->wrong_cached));
  json_object_object_add(o, "failures", json_object_new_int(k->failures));
  json_object_object_add(o, "failure", k->failure[0] ? json_object_new_string(k->failure) : NULL);
  return o;
}

int main(int argc, char **argv) {
  static const struct option opts[] = {{"bin-dir", required_argument, 0, 'b'}, {"source", required_argument, 0, 's'},
                                       {"n", required_argument, 0, 'n'},       {"toolchain", required_argument, 0, 't'},
                                       {"out", required_argument, 0, 'O'},     {0, 0, 0, 0}};
  const char *bin_dir = NULL, *source = NULL, *out = NULL, *tc = "g++";
  int n = 10, c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 'b': bin_dir = optarg; break;
    case 's': source = optarg; break;
    case 'n': n = atoi(optarg); break;
    case 't': tc = optarg; break;
    case 'O': out = optarg; break;
    default: return 1;
    }
  }
  if (!bin_dir || !source || n < 1) {
    fprintf(stderr, "usage: bench_cache --bin-dir DIR --source FILE [--n N] [--toolchain NAME] [--out FILE]\n");
    return 1;
  }
  bc_require_wrapper("bench_cache");
  size_t src_len;
  char *src = (char *)bc_read_file(source, &src_len);
  if (!src) {
    perror(source);
    return 1;
  }
  json_object *doc = json_object_new_object();
  json_object_object_add(doc, "benchmark", json_object_new_string("cache"));
  json_object_object_add(doc, "argv", bc_cmdline_json(argc, argv));
  json_object_object_add(doc, "n", json_object_new_int(n));
  json_object_object_add(doc, "toolchain_name", json_object_new_string(tc));
  json_object_object_add(doc, "source_bytes", json_object_new_int64((int64_t)src_len));

  bc_daemon d;
  const char *extra[] = {"--jobs", "1", NULL};
  if (bc_daemon_start(&d, bin_dir, extra, true) < 0) return 2;
  json_object_object_add(doc, "daemon", json_object_new_string(d.cmdline));
  sbc_conn conn;
  if (bc_connect(&conn, d.sock) < 0) {
    bc_daemon_stop(&d);
    return 2;
  }
  /* Is the toolchain here? */
  json_object *q = json_object_new_object();
  json_object_object_add(q, "id", json_object_new_string("tc"));
  json_object_object_add(q, "type", json_object_new_string("toolchains"));
  json_object *tcs = bc_call(&conn, q);
  json_object_put(q);
  bool found = false;
  json_object *list = bc_jget(tcs, "toolchains");
  for (size_t i = 0; list && i < json_object_array_length(list); i++) {
    const char *name = bc_jstr(json_object_array_get_idx(list, i), "name");
    if (name && strcmp(name, tc) == 0) {
      found = true;
      json_object_object_add(doc, "toolchain_version", json_object_get(bc_jget(json_object_array_get_idx(list, i), "version")));
    }
  }
  json_object_put(tcs);
  int rc = 0;
  if (!found) {
    json_object_object_add(doc, "skipped", json_object_new_string("toolchain not installed here"));
    goto done;
  }

  enum { NK = 4 };
  kind kinds[NK] = {
      {.id = "cold", .what = "unique first comment line: a cache miss, g++ runs"},
      {.id = "hit", .what = "the same source again: a cache hit"},
      {.id = "run-only", .what = "raw exec of the hit's binary (./test, uploaded): the hit's run step alone"},
      {.id = "trivial", .what = "raw exec of /bin/true (no compile step)"},
  };
  double secs;
  char id[64], nonce[128];
  /* warm-up: store the hit's entry, and warm the daemon */
  json_object *r = timed(&conn, toolchain_req(tc, "warm", src), &secs);
  json_object_object_add(doc, "first_compile_s", json_object_new_double(secs));
  json_object_put(r);
  /* The compiled binary, from the cache entry a first hit names: the
   * run-only job runs exactly what a hit's run step runs. */
  r = timed(&conn, toolchain_req(tc, "probe", src), &secs);
  json_object *steps0 = bc_jget(r, "steps");
  const char *key = bc_jstr(steps0 ? json_object_array_get_idx(steps0, 0) : NULL, "cache_key");
  char bin_path[8400] = "";
  if (key && strlen(key) == 64) snprintf(bin_path, sizeof bin_path, "%s/cache/compile/objects/%.2s/%s/files/test", d.dir, key, key);
  json_object_put(r);
  size_t bin_len = 0;
  unsigned char *bin = bin_path[0] ? bc_read_file(bin_path, &bin_len) : NULL;
  if (!bin) {
    fprintf(stderr, "bench_cache: cannot read the cached binary %s\n", bin_path[0] ? bin_path : "(no cache_key in the hit)");
    rc = 2;
    goto done;
  }
  char *bin_b64 = sbu_base64_encode(bin, bin_len, NULL);
  free(bin);
  json_object_object_add(doc, "binary_bytes", json_object_new_int64((int64_t)bin_len));
  bc_vec paired = {0}; /* hit − run-only, same iteration */
  unsigned long long salt = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32);
  double t_start = sbu_now_s();
  for (int i = 0; i < n; i++) {
    double whole_of[NK] = {NAN, NAN, NAN, NAN};
    for (int j = 0; j < NK; j++) {
      int which = (i + j) % NK; /* rotate the order */
      snprintf(id, sizeof id, "%s-%d", kinds[which].id, i);
      json_object *req;
      if (which == 0) {
        snprintf(nonce, sizeof nonce, "// bench_cache variant %llx-%d\n", salt, i);
        size_t len = strlen(nonce) + src_len + 1;
        char *s = malloc(len);
        snprintf(s, len, "%s%s", nonce, src);
        req = toolchain_req(tc, id, s);
        free(s);
      } else if (which == 1) {
        req = toolchain_req(tc, id, src);
      } else if (which == 2) {
        /* the run step as the g++ toolchain makes it (toolchains/defs/gxx.json: argv, env) */
        req = json_object_new_object();
        json_object_object_add(req, "id", json_object_new_string(id));
        json_object_object_add(req, "type", json_object_new_string("exec"));
        json_object *files = json_object_new_array(), *f = json_object_new_object();
        json_object_object_add(f, "path", json_object_new_string("test"));
        json_object_object_add(f, "content_b64", json_object_new_string(bin_b64));
        json_object_object_add(f, "mode", json_object_new_int(493));
        json_object_array_add(files, f);
        json_object_object_add(req, "files", files);
        json_object *steps = json_object_new_array(), *st = json_object_new_object(), *av = json_object_new_array();
        json_object *env = json_object_new_object();
        json_object_object_add(env, "PATH", json_object_new_string("/usr/local/bin:/usr/bin:/bin"));
        json_object_object_add(env, "HOME", json_object_new_string("/tmp"));
        json_object_object_add(env, "TZ", json_object_new_string("UTC"));
        json_object_array_add(av, json_object_new_string("./test"));
        json_object_object_add(st, "name", json_object_new_string("run"));
        json_object_object_add(st, "argv", av);
        json_object_object_add(st, "env", env);
        json_object_array_add(steps, st);
        json_object_object_add(req, "steps", steps);
      } else {
        req = json_object_new_object();
        json_object_object_add(req, "id", json_object_new_string(id));
        json_object_object_add(req, "type", json_object_new_string("exec"));
        json_object *steps = json_object_new_array(), *st = json_object_new_object(), *av = json_object_new_array();
        json_object_array_add(av, json_object_new_string("/bin/true"));
        json_object_object_add(st, "argv", av);
        json_object_array_add(steps, st);
        json_object_object_add(req, "steps", steps);
      }
      r = timed(&conn, req, &secs);
      record(&kinds[which], r, secs, which >= 2 ? -1 : which == 1);
      whole_of[which] = secs;
      json_object_put(r);
    }
    if (isfinite(whole_of[1]) && isfinite(whole_of[2])) bc_vec_push(&paired, whole_of[1] - whole_of[2]);
    fprintf(stderr, "bench_cache: %d/%d (%.0f s)\n", i + 1, n, sbu_now_s() - t_start);
  }
  json_object *arr = json_object_new_array();
  for (int k = 0; k < NK; k++) {
    json_object_array_add(arr, kind_json(&kinds[k]));
    if (kinds[k].failures || kinds[k].wrong_cached) rc = 2;
  }
  json_object_object_add(doc, "kinds", arr);
  json_object_object_add(doc, "hit_minus_run_only_s", bc_summary(&paired));
  bc_vec_free(&paired);
  free(bin_b64);
  /* the daemon's own counters confirm hits and misses */
  q = json_object_new_object();
  json_object_object_add(q, "id", json_object_new_string("st"));
  json_object_object_add(q, "type", json_object_new_string("status"));
  json_object *st = bc_call(&conn, q);
  json_object_put(q);
  json_object_object_add(doc, "daemon_cache_stats", json_object_get(bc_jget(st, "cache")));
  json_object_put(st);
  json_object_object_add(doc, "duration_s", json_object_new_double(sbu_now_s() - t_start));
done:
  sbc_close(&conn);
  bc_daemon_stop(&d);
  if (bc_emit(doc, out) < 0) rc = 2;
  json_object_put(doc);
  free(src);
  return rc;
}
