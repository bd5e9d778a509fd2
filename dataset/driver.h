/* The benchmark driver (prefix sbr_drv / sbr_run): what regen, dr-matrix,
 * verify --benchmark cruxeval|surge (= eval --execute) and batch share.
 * A benchmark brings an adapter (item -> exec request), a scorer (responses
 * -> its output) and a row in verify's table (verify_cli.c); the driver
 * does the rest:
 *   options     the daemon group (--socket, --no-autostart, --profile:
 *               client/command.h) and the shard group (--shard, --shards:
 *               shard.h), declared once, given before or after the
 *               command's name; --jobs N
 *   connection  one per run, from the ctx; the profile is checked with the
 *               daemon (its toolchains are asked for) before anything runs;
 *               with --endpoints (or $SURGEBOX_ENDPOINTS) a fleet of daemons
 *               instead (client/fleet.h), beneath the pump: resume and
 *               shards are unchanged, each answer says its "daemon"
 *   the pump    many requests through the connection (pump.c), a window of
 *               2 x jobs + 2, progress, SIGINT/SIGTERM -> 130, checkpoints
 *   failures    a failure of surgebox (failure.h) is counted, never data:
 *               the run ends with exit status 2 and a line naming them
 *   files       atomic JSON writes; --dump-requests (nothing runs)
 * Resume is each benchmark's own (what its --out holds), checked before
 * the driver connects. */
#ifndef SURGEBOX_DRIVER_H
#define SURGEBOX_DRIVER_H

#include "client.h"
#include "command.h"
#include "failure.h"
#include "pump.h"
#include "shard.h"

#include <json-c/json.h>
#include <stdbool.h>

/* ---- options every benchmark run takes ----
 * A command's parser starts from a copy of the ctx given before its name
 * and hands every key to sbr_run_apply (the global options after the name
 * land in that copy); it then calls X_run(&ctx, &opts). */
typedef struct {
  sbr_shard_args shard; /* the shard group as given */
  int jobs;             /* --jobs N; 0: the CPUs */
  const char *dump;     /* --dump-requests FILE: write the requests, run nothing */
} sbr_run_opts;

/* --jobs N (0: the CPUs) and --dump-requests FILE, declared once */
enum { SBR_O_JOBS = 0x7300, SBR_O_DUMP };
extern const sbo_opt sbr_jobs_opts[];
/* sbo_cmd.groups: {daemon, shard, jobs} for a benchmark run; {daemon,
 * shard} for one whose jobs option is its own (batch's --concurrency, eval's
 * --jobs). */
extern const sbo_opt *const sbr_run_groups[];
extern const sbo_opt *const sbr_shardable_groups[];
/* --cache-dir DIR, declared once: into T's cache_dir, for the driver's
 * cache_dir (the private daemon's compile cache) */
#define SBR_CACHE_DIR_OPT(T) {"cache-dir", 0, "DIR", "the private daemon's compile cache", SBO_STR, SBO_AT(T, cache_dir)}
/* A key of the daemon group (into ctx), of the shard or jobs group (into
 * o): true if it was one; a bad --jobs value is reported through p and
 * *rc set to the exit status. */
bool sbr_run_apply(const sbo_parser *p, sbc_ctx *ctx, sbr_run_opts *o, int key, const char *val, int *rc);
/* A command's own options: one key into opts; 0, or the exit status of a
 * mistake it reported through p. */
typedef int (*sbr_option_fn)(sbo_parser *p, void *opts, int key, const char *val);
/* A benchmark command's parse loop, written once (sbo_parse): each option
 * the command's tables declare stored into opts where its row says, each
 * key of the shared groups to sbr_run_apply (into ctx and run), any other
 * key to option (NULL: none), until the options end. 0; -1 after --help;
 * else the exit status of a mistake. The caller then checks the
 * positionals (p->pos) and its own rules, and calls sbo_done. */
int sbr_parse(sbo_parser *p, const sbo_cmd *cmd, int argc, char **argv, sbc_ctx *ctx, sbr_run_opts *run,
              sbr_option_fn option, void *opts);
/* The run's shard from the shard group as given (sbr_shard_from_args, its
 * errors said as prog's) into *shard. A shard's part is what it writes for
 * surgebox merge, so a sharded run without its output (has_out false) is
 * refused: "PROG: --shard needs NEEDS". 0, or 1 (the exit status). */
int sbr_run_shard(const char *prog, const sbr_run_opts *run, bool has_out, const char *needs, sbr_shard *shard);
/* A command's entry point from its parse (0 parsed, -1 after --help, else
 * the exit status of a mistake) and its run on what was parsed:
 * int NAME(const sbc_ctx *ctx, int argc, char **argv). */
#define SBR_COMMAND(NAME, OPTS, PARSE, RUN)              \
  int NAME(const sbc_ctx *ctx, int argc, char **argv) { \
    sbc_ctx c = *ctx;                                   \
    OPTS o;                                             \
    int rc = PARSE(argc, argv, &c, &o);                 \
    if (rc) return rc < 0 ? 0 : rc;                     \
    return RUN(&c, &o);                                 \
  }
/* jobs, else the CPUs (>= 1). */
int sbr_run_jobs(int jobs);

/* ---- one run's connection ---- */
typedef struct {
  const char *label;       /* "regen": prefixes every message */
  sbc_ctx ctx;
  int jobs;                /* >= 1: a private daemon's --jobs, the pump's window */
  const char *cache_dir;   /* a private daemon's --cache-dir, or NULL */
  sbc_conn conn;
  sbc_fleet *fleet;        /* instead of conn when ctx.endpoints names a fleet (and no --socket is given) */
  bool connected;
  json_object *toolchains; /* the daemon's list for ctx.profile (owned), once connected */
  sbr_failures failures;   /* failures of surgebox met by this run */
} sbr_driver;

void sbr_driver_init(sbr_driver *d, const char *label, const sbc_ctx *ctx, int jobs);
/* Connect (once) and ask for ctx.profile's toolchains: an unknown profile or
 * a daemon that does not answer is said on stderr before anything runs.
 * 0, or 2. */
int sbr_driver_connect(sbr_driver *d);
/* req runs in ctx.profile unless it names a profile itself. */
void sbr_driver_profile(const sbr_driver *d, json_object *req);
/* One request and its answer (not through the pump): the answer, owned, or
 * NULL (the connection was lost). */
json_object *sbr_driver_ask(sbr_driver *d, json_object *req);
/* p through the connection (connecting first): window (0: 2 x jobs + 2),
 * label, interrupts and failures filled in. 0 every request answered, 2 the
 * connection was lost, 130 interrupted. */
int sbr_driver_pump(sbr_driver *d, sbr_pump *p);
/* --dump-requests PATH ("-": stdout): p's requests written, nothing run.
 * 0 or 2. */
int sbr_driver_dump(sbr_driver *d, sbr_pump *p, const char *path);
/* Closes the connection; rc, else 2 when a failure of surgebox was met
 * (said on stderr: how many, the first), else 130 when interrupted. */
int sbr_driver_finish(sbr_driver *d, int rc);
/* SIGINT or SIGTERM arrived during a driver's pump. */
bool sbr_driver_interrupted(void);
/* Stop the pump as an interrupt would (a write that cannot go on). */
void sbr_driver_stop(void);

/* ---- files ---- */
/* o to path via path.tmp and rename; flags: JSON_C_TO_STRING_* (the
 * first form: pretty). 0 or -1. */
int sbr_write_json_atomic(const char *path, json_object *o);
int sbr_write_json_atomic_ext(const char *path, json_object *o, int flags);

#endif
