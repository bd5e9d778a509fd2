/* The checker judge (issue 38): a case compared by a special judge, a
 * program the request gives in a toolchain of its own. It is built once per
 * step, in a workspace of its own, through the compile cache; its built
 * files are then kept here and copied into a fresh workspace for each case,
 * where it runs in a sandbox of its own, after the program's sandbox ended
 * and its workspace is gone, testlib-style:
 *   CHECKER /app/.sb_check/input /app/.sb_check/output /app/.sb_check/answer
 * (the case's stdin, the program's stdout, the expected bytes). Its exit
 * status is the verdict (sbj_checker_verdict), or with "verdict":
 * "first_line" its first stdout line. Neither the checker nor the expected
 * bytes ever enter the program's sandbox; the program's output enters the
 * checker's as a file, read by the checker's uid only. The checker runs
 * with the host's toolchains (not a job's profile). */
#include "internal.h"
#include "cleanup.h"
#include "json_seconds.h"
#include "judge.h"
#include "sha256.h"

#include <errno.h>
#include <nettle/sha2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CHECKER_FORMAT "surgebox-checker-1"
#define CHECKER_MAX_BYTES ((uint64_t)64 << 20) /* its built /app, copied per case */
#define CHECKER_MAX_FILES 2000
#define MESSAGE_MAX 256

typedef struct {
  char *path;
  unsigned char *data;
  size_t len;
  mode_t mode;
} built_file;

struct sbd_checker {
  const sbp_checker *spec;
  sbt_plan plan;
  bool has_plan;
  uint64_t tc_mtime_ns, tc_size;
  char **argv;            /* the run step's argv + input output answer */
  sb_workspace *ws;       /* the build's, then each check's */
  bool building;
  bool cache_leader;
  char cache_key[SBU_SHA256_HEX];
  sbd_snapshot before;
  built_file *built;
  size_t n_built;
  uint64_t built_bytes;
};

static const char *const io_names[3] = {".sb_check/input", ".sb_check/output", ".sb_check/answer"};
/* "io": "sandboxfusion" (its special_judge_program's files, in its cwd): the
 * input, the EXPECTED output as stdout.txt, the program's output as
 * answer.txt; in the order of io_names' data (input, output, answer). */
static const char *const sf_io_names[3] = {"stdin.txt", "answer.txt", "stdout.txt"};

