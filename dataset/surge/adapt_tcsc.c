/* TC and SC: a Python script plus a command line, packed as
 *   code:```\n<script>\n```\ncommand:```\n<command>\n```
 * Write the script to custom_features.fid and run it WITHOUT a shell: argv
 * is the shell-style split of the command with python -> python3, except
 * for the matrix scripts (qr, lu, matrix_inv, power_method), where
 * everything after "--A " is ONE argument (SURGE passed it whole; a shell
 * would split the rows at ';'). The reference is stdout, stripped. TC items
 * may run for minutes (12-city brute-force TSP): 300 s of CPU (and up to
 * 900 s of wall clock, so that a busy machine does not turn them into
 * timeouts).
 * TC also runs the script under a tiny runpy wrapper that measures CPU time
 * inside the interpreter around the script (SURGE timed its solver in
 * process, so interpreter start-up is not in its figures); the wrapper
 * prints only a marker line on stderr, never on stdout. */
#include "adapt_internal.h"

#include <stdlib.h>
#include <string.h>

static const char inproc_wrapper[] =
    "import os, runpy, sys, time\n"
    "sys.argv = sys.argv[1:]\n"
    "sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))\n"
    "t0 = time.process_time()\n"
    "try:\n"
    "    runpy.run_path(sys.argv[0], run_name='__main__')\n"
    "finally:\n"
    "    t1 = time.process_time()\n"
    "    sys.stdout.flush()\n"
    "    sys.stderr.write('\\nSURGEBOX_INPROC_CPU=%.6f\\n' % (t1 - t0))\n";

static bool whole_matrix_arg(const char *fid) {
  return !strncmp(fid, "qr_", 3) || !strncmp(fid, "lu_", 3) || !strncmp(fid, "matrix_inv", 10) ||
         !strncmp(fid, "power_method", 12);
}

/* Split the packed question into script and command. */
int sbr_tcsc_unpack(const char *q, char **script, char **command);
int sbr_tcsc_unpack(const char *q, char **script, char **command) {
  const char *a = strstr(q, "code:```\n"), *b = a ? strstr(a, "```\ncommand:```\n") : NULL;
  if (!a || !b) return -1;
  a += strlen("code:```\n");
  const char *c = b + strlen("```\ncommand:```\n");
  const char *end = strstr(c, "```");
  if (!end) end = c + strlen(c);
  *script = strndup(a, (size_t)(b - a));
  *command = strndup(c, (size_t)(end - c));
  return *script && *command ? 0 : -1;
}

int sbr_adapt_tcsc(sbr_subset s, size_t index, json_object *item, const sbr_env *env, sbr_job *out, char *err,
                   size_t n) {
  (void)index;
  const char *fid = sbr_feature_str(item, "fid"), *q = sbr_item_str(item, "question");
  char *script = NULL, *command = NULL;
  if (!fid || !q || sbr_tcsc_unpack(q, &script, &command) < 0) {
    snprintf(err, n, "%s item: cannot unpack code and command", sbr_subset_name(s));
    free(script);
    free(command);
    return -1;
  }
  snprintf(out->group, sizeof out->group, "%s", fid);
  snprintf(out->toolchain, sizeof out->toolchain, "python3");
  /* argv: the head split like a shell, the matrix tail kept whole */
  char *tail = NULL;
  char *cut = whole_matrix_arg(fid) ? strstr(command, "--A ") : NULL;
  if (cut) {
    tail = strdup(cut + 4);
    cut[4] = '\0'; /* keep "--A" in the head */
    for (size_t k = strlen(tail); k > 0 && strchr(" \t\r\n", tail[k - 1]); k--) tail[k - 1] = '\0';
  }
  size_t argc = 0;
  char **words = sbr_shell_split(command, &argc);
  const char **argv = calloc(argc + 6, sizeof *argv);
  size_t k = 0;
  bool inproc = s == SBR_TC && env->inproc_time;
  for (size_t i = 0; i < argc; i++) {
    if (i == 0 && (!strcmp(words[0], "python") || !strcmp(words[0], "python3"))) {
      argv[k++] = env->python;
      if (inproc) {
        argv[k++] = "-c";
        argv[k++] = inproc_wrapper;
      }
      continue;
    }
    argv[k++] = words[i];
  }
  if (tail) argv[k++] = tail;
  argv[k] = NULL;
  json_object *req = sbr_req_new();
  sbr_req_file(req, fid, script, strlen(script), 0);
  json_object *step = sbr_req_step(req, "run", argv, SBR_LONG_TIME_S * 3);
  /* 300 s of CPU; the wall clock may run longer on a loaded machine */
  json_object_object_add(json_object_object_get(step, "limits"), "cpu_time_s", json_object_new_double(SBR_LONG_TIME_S));
  out->request = req;
  out->mode = SBR_OUT_STDOUT;
  out->strip = true;
  out->whitespace_free = s == SBR_SC;
  out->inproc_marker = inproc;
  free(argv);
  sbr_strv_free(words);
  free(tail);
  free(script);
  free(command);
  return 0;
}
