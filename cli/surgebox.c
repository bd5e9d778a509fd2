/* surgebox: the client. Commands talk to surgeboxd over its socket; when no
 * daemon listens, a private one is started for the duration of the command
 * (the embedded default; --no-autostart refuses). The commands' bodies live
 * in the libraries; this is their table. */
#include "batch.h"
#include "cli.h"
#include "client.h"
#include "cliopt.h"
#include "eval_cli.h"
#include "merge.h"
#include "profile.h"
#include "regen.h"
#include "verify.h"

#include <stdio.h>
#include <string.h>

static int run_eval(const sbc_global *g, int argc, char **argv) {
  for (int k = 1; k < argc && strcmp(argv[k], "--") != 0; k++)
    if (!strcmp(argv[k], "--execute")) return sbr_eval_execute_main(argc, argv);
  return sbe_eval_main(argc, argv);
}
static int run_regen(const sbc_global *g, int argc, char **argv) { return sbr_regen_main(argc, argv); }
static int run_batch(const sbc_global *g, int argc, char **argv) {
  return sbr_batch_main(argc, argv, g->socket, g->autostart, g->profile);
}
static int run_merge(const sbc_global *g, int argc, char **argv) { return sbr_merge_main(argc, argv); }
static int run_metrics(const sbc_global *g, int argc, char **argv) { return sbc_metrics_main(argc, argv, g->socket); }
static int run_verify(const sbc_global *g, int argc, char **argv) { return sbr_verify_main(argc, argv); }
static int run_profile(const sbc_global *g, int argc, char **argv) { return sbf_profile_main(argc, argv); }
static int run_bins(const sbc_global *g, int argc, char **argv) { return sbr_bins_main(argc, argv); }
static int run_drmatrix(const sbc_global *g, int argc, char **argv) { return sbr_drmatrix_main(argc, argv); }

static const struct {
  const char *name, *summary;
  int (*run)(const sbc_global *, int, char **);
} commands[] = {
    {"exec", "run a program in /app holding FILEs, or compile and run them with a toolchain", sbc_exec_main},
    {"status", "the daemon's state and counters", sbc_status_main},
    {"toolchains", "the available toolchains and their options", sbc_toolchains_main},
    {"ping", "check that a daemon answers (never starts one)", sbc_ping_main},
    {"batch", "run a file of exec requests (JSON Lines), answers as JSON Lines; resumable", run_batch},
    {"metrics", "the daemon's counters as OpenMetrics text (never starts a daemon)", run_metrics},
    {"regen", "regenerate SURGE's references by running every item; fidelity report", run_regen},
    {"bins", "CPU-time histogram of a regenerated subset (SURGE's Figure 4)", run_bins},
    {"dr-matrix", "every DR snippet under every compiler configuration", run_drmatrix},
    {"eval", "score LLM predictions with SURGE's metrics (--execute: against fresh references)", run_eval},
    {"merge", "join the --out of each regen, batch or verify run made with --shard I/N into one run's output", run_merge},
    {"verify", "run a benchmark's generations sandboxed and score them (--benchmark cruxeval|surge)", run_verify},
    {"profile", "root file systems for jobs (create, list, show, verify, delete, run)", run_profile},
};

enum { O_VERSION = 0x7100 };
static const sbo_opt top_opts[] = {{"version", O_VERSION, NULL, "print the version and exit"}, {NULL, 0, NULL, NULL}};

static char footer[4096];
static const sbo_cmd top = {"surgebox", "[options] COMMAND [command options] [ARGS...]",
                            "Run programs in surgebox's sandbox and benchmarks over many of them.",
                            sbc_global_opts, top_opts, footer, true};

static void build_footer(void) {
  size_t n = 0;
  n += (size_t)snprintf(footer + n, sizeof footer - n, "commands (surgebox COMMAND --help for each):\n");
  for (size_t i = 0; i < sizeof commands / sizeof *commands && n < sizeof footer; i++)
    n += (size_t)snprintf(footer + n, sizeof footer - n, "  %-12s %s\n", commands[i].name, commands[i].summary);
  if (n < sizeof footer)
    snprintf(footer + n, sizeof footer - n,
             "\nenvironment: SURGEBOX_SOCKET (socket path), SURGEBOXD (daemon binary for autostart)\n"
             "exit status: 0 success (for exec: the job ran, whatever the program did), 1 usage error,\n"
             "2 daemon or sandbox failure\n");
}

int main(int argc, char **argv) {
  sbc_global g = {NULL, true, NULL};
  build_footer();
  sbo_parser p;
  sbo_init(&p, &top, argc, argv);
  int k;
  const char *v;
  while ((k = sbo_next(&p, &v)) > 0) {
    if (k == O_VERSION) {
      printf("surgebox %s\n", SURGEBOX_VERSION);
      sbo_done(&p);
      return 0;
    }
    sbc_global_apply(&g, k, v);
  }
  int rc = k == SBO_STOP ? p.status : -1;
  if (rc < 0 && p.n_pos == 0) rc = sbo_usage_error(&p, "no COMMAND given");
  for (size_t i = 0; rc < 0 && i < sizeof commands / sizeof *commands; i++)
    if (!strcmp(p.pos[0], commands[i].name)) rc = commands[i].run(&g, p.argc - (int)(p.pos - p.argv), p.pos);
  if (rc < 0) rc = sbo_usage_error(&p, "unknown command '%s'", p.pos[0]);
  sbo_done(&p);
  return rc;
}
