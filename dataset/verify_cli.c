/* surgebox verify --benchmark NAME: one entry point for every benchmark.
 * Adding a benchmark is adding its folder (an adapter, a scorer, a run on
 * the driver, driver.h) and a row below. The row's command line gets argv
 * as given: its option table takes --benchmark NAME too. */
#include "verify.h"
#include "cruxeval/cruxeval.h"
#include "surge/verify_surge.h"
#include "tests/tests_bench.h"
#include "traces/traces.h"

#include "nearest.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  const char *name, *summary;
  /* parses argv (argv[0] "verify") into its options struct and runs it */
  int (*cmdline)(const sbc_ctx *ctx, int argc, char **argv);
} benchmark;

static const benchmark benchmarks[] = {
    {"cruxeval", "CRUXEval's generations run sandboxed, scored as its authors do (pass@1, pass@5)", sbx_verify_cmdline},
    {"surge", "SURGE predictions scored against references regenerated here (= eval --execute)",
     sbs_verify_surge_cmdline},
    {"traces", "predicted traces or per-question answers scored against trace-dataset's recordings",
     sbtd_verify_cmdline},
    {"tests", "solutions run against their problems' test cases (one job each, the build once), pass@k",
     sbtb_verify_cmdline},
};
#define N_BENCHMARKS (sizeof benchmarks / sizeof benchmarks[0])

static void usage(FILE *f) {
  fprintf(f, "usage: surgebox verify --benchmark NAME ...   (surgebox verify --benchmark NAME --help)\n");
  for (size_t b = 0; b < N_BENCHMARKS; b++) fprintf(f, "  %-9s %s\n", benchmarks[b].name, benchmarks[b].summary);
}

int sbr_verify_main(const sbc_ctx *ctx, int argc, char **argv) {
  const char *name = NULL;
  for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
    if (!strcmp(argv[i], "--benchmark") && i + 1 < argc) name = argv[++i];
    else if (!strncmp(argv[i], "--benchmark=", 12)) name = argv[i] + 12;
  }
  for (size_t b = 0; name && b < N_BENCHMARKS; b++)
    if (!strcmp(name, benchmarks[b].name)) return benchmarks[b].cmdline(ctx, argc, argv);
  const char *names[N_BENCHMARKS];
  for (size_t b = 0; b < N_BENCHMARKS; b++) names[b] = benchmarks[b].name;
  const char *near = name ? sbu_nearest(name, names, N_BENCHMARKS) : NULL;
  if (near)
    fprintf(stderr, "surgebox verify: unknown benchmark '%s': did you mean %s? (see surgebox verify --help)\n", name, near);
  else if (name) fprintf(stderr, "surgebox verify: unknown benchmark '%s' (see surgebox verify --help)\n", name);
  else if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) return usage(stdout), 0;
  else fprintf(stderr, "surgebox verify: --benchmark NAME is required (see surgebox verify --help)\n");
  return 1;
}
