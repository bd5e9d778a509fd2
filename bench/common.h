/* Shared helpers of the benchmark drivers (prefix bc_): clocks, sample
 * statistics, a private surgeboxd, raw JSON Lines sends, /proc readings and
 * the JSON the drivers print for bench/report.py.
 *
 * Benchmarks print ratios against a baseline measured in the same run; they
 * never assert timings (HACKING.md). Every driver that executes a sandboxed
 * program is started by bench/run inside
 *   unshare --mount --propagation private --pid --fork --mount-proc
 * and refuses to run outside such a wrapper unless --no-wrapper-check. */
#ifndef SURGEBOX_BENCH_COMMON_H
#define SURGEBOX_BENCH_COMMON_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "client.h"
#include "base64.h"
#include "clock.h" /* sbu_now_s, the bench clock */

/* ---- clocks ---- */
void bc_sleep(double s);

/* ---- samples ---- */
typedef struct {
  double *v;
  size_t n, cap;
} bc_vec;

void bc_vec_push(bc_vec *s, double x);
void bc_vec_free(bc_vec *s);
/* Quantile (0..1) by linear interpolation between order statistics; NAN when empty. */
double bc_quantile(const bc_vec *s, double q);
double bc_min(const bc_vec *s);
double bc_max(const bc_vec *s);
/* {"n","min","p10","q1","median","q3","p90","max"} */
json_object *bc_summary(const bc_vec *s);

/* ---- files ---- */
unsigned char *bc_read_file(const char *path, size_t *len);
/* A fresh directory /tmp/<prefix>XXXXXX (mode 0755); removed by bc_rm_rf. */
int bc_mkdtemp(const char *prefix, char *out, size_t cap);
void bc_rm_rf(const char *path);

/* ---- the wrapper rule ---- */
/* True when we are in a pid namespace other than the host's first one
 * (bench/run's unshare wrapper). Exits with a message otherwise, unless
 * SURGEBOX_BENCH_NO_WRAPPER_CHECK=1. */
void bc_require_wrapper(const char *prog);

/* ---- a private surgeboxd ---- */
typedef struct {
  pid_t pid;
  char dir[4096];  /* its socket, state and (unless given) cache dir live here */
  char sock[4200];
  char cmdline[8192]; /* as started, for RESULTS.md */
} bc_daemon;

/* Start BIN_DIR/surgeboxd --socket DIR/s.sock --state-dir DIR/state
 * [--cache-dir DIR/cache] EXTRA... and wait for its --ready-fd. */
int bc_daemon_start(bc_daemon *d, const char *bin_dir, const char *const *extra, bool own_cache_dir);
void bc_daemon_stop(bc_daemon *d);
/* VmRSS / VmHWM etc. in kB from /proc/PID/status; -1 when absent. */
long bc_proc_status_kb(pid_t pid, const char *field);

/* ---- connections (sbc_conn from daemon/client.h) ---- */
int bc_connect(sbc_conn *c, const char *sock);
int bc_send_raw(int fd, const char *data, size_t len);
/* A request and its response, blocking; NULL on error. */
json_object *bc_call(sbc_conn *c, json_object *req);
/* Shorthands for response documents. */
const char *bc_jstr(json_object *o, const char *key);
double bc_jdouble(json_object *o, const char *key);
json_object *bc_jget(json_object *o, const char *key);

/* ---- output ---- */
/* Print the driver's JSON document to stdout (pretty) or to --out FILE. */
int bc_emit(json_object *doc, const char *out_path);
json_object *bc_cmdline_json(int argc, char **argv);

#endif
