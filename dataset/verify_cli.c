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
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--benchmark")) bench = argv[i + 1];
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
      sub[n++] = argv[i];
    }
    sub[n] = NULL;
    return sbr_eval_execute_main(n, sub);
  }
  fprintf(stderr, "usage: surgebox verify --benchmark cruxeval|surge ...\n"
                  "  cruxeval: surgebox verify --benchmark cruxeval --help\n"
                  "  surge:    the arguments of surgebox eval --execute\n");
  return bench ? 1 : (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) ? 0 : 1);
}
