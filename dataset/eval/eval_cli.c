/* `surgebox eval` argument handling and flow. */
#include "eval_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval_run.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: surgebox eval (--references FILE... | --data DIR) --predictions FILE\n"
          "                     [--items FILE] [--json] [--by language|difficulty|config] [--fl-extract]\n"
          "  --references FILE...  SURGE dataset files (lists of items; subset from each item's category)\n"
          "  --data DIR            DIR/ml.json ... DIR/fl.json\n"
          "  --predictions FILE    JSON Lines {\"subset\",\"index\"|\"question\",\"model\"?,\"prediction\"}\n"
          "                        or SURGE's layout (dataset items with one extra key per model)\n"
          "  --items FILE          per-item scores as JSON Lines {\"subset\",\"index\",\"model\",\"score\"}\n"
          "  --json                aggregate as JSON instead of a table\n"
          "  --by KEY              breakdown: language (ML/CL/BG), difficulty (CL), config (DR)\n"
          "  --fl-extract          apply SURGE's extract_code() to FL predictions (not the published scoring)\n");
}

/* "--name VALUE" or "--name=VALUE"; returns the value or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *name) {
  size_t n = strlen(name);
  if (strncmp(argv[*i], name, n) != 0) return NULL;
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  if (argv[*i][n] != '\0') return NULL;
  if (*i + 1 >= argc) {
    fprintf(stderr, "eval: %s needs a value\n", name);
    return "";
  }
  return argv[++*i];
}

int sbe_eval_main(int argc, char **argv) {
  sbe_run run = {0};
  const char *data = NULL, *preds = NULL, *items = NULL, *by = NULL;
  int json = 0, nrefs = 0, status = 1; /* usage error until the arguments are good */
  const char **refs = calloc((size_t)argc + 1, sizeof *refs);
  if (!refs) return 2;
  for (int i = 1; i < argc; i++) {
    const char *v;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      status = 0;
      goto out;
    } else if (!strcmp(argv[i], "--references")) {
      while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) refs[nrefs++] = argv[++i];
    } else if (!strncmp(argv[i], "--references=", 13)) {
      refs[nrefs++] = argv[i] + 13;
    } else if ((v = opt_value(argc, argv, &i, "--data"))) {
      data = v;
    } else if ((v = opt_value(argc, argv, &i, "--predictions"))) {
      preds = v;
    } else if ((v = opt_value(argc, argv, &i, "--items"))) {
      items = v;
    } else if ((v = opt_value(argc, argv, &i, "--by"))) {
      by = v;
    } else if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else if (!strcmp(argv[i], "--fl-extract")) {
      run.options |= SBE_SCORE_FL_EXTRACT;
    } else {
      fprintf(stderr, "eval: unknown argument '%s'\n", argv[i]);
      usage(stderr);
      goto out;
    }
  }
  if ((nrefs == 0) == (data == NULL) || !preds || (items && !*items) || (data && !*data) || !*preds) {
    fprintf(stderr, "eval: give --references FILE... or --data DIR, and --predictions FILE\n");
    usage(stderr);
    goto out;
  }
  if (by && strcmp(by, "language") && strcmp(by, "difficulty") && strcmp(by, "config")) {
    fprintf(stderr, "eval: --by takes language, difficulty or config\n");
    goto out;
  }
  status = 2; /* from here on, a failure is an unreadable input */
  for (int i = 0; i < nrefs; i++)
    if (sbe_refs_load_file(&run.refs, refs[i]) != 0) goto out;
  if (data && sbe_refs_load_dir(&run.refs, data) != 0) goto out;
  if (sbe_run_predictions(&run, preds) != 0) goto out;
  sbe_report_missing(&run, stderr);
  if (items && sbe_write_items(&run, items) != 0) goto out;
  if (json) {
    sbe_print_json(&run, by, stdout);
  } else {
    sbe_print_table(&run, stdout);
    if (by) sbe_print_by(&run, by, stdout);
  }
  status = fflush(stdout) == 0 ? 0 : 2;
out:
  free(refs);
  sbe_run_free(&run);
  return status;
}