static void first_line(const sb_buf *b, char *out, size_t n) {
  size_t k = 0;
  for (size_t i = 0; b->data && i < b->len && k + 1 < n; i++) {
    unsigned char ch = b->data[i];
    if (ch == '\n') break;
    out[k++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?'; /* printable ASCII: a message, never a payload */
  }
  while (k && (out[k - 1] == ' ' || out[k - 1] == '\r' || out[k - 1] == '\t')) k--;
  out[k] = '\0';
}

int sbd_checker_new(sbd_job *job, const sbp_checker *spec, sbd_checker **out, char err[SB_ERR_MAX]) {
  const sbt_registry *reg = sbd_profile_registry(job->srv, NULL);
  const sbt_toolchain *tc = reg ? sbt_find(reg, spec->toolchain) : NULL;
  if (!tc) {
    snprintf(err, SB_ERR_MAX, "checker.toolchain \"%s\" is not installed here (surgebox toolchains lists them)",
             spec->toolchain);
    return -1;
  }
  SBU_AUTOFREE sbd_checker *k = calloc(1, sizeof *k);
  SBU_AUTOFREE sbt_file *files = calloc(spec->n_files + 1, sizeof *files);
  if (!k || !files) {
    snprintf(err, SB_ERR_MAX, "out of memory");
    return -1;
  }
  k->spec = spec;
  for (size_t i = 0; i < spec->n_files; i++)
    files[i] = (sbt_file){spec->files[i].path, spec->files[i].data, spec->files[i].len};
  char msg[SBT_ERR_MAX] = "";
  sbt_plan_result pr = sbt_plan_make(tc, spec->options, files, spec->n_files, NULL, &spec->limits, &k->plan, msg);
  if (pr != SBT_OK) {
    snprintf(err, SB_ERR_MAX, "checker: %s", msg[0] ? msg : "its toolchain cannot plan these files");
    return -1;
  }
  k->has_plan = true;
  k->tc_mtime_ns = tc->bin_mtime_ns;
  k->tc_size = tc->bin_size;
  const sbt_step *run = &k->plan.steps[k->plan.n_steps - 1];
  size_t n = 0;
  while (run->argv[n]) n++;
  k->argv = calloc(n + 4, sizeof *k->argv);
  if (!k->argv) {
    sbd_checker_free(sbu_take_ptr(&k), job->slot);
    snprintf(err, SB_ERR_MAX, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < n; i++) k->argv[i] = run->argv[i];
  static char io_abs[3][40];
  for (int i = 0; i < 3 && !spec->sandboxfusion_io; i++) { /* sandboxfusion: no arguments */
    snprintf(io_abs[i], sizeof io_abs[i], "/app/%s", io_names[i]);
    k->argv[n + i] = io_abs[i];
  }
  *out = sbu_take_ptr(&k);
  return 0;
}

/* ---- the build ---- */
static void hash_str(struct sha256_ctx *h, const char *s) {
  sha256_update(h, strlen(s ? s : "") + 1, (const uint8_t *)(s ? s : ""));
}
static void hash_u64(struct sha256_ctx *h, uint64_t v) { sha256_update(h, sizeof v, (const uint8_t *)&v); }

/* What the compile depends on: the toolchain (its identity, binary), the
 * compile step as planned, the files under their /app names. */
static void cache_key(const sbd_checker *k, char out[SBU_SHA256_HEX]) {
  struct sha256_ctx h;
  sha256_init(&h);
  hash_str(&h, CHECKER_FORMAT);
  hash_str(&h, json_object_to_json_string_ext(k->plan.identity, JSON_C_TO_STRING_PLAIN));
  hash_u64(&h, k->tc_mtime_ns);
  hash_u64(&h, k->tc_size);
  hash_str(&h, k->plan.cwd);
  for (size_t m = 0; m < k->plan.n_mounts; m++) {
    hash_str(&h, k->plan.mounts[m].source);
    hash_str(&h, k->plan.mounts[m].target);
  }
  const sbt_step *c = &k->plan.steps[0];
  for (char **a = c->argv; *a; a++) hash_str(&h, *a);
  hash_str(&h, "\x01env");
  for (char **e = k->plan.env; e && *e; e++) hash_str(&h, *e);
  hash_u64(&h, c->limits.memory_mib);
  hash_u64(&h, c->limits.pids);
  hash_u64(&h, (uint64_t)(c->limits.wall_time_s * 1000));
  hash_u64(&h, (uint64_t)(c->limits.cpu_time_s * 1000));
  for (size_t i = 0; i < k->spec->n_files; i++) {
    const sbp_file *f = &k->spec->files[i];
    hash_str(&h, i == k->plan.main_index ? k->plan.main_path : f->path);
    hash_u64(&h, f->has_mode ? f->mode : 0644);
    hash_u64(&h, f->len);
    sha256_update(&h, f->len, f->data);
  }
  sbu_sha256_digest_hex(&h, out);
}

typedef struct {
  sbd_checker *k;
  char err[SB_ERR_MAX];
} built_walk;

static int keep_one(const char *rel, const struct stat *st, int dirfd, const char *name, void *ud) {
  built_walk *w = ud;
  sbd_checker *k = w->k;
  if (!S_ISREG(st->st_mode)) return 0;
  if (k->n_built >= CHECKER_MAX_FILES) {
    snprintf(w->err, sizeof w->err, "the checker's built /app holds over %d files", CHECKER_MAX_FILES);
    return -1;
  }
  unsigned char *data = NULL;
  size_t len = 0;
  mode_t mode = 0644;
  if (sb_workspace_read_at(dirfd, name, CHECKER_MAX_BYTES - k->built_bytes, &data, &len, &mode, w->err) < 0) return -1;
  built_file *grown = realloc(k->built, (k->n_built + 1) * sizeof *grown);
  char *path = strdup(rel);
  if (!grown || !path) {
    free(data);
    free(path);
    if (grown) k->built = grown;
    snprintf(w->err, sizeof w->err, "out of memory");
    return -1;
  }
  k->built = grown;
  k->built[k->n_built++] = (built_file){path, data, len, mode & 0777};
  k->built_bytes += len;
  return 0;
}

/* The built workspace read once, then gone. */
static int keep_built(sbd_checker *k, int slot, char err[SB_ERR_MAX]) {
  built_walk w = {.k = k};
  char werr[SB_ERR_MAX] = "";
  int rc = sb_workspace_walk(k->ws, keep_one, &w, werr);
  sb_workspace_destroy_in_slot(k->ws, slot);
  k->ws = NULL;
  if (rc < 0) snprintf(err, SB_ERR_MAX, "the checker's build cannot be kept: %s", w.err[0] ? w.err : werr);
  return rc < 0 ? -1 : 0;
}

static int write_sources(sbd_checker *k, char err[SB_ERR_MAX]) {
  for (size_t i = 0; i < k->spec->n_files; i++) {
    const sbp_file *f = &k->spec->files[i];
    const char *path = i == k->plan.main_index ? k->plan.main_path : f->path;
    if (sb_workspace_write(k->ws, path, f->data, f->len, f->has_mode ? f->mode : 0644, err) < 0) return -1;
  }
  return 0;
}

/* Why a compile document failed, bounded: its status, exit code, stderr's start. */
static void build_failure(json_object *doc, char err[SB_ERR_MAX]) {
  json_object *st = NULL, *ex = NULL, *se = NULL;
  json_object_object_get_ex(doc, "status", &st);
  json_object_object_get_ex(doc, "exit_code", &ex);
  json_object_object_get_ex(doc, "stderr", &se);
  char text[MESSAGE_MAX] = "";
  const char *s = se ? json_object_get_string(se) : "";
  size_t n = strlen(s) < sizeof text - 1 ? strlen(s) : sizeof text - 1;
  for (size_t i = 0; i < n; i++) text[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : ' ';
  text[n] = '\0';
  snprintf(err, SB_ERR_MAX, "the checker did not build (%s, exit %s): %s", st ? json_object_get_string(st) : "?",
           ex ? json_object_get_string(ex) : "none", text);
}

int sbd_checker_build_begin(sbd_checker *k, sbd_job *job, char err[SB_ERR_MAX]) {
  if (sb_workspace_create(job->srv->rt, 512, &k->ws, err) < 0 || write_sources(k, err) < 0) return -1;
  if (k->plan.n_steps < 2 || !k->plan.steps[0].is_compile) /* an interpreted checker: its sources are its build */
    return keep_built(k, job->slot, err);
  cache_key(k, k->cache_key);
  json_object *doc = NULL;
  sbd_cache_lookup_result lr = sbd_cache_lookup(job->srv->cache, k->cache_key, (sbd_call){0}, k->ws, &doc);
  if (lr == SBD_CACHE_HIT) {
    json_object *st = NULL;
    json_object_object_get_ex(doc, "status", &st);
    bool ok = st && strcmp(json_object_get_string(st), "ok") == 0;
    if (!ok) build_failure(doc, err);
    json_object_put(doc);
    if (!ok) return -1;
    return keep_built(k, job->slot, err);
  }
  if (lr == SBD_CACHE_LEAD) {
    k->cache_leader = true;
    sbd_snapshot_take(k->ws, &k->before);
  }
  k->building = true;
  return 1;
}

int sbd_checker_build_end(sbd_checker *k, sbd_job *job, sb_result *r, char err[SB_ERR_MAX]) {
  k->building = false;
  json_object *doc = sb_result_to_json(r, job->srv->rt);
  if (k->cache_leader) {
    bool deterministic = (r->status == SB_OK || r->status == SB_RUNTIME_ERROR) && !job->cancelled;
    if (deterministic && doc) sbd_cache_store(job->srv->cache, k->cache_key, doc, k->ws, &k->before);
    else sbd_cache_abandon(job->srv->cache, k->cache_key);
    k->cache_leader = false;
  }
  int rc = 0;
  if (r->status != SB_OK) {
    if (doc) build_failure(doc, err);
    else snprintf(err, SB_ERR_MAX, "the checker did not build (%s)", sb_status_name(r->status));
    rc = -1;
  }
  if (doc) json_object_put(doc);
  sb_result_free(r);
  if (rc < 0) {
    sb_workspace_destroy_in_slot(k->ws, job->slot);
    k->ws = NULL;
    return -1;
  }
  return keep_built(k, job->slot, err);
}

/* ---- one check ---- */
int sbd_checker_case_begin(sbd_checker *k, sbd_job *job, const void *input, size_t input_len, const void *output,
                           size_t output_len, const void *answer, size_t answer_len, char err[SB_ERR_MAX]) {
  if (sb_workspace_create(job->srv->rt, 512, &k->ws, err) < 0) return -1;
  for (size_t f = 0; f < k->n_built; f++)
    if (sb_workspace_write(k->ws, k->built[f].path, k->built[f].data, k->built[f].len, k->built[f].mode, err) < 0)
      return -1;
  const void *data[3] = {input ? input : "", output ? output : "", answer ? answer : ""};
  size_t len[3] = {input_len, output_len, answer_len};
  const char *const *names = k->spec->sandboxfusion_io ? sf_io_names : io_names;
  for (int i = 0; i < 3; i++)
    if (sb_workspace_write(k->ws, names[i], data[i], len[i], 0400, err) < 0) return -1;
  return 0;
}

void sbd_checker_spec(const sbd_checker *k, sb_spec *spec) {
  const sbt_step *s = k->building ? &k->plan.steps[0] : &k->plan.steps[k->plan.n_steps - 1];
  spec->workspace = k->ws;
  spec->argv = (const char *const *)(k->building ? s->argv : k->argv);
  spec->envp = (const char *const *)k->plan.env;
  spec->cwd = k->plan.cwd;
  spec->extra_mounts = k->plan.mounts;
  spec->n_extra_mounts = k->plan.n_mounts;
  spec->seccomp_extra_deny = (const char *const *)k->plan.seccomp_deny;
  spec->seccomp_extra_allow = NULL;
  spec->root = NULL; /* the host's toolchains */
  spec->stdin_data = NULL;
  spec->stdin_len = 0;
  spec->merge_output = false;
  spec->warm = false;
  spec->warm_refused = NULL;
  spec->trace = false;
  spec->limits = s->limits;
}

bool sbd_checker_building(const sbd_checker *k) { return k->building; }

/* The first line's word: testlib's names and the usual short ones. */
static const char *line_verdict(const char *line) {
  static const struct {
    const char *word, *verdict;
  } words[] = {{"ok", "accepted"},          {"accepted", "accepted"},         {"ac", "accepted"},
               {"wrong_answer", "wrong_answer"}, {"wrong answer", "wrong_answer"}, {"wa", "wrong_answer"},
               {"presentation_error", "wrong_answer"}, {"presentation error", "wrong_answer"}, {"pe", "wrong_answer"}};
  for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
    size_t n = strlen(words[i].word);
    if (strncasecmp(line, words[i].word, n) == 0 && (line[n] == '\0' || line[n] == ' ' || line[n] == ':'))
      return words[i].verdict;
  }
  return "judge_error";
}

const char *sbd_checker_case_end(sbd_checker *k, sbd_job *job, sb_result *r, json_object *case_doc, char *why,
                                 size_t why_len) {
  sb_workspace_destroy_in_slot(k->ws, job->slot);
  k->ws = NULL;
  bool exited = r->status == SB_OK || r->status == SB_RUNTIME_ERROR;
  char out_line[MESSAGE_MAX], err_line[MESSAGE_MAX];
  first_line(&r->out, out_line, sizeof out_line);
  first_line(&r->err, err_line, sizeof err_line);
  const char *verdict;
  if (!exited) verdict = "judge_error"; /* a crash, a signal, a limit: the checker's failure */
  else if (k->spec->first_line) verdict = line_verdict(out_line);
  else verdict = sbj_checker_verdict(true, r->exit_code);
  const char *message = err_line[0] ? err_line : out_line;
  json_object *d = json_object_new_object();
  if (d) {
    json_object_object_add(d, "exit_code", r->exit_code >= 0 && exited ? json_object_new_int(r->exit_code) : NULL);
    const char *abbrev = r->signal ? sigabbrev_np(r->signal) : NULL;
    char sig[32];
    snprintf(sig, sizeof sig, "SIG%s", abbrev ? abbrev : "?");
    json_object_object_add(d, "signal", r->signal ? json_object_new_string(sig) : NULL);
    json_object_object_add(d, "limit_hit", r->limit_hit ? json_object_new_string(r->limit_hit) : NULL);
    json_object_object_add(d, "message", json_object_new_string(message));
    json_object_object_add(d, "cpu_time_s", sbu_json_seconds(r->cpu_time_s));
    json_object_object_add(d, "wall_time_s", sbu_json_seconds(r->wall_time_s));
    if (r->error[0]) json_object_object_add(d, "error", json_object_new_string(r->error));
    if (case_doc) json_object_object_add(case_doc, "checker", d);
    else json_object_put(d);
  }
  if (strcmp(verdict, "accepted") != 0) {
    if (!exited)
      snprintf(why, why_len, "the checker failed (%s%s%s)", sb_status_name(r->status), r->limit_hit ? ": " : "",
               r->limit_hit ? r->limit_hit : "");
    else if (strcmp(verdict, "judge_error") == 0 && !k->spec->first_line)
      snprintf(why, why_len, "the checker exited %d (testlib: 3 is fail; only 0, 1, 2 are verdicts): %s", r->exit_code,
               message);
    else snprintf(why, why_len, "checker: %s", message[0] ? message : "(no message)");
  }
  sb_result_free(r);
  return verdict;
}

void sbd_checker_free(sbd_checker *k, int slot) {
  if (!k) return;
  sb_workspace_destroy_in_slot(k->ws, slot);
  sbd_snapshot_free(&k->before);
  for (size_t f = 0; f < k->n_built; f++) {
    free(k->built[f].path);
    free(k->built[f].data);
  }
  free(k->built);
  free(k->argv);
  if (k->has_plan) sbt_plan_free(&k->plan);
  free(k);
}

void sbd_checker_abandon(sbd_checker *k, sbd_job *job) {
  if (k && k->cache_leader) {
    sbd_cache_abandon(job->srv->cache, k->cache_key);
    k->cache_leader = false;
  }
}
