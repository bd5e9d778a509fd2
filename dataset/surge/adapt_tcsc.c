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
 * TC also runs the script under a tiny wrapper that measures CPU time inside
 * the interpreter and prints only a marker line on stderr, never on stdout.
 * The span is SURGE's: for tsp.py (the 47 timed items) the solver call,
 * tsp_bruteforce(), alone. Evidence: 3-city items read "0.0000 seconds"
 * (argparse and the imports alone take ~15 ms here), and item 7, with
 * "--vertices 3" but 5 positions, reads 0.0001 like the 5-city items: the
 * time follows len(positions), the solver's input. The shipped scripts
 * print no time (SURGE's timing lines were taken out), so the wrapper
 * decorates the solver's definition (an AST edit: line numbers and
 * behaviour unchanged) and sums the thread's CPU time over its outermost
 * calls. Thread time, not process time: under RLIMIT_CPU the kernel's
 * process-wide CPU clock advances in scheduler ticks (measured: process_time
 * 0.000000 for 1 ms of work under `prlimit --cpu`), and the solver is
 * single-threaded pure Python. Other scripts: the whole script's process
 * CPU time. */
#include "adapt_internal.h"
#include "cleanup.h"

#include <stdlib.h>
#include <string.h>

static const char inproc_wrapper[] =
    "import ast, os, sys, time, types\n"
    "span = sys.argv[1]\n"
    "sys.argv = sys.argv[2:]\n"
    "path = sys.argv[0]\n"
    "sys.path[0] = os.path.dirname(os.path.abspath(path))\n"
    "acc = [0.0, 0]\n"
    "def timed(f):\n"
    "    def w(*a, **k):\n"
    "        acc[1] += 1\n"
    "        t0 = time.thread_time()\n"
    "        try:\n"
    "            return f(*a, **k)\n"
    "        finally:\n"
    "            acc[1] -= 1\n"
    "            if acc[1] == 0:\n"
    "                acc[0] += time.thread_time() - t0\n"
    "    return w\n"
    "with open(path, 'rb') as f:\n"
    "    tree = ast.parse(f.read(), path)\n"
    "for n in ast.walk(tree):\n"
    "    if span and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == span:\n"
    "        n.decorator_list.append(ast.copy_location(ast.Name('__surgebox_timed__', ast.Load()), n))\n"
    "m = types.ModuleType('__main__')\n"
    "m.__file__, m.__builtins__, m.__surgebox_timed__ = path, __builtins__, timed\n"
    "sys.modules['__main__'] = m\n"
    "t0 = time.process_time()\n"
    "try:\n"
    "    exec(compile(tree, path, 'exec'), m.__dict__)\n"
    "finally:\n"
    "    t1 = time.process_time()\n"
    "    sys.stdout.flush()\n"
    "    sys.stderr.write('\\nSURGEBOX_INPROC_CPU=%.6f\\n' % (acc[0] if span else t1 - t0))\n";

const char *sbs_tc_timed_span(const char *fid) {
  static const char *const spans[][2] = {{"tsp.py", "tsp_bruteforce"}};
  for (size_t i = 0; fid && i < sizeof spans / sizeof spans[0]; i++)
    if (!strcmp(fid, spans[i][0])) return spans[i][1];
  return "";
}

static bool whole_matrix_arg(const char *fid) {
  return !strncmp(fid, "qr_", 3) || !strncmp(fid, "lu_", 3) || !strncmp(fid, "matrix_inv", 10) ||
         !strncmp(fid, "power_method", 12);
}

/* Split the packed question into script and command. */
int sbs_tcsc_unpack(const char *q, char **script, char **command);
int sbs_tcsc_unpack(const char *q, char **script, char **command) {
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

int sbs_adapt_tcsc(sbs_subset s, size_t index, json_object *item, const sbs_env *env, sbs_job *out, char *err,
                   size_t n) {
  (void)index;
  const char *fid = sbs_feature_str(item, "fid"), *q = sbs_item_str(item, "question");
  SBU_AUTOFREE char *script = NULL, *command = NULL;
  if (!fid || !q || sbs_tcsc_unpack(q, &script, &command) < 0) {
    snprintf(err, n, "%s item: cannot unpack code and command", sbs_subset_name(s));
    return -1;
  }
  snprintf(out->group, sizeof out->group, "%s", fid);
  snprintf(out->toolchain, sizeof out->toolchain, "python3");
  /* argv: the head split like a shell, the matrix tail kept whole */
  SBU_AUTOFREE char *tail = NULL;
  char *cut = whole_matrix_arg(fid) ? strstr(command, "--A ") : NULL;
  if (cut) {
    tail = strdup(cut + 4);
    cut[4] = '\0'; /* keep "--A" in the head */
    for (size_t k = strlen(tail); k > 0 && strchr(" \t\r\n", tail[k - 1]); k--) tail[k - 1] = '\0';
  }
  size_t argc = 0;
  char **words = sbs_shell_split(command, &argc);
  SBU_AUTOFREE const char **argv = calloc(argc + 7, sizeof *argv);
  if (!argv) {
    sbs_strv_free(words);
    snprintf(err, n, "out of memory");
    return -1;
  }
  size_t k = 0;
  bool inproc = s == SBS_TC && env->inproc_time;
  /* timed items: SURGE's Python 3.8 where reachable (3.11 runs the solver
   * ~1.5x faster, which moves 1.1 s items across the 1 s edge) */
  char python[256];
  bool timed = s == SBS_TC && sbs_tc_timed_span(fid)[0];
  if (timed) sbs_env_timed_python(env, python, sizeof python, out->profile, sizeof out->profile);
  else snprintf(python, sizeof python, "%s", env->python);
  if (strcmp(python, env->python)) snprintf(out->toolchain, sizeof out->toolchain, "python3.8");
  for (size_t i = 0; i < argc; i++) {
    if (i == 0 && (!strcmp(words[0], "python") || !strcmp(words[0], "python3"))) {
      argv[k++] = python;
      if (inproc) {
        argv[k++] = "-c";
        argv[k++] = inproc_wrapper;
        argv[k++] = sbs_tc_timed_span(fid);
      }
      continue;
    }
    argv[k++] = words[i];
  }
  if (tail) argv[k++] = tail;
  argv[k] = NULL;
  json_object *req = sbs_req_new();
  if (out->profile[0]) json_object_object_add(req, "profile", json_object_new_string(out->profile));
  sbs_req_file(req, fid, script, strlen(script), 0);
  json_object *step = sbs_req_step(req, "run", argv, SBS_LONG_TIME_S * 3);
  /* 300 s of CPU; the wall clock may run longer on a loaded machine */
  json_object_object_add(json_object_object_get(step, "limits"), "cpu_time_s", json_object_new_double(SBS_LONG_TIME_S));
  out->request = req;
  out->mode = SBS_OUT_STDOUT;
  out->strip = true;
  out->whitespace_free = s == SBS_SC;
  out->inproc_marker = inproc;
  sbs_strv_free(words);
  return 0;
}
