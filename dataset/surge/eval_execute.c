/* surgebox eval --execute: references produced right then, by running the
 * items through the daemon (surgebox regen into a private directory), for
 * users who do not trust the shipped ones. Every other argument goes to the
 * evaluator; --data names the SURGE data to run, --subset (default all)
 * which subsets, --jobs the daemon's workers. */
#include "eval_cli.h"
#include "regen.h"
#include "sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sbr_eval_execute_main(int argc, char **argv) {
  const char *data = NULL, *subset = "all", *jobs = NULL;
  char **eval_argv = calloc((size_t)argc + 4, sizeof *eval_argv);
  int ne = 0;
  eval_argv[ne++] = argv[0];
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--execute")) continue;
    if (!strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
    else if (!strcmp(argv[i], "--subset") && i + 1 < argc) subset = argv[++i];
    else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) jobs = argv[++i];
    else eval_argv[ne++] = argv[i];
  }
  if (!data) {
    fprintf(stderr, "eval --execute: --data DIR (SURGE's files, to run) is required\n");
    free(eval_argv);
    return 1;
  }
  char tmp[] = "/tmp/surgebox-eval-XXXXXX";
  if (!mkdtemp(tmp)) {
    perror("eval --execute: mkdtemp");
    free(eval_argv);
    return 2;
  }
  char *regen_argv[] = {"regen", "--data", (char *)data, "--subset", (char *)subset, "--out", tmp,
                        jobs ? "--jobs" : NULL, (char *)jobs, NULL};
  int rc = sbr_regen_main(jobs ? 9 : 7, regen_argv);
  if (rc == 0) {
    eval_argv[ne++] = "--data";
    eval_argv[ne++] = tmp;
    eval_argv[ne] = NULL;
    fprintf(stderr, "eval --execute: scoring against the references regenerated in %s\n", tmp);
    rc = sbe_eval_main(ne, eval_argv);
  } else {
    fprintf(stderr, "eval --execute: regeneration failed (exit %d); nothing scored\n", rc);
    rc = 2;
  }
  free(eval_argv);
  return rc;
}
