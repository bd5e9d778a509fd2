/* surgebox verify --benchmark NAME: one entry point for every benchmark.
 * cruxeval is dataset/cruxeval/; surge is today's `surgebox eval --execute`
 * (only dispatched here, its behaviour unchanged). */
#include "verify.h"
#include "cruxeval/cruxeval.h"
#include "eval_cli.h"
#include "regen.h"

#include <stdio.h>
#include <string.h>

int sbr_verify_main(int argc, char **argv) {
  const char *bench = NULL;
  for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
    if (!strcmp(argv[i], "--benchmark") && i + 1 < argc) bench = argv[i + 1];
    else if (!strncmp(argv[i], "--benchmark=", 12)) bench = argv[i] + 12;
  }
  if (bench && !strcmp(bench, "cruxeval")) return sbx_verify_main(argc, argv);
  if (bench && !strcmp(bench, "surge")) {
    /* eval --execute with the same arguments, --benchmark NAME left out */
    char *sub[argc + 1];
    int n = 0;
    sub[n++] = "eval";
    for (int i = 1; i < argc; i++) {
      if (!strcmp(argv[i], "--benchmark") && i + 1 < argc) {
        i++;
        continue;
      }
      if (!strncmp(argv[i], "--benchmark=", 12)) continue;
      sub[n++] = argv[i];
    }
    sub[n] = NULL;
    return sbr_eval_execute_main(n, sub);
  }
  bool help = argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));
  if (bench) fprintf(stderr, "surgebox verify: unknown benchmark '%s' (see surgebox verify --help)\n", bench);
  else if (!help) fprintf(stderr, "surgebox verify: --benchmark cruxeval|surge is required (see surgebox verify --help)\n");
  else
    printf("usage: surgebox verify --benchmark cruxeval|surge [options]\n"
           "Run a benchmark's generations sandboxed and score them.\n\n"
           "  cruxeval: surgebox verify --benchmark cruxeval --help\n"
           "  surge:    the options of surgebox eval --execute (surgebox eval --help)\n");
  return help && !bench ? 0 : 1;
}
