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

static void free_forwarded(char **v, int n) {
  for (int i = 1; i < n; i++) free(v[i]);
  free(v);
}

int sbr_eval_execute_main(int argc, char **argv) {
  const char *data = NULL, *subset = "all", *jobs = NULL;
  char **eval_argv = calloc((size_t)argc + 4, sizeof *eval_argv);
  int ne = 0;
  if (!eval_argv) return 2;
  eval_argv[ne++] = argv[0];
  /* eval's own table: ours are handled here, the rest forwarded as --name[=value] */
  sbo_parser p;
  sbo_init(&p, &sbe_eval_cmd, argc, argv);
  int k;
  const char *v;
  long n;
  while ((k = sbo_next(&p, &v)) > 0) {
    if (k == SBE_O_EXECUTE) continue;
    if (k == SBE_O_DATA) data = v;
    else if (k == SBE_O_SUBSET) subset = v;
    else if (k == SBE_O_JOBS && sbo_parse_long(v, 1, 4096, &n) < 0) {
      p.status = sbo_bad_value(&p, k, v);
      k = SBO_STOP;
      break;
    } else if (k == SBE_O_JOBS) jobs = v;
    else {
      const sbo_opt *o = sbe_eval_opts;
      while (o->name && o->key != k) o++;
      char *arg = NULL;
      if (asprintf(&arg, "--%s%s%s", o->name, v ? "=" : "", v ? v : "") < 0) arg = NULL;
      eval_argv[ne++] = arg;
    }
  }
  for (int i = 0; k != SBO_STOP && i < p.n_pos; i++) eval_argv[ne++] = strdup(p.pos[i]);
  int status = k == SBO_STOP ? p.status : p.dashdash ? sbo_usage_error(&p, "unexpected '--'") : 0;
  if (k != SBO_STOP && !status && !data)
    status = sbo_usage_error(&p, "--execute needs --data DIR (SURGE's files, to run)");
  sbo_done(&p);
  if (k == SBO_STOP || status) {
    free_forwarded(eval_argv, ne);
    return status;
  }
  char tmp[] = "/tmp/surgebox-eval-XXXXXX";
  if (!mkdtemp(tmp)) {
    perror("eval --execute: mkdtemp");
    free_forwarded(eval_argv, ne);
    return 2;
  }
  char *regen_argv[] = {"regen", "--data", (char *)data, "--subset", (char *)subset, "--out", tmp,
                        jobs ? "--jobs" : NULL, (char *)jobs, NULL};
  int rc = sbr_regen_main(jobs ? 9 : 7, regen_argv);
  if (rc == 0) {
    eval_argv[ne++] = strdup("--data");
    eval_argv[ne++] = strdup(tmp);
    eval_argv[ne] = NULL;
    fprintf(stderr, "eval --execute: scoring against the references regenerated in %s\n", tmp);
    rc = sbe_eval_main(ne, eval_argv);
  } else {
    fprintf(stderr, "eval --execute: regeneration failed (exit %d); nothing scored\n", rc);
    rc = 2;
  }
  free_forwarded(eval_argv, ne);
  return rc;
}
