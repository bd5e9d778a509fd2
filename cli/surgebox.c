/* surgebox: the client. Commands talk to surgeboxd over its socket; when no
 * daemon listens, a private one is started for the duration of the command
 * (the embedded default; --no-autostart refuses). The commands' bodies live
 * in the libraries; this is their table. */
#include "batch.h"
#include "cli.h"
#include "client.h"
#include "command.h"
#include "cliopt.h"
#include "eval_cli.h"
#include "merge.h"
#include "nearest.h"
#include "profile.h"
#include "regen.h"
#include "report.h"
#include "traces/traces.h"
#include "verify.h"

#include <stdio.h>
#include <string.h>

/* eval scores files unless --execute asks it to run the items (then it is
 * verify --benchmark surge): without it no global option applies. */
static int eval_main(const sbc_ctx *ctx, int argc, char **argv) {
  for (int k = 1; k < argc && strcmp(argv[k], "--") != 0; k++)
    if (!strcmp(argv[k], "--execute")) return sbs_eval_execute_main(ctx, argc, argv);
  const char *bad = sbc_refused_option(ctx->given, 0);
  if (bad) {
    fprintf(stderr, "surgebox eval: %s does not apply to 'eval' without --execute (it talks to no daemon); drop it\n", bad);
    return SBO_EXIT_USAGE;
  }
  return sbe_eval_main(ctx, argc, argv);
}
/* profile works on local root file systems: it takes none of the global options */
static int profile_main(const sbc_ctx *ctx, int argc, char **argv) { return sbf_profile_main(argc, argv); }

enum { D = SBC_CMD_DAEMON, A = SBC_CMD_AUTOSTART, P = SBC_CMD_PROFILE, S = SBC_CMD_SHARDABLE, F = SBC_CMD_FLEET };
static const sbc_command commands[] = {
    {"exec", "run a program in /app holding FILEs, or compile and run them with a toolchain", D | A | P, sbc_exec_main},
    {"cases", "build a program once and run it against every case of a TESTS.jsonl, judged; a table or --json",
     D | A | P, sbc_cases_main},
    {"trace", "run a Python, C or C++ FILE under a tracer: its execution trace (jsonl, lines, reval, cwm)", D | A | P,
     sbc_trace_main},
    {"trace-dataset", "trace every program of CRUXEval or a JSON Lines file: ground-truth traces; resumable",
     D | A | P | S | F, sbtd_main},
    {"status", "the daemon's state and counters", D | A, sbc_status_main},
    {"toolchains", "the available toolchains and their options", D | A | P, sbc_toolchains_main},
    {"ping", "check that a daemon answers (never starts one)", D, sbc_ping_main},
    {"doctor", "can a job run here? each mechanism checked, one line each with the fix", D | A | P, sbc_doctor_main},
    {"batch", "run a file of exec requests (JSON Lines), answers as JSON Lines; resumable", D | A | P | S | F, sbr_batch_main},
    {"metrics", "the daemon's counters as OpenMetrics text (never starts a daemon)", D, sbc_metrics_main},
    {"regen", "regenerate SURGE's references by running every item; fidelity report", D | A | P | S | F, sbs_regen_main},
    {"bins", "CPU-time histogram of a regenerated subset (SURGE's Figure 4)", 0, sbs_bins_main},
    {"report", "one self-contained HTML page of a regen --out directory: fidelity, diffs, bins, scores", 0,
     sbrp_report_main},
    {"dr-matrix", "every DR snippet under every compiler configuration", D | A | P | S | F, sbs_drmatrix_main},
    {"eval", "score LLM predictions with SURGE's metrics (--execute: against fresh references)", D | A | P | S | F, eval_main},
    {"merge", "join the --out of each regen, batch or verify run made with --shard I/N into one run's output", 0,
     sbr_merge_main},
    {"verify", "run a benchmark's generations sandboxed and score them (--benchmark cruxeval|surge|traces)", D | A | P | S | F,
     sbr_verify_main},
    {"profile", "root file systems for jobs (create, list, show, verify, delete, run)", 0, profile_main},
};

enum { O_VERSION = 0x7100 };
static const sbo_opt top_opts[] = {{"version", O_VERSION, NULL, "print the version and exit"}, {NULL, 0, NULL, NULL}};

static char footer[4096];
static const sbo_opt *const top_groups[] = {sbc_endpoints_opts, NULL};
static const sbo_cmd top = {"surgebox", "[options] COMMAND [command options] [ARGS...]",
                            "Run programs in surgebox's sandbox and benchmarks over many of them.",
                            sbc_daemon_opts, top_opts, footer, true, top_groups};

static void build_footer(void) {
  size_t n = 0;
  n += (size_t)snprintf(footer + n, sizeof footer - n, "commands (surgebox COMMAND --help for each):\n");
  for (size_t i = 0; i < sizeof commands / sizeof *commands && n < sizeof footer; i++)
    n += (size_t)snprintf(footer + n, sizeof footer - n, "  %-12s %s\n", commands[i].name, commands[i].summary);
  if (n < sizeof footer)
    snprintf(footer + n, sizeof footer - n,
             "\nenvironment: SURGEBOX_SOCKET (socket path), SURGEBOX_ENDPOINTS (a fleet: batch, verify, regen),\n"
             "SURGEBOXD (daemon binary for autostart)\n"
             "exit status: 0 success (for exec: the job ran, whatever the program did), 1 usage error,\n"
             "2 daemon or sandbox failure\n");
}

int main(int argc, char **argv) {
  sbc_ctx g;
  sbc_ctx_init(&g);
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
    sbc_ctx_apply(&g, k, v);
  }
  int rc = k == SBO_STOP ? p.status : -1;
  if (rc < 0 && p.n_pos == 0) rc = sbo_usage_error(&p, "no COMMAND given");
  for (size_t i = 0; rc < 0 && i < sizeof commands / sizeof *commands; i++) {
    const sbc_command *c = &commands[i];
    if (strcmp(p.pos[0], c->name) != 0) continue;
    /* a global option given before the name must apply to the command */
    const char *bad = sbc_refused_option(g.given, c->flags);
    if (bad)
      rc = sbc_refuse(&p, bad, c->name, c->flags);
    else
      rc = c->main(&g, p.argc - (int)(p.pos - p.argv), p.pos);
  }
  if (rc < 0) {
    const char *names[sizeof commands / sizeof *commands];
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) names[i] = commands[i].name;
    const char *near = sbu_nearest(p.pos[0], names, sizeof commands / sizeof *commands);
    if (near) rc = sbo_usage_error(&p, "unknown command '%s': did you mean %s?", p.pos[0], near);
    else rc = sbo_usage_error(&p, "unknown command '%s'", p.pos[0]);
  }
  sbo_done(&p);
  return rc;
}
