/* RL: small repositories packed into the question as
 *   <path>:<start_file><content><endfile|enfile|end_file>
 * (all three end markers occur; text between files is filler). Tasks:
 *   car      build with the run instruction's first line, ./main < input/N.txt; stdout stripped
 *   cow      make (its makefile builds main-3.cpp, absent: a copy of main.cpp); ./main < input/N.txt; raw stdout
 *   24_game  python3 24_game.py (reads input.txt from the cwd); stdout stripped
 *   sudoku   build main.exe, ./main.exe -s game.txt; the reference is the file sudoku.txt (raw).
 *            It compiles only GCC-9 style: newer GCC needs -std=gnu++14 -include cstring.
 *   PlotNeuralNet  "repo:\n```\n<module>```function:\n<def generate_architecture_K()>": drop
 *            `from .tikzeng import *`, run the module, call to_generate(arch, path); the
 *            reference is the generated .tex (raw). */
#include "adapt_internal.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *path, *content;
} packed_file;

static size_t unpack(const char *q, packed_file *files, size_t max) {
  regex_t start;
  size_t n = 0;
  if (regcomp(&start, "((\\./)?[A-Za-z0-9_./-]+):<start_file>", REG_EXTENDED) != 0) return 0; /* POSIX: no \\ escapes in brackets */
  const char *p = q;
  regmatch_t m[2];
  while (n < max && regexec(&start, p, 2, m, 0) == 0) {
    const char *body = p + m[0].rm_eo;
    const char *ends[] = {"<endfile>", "<enfile>", "<end_file>"};
    const char *end = NULL;
    size_t end_len = 0;
    for (int k = 0; k < 3; k++) {
      const char *e = strstr(body, ends[k]);
      if (e && (!end || e < end)) end = e, end_len = strlen(ends[k]);
    }
    if (!end) break;
    const char *name = p + m[1].rm_so;
    size_t name_len = (size_t)(m[1].rm_eo - m[1].rm_so);
    if (name_len > 2 && name[0] == '.' && name[1] == '/') name += 2, name_len -= 2;
    files[n].path = strndup(name, name_len);
    files[n].content = strndup(body, (size_t)(end - body));
    n++;
    p = end + end_len;
  }
  regfree(&start);
  return n;
}

static const char *find_file(packed_file *f, size_t n, const char *prefix) {
  for (size_t i = 0; i < n; i++)
    if (strncmp(f[i].path, prefix, strlen(prefix)) == 0) return f[i].path;
  return NULL;
}

static int plotneuralnet(const char *q, const sbs_env *env, sbs_job *out, char *err, size_t n) {
  const char *a = strstr(q, "repo:\n```\n"), *b = a ? strstr(a, "```function:\n") : NULL;
  if (!a || !b) {
    snprintf(err, n, "PlotNeuralNet item: cannot unpack module and function");
    return -1;
  }
  a += strlen("repo:\n```\n");
  const char *fn = b + strlen("```function:\n");
  regex_t re;
  regmatch_t m[2];
  char name[128] = "";
  if (regcomp(&re, "def[[:space:]]+([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*\\(", REG_EXTENDED) == 0) {
    if (regexec(&re, fn, 2, m, 0) == 0) snprintf(name, sizeof name, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), fn + m[1].rm_so);
    regfree(&re);
  }
  if (!name[0]) {
    snprintf(err, n, "PlotNeuralNet item: no function to call");
    return -1;
  }
  /* module without its relative import, the function, and the call */
  size_t cap = strlen(q) + 512;
  char *script = malloc(cap);
  size_t k = 0;
  const char *imp = "from .tikzeng import *";
  for (const char *p = a; p < b;) {
    const char *nl = memchr(p, '\n', (size_t)(b - p));
    size_t len = nl ? (size_t)(nl - p + 1) : (size_t)(b - p);
    if (strncmp(p, imp, strlen(imp)) != 0) {
      memcpy(script + k, p, len);
      k += len;
    }
    p += len;
  }
  k += (size_t)snprintf(script + k, cap - k, "\n%s\n\nto_generate(%s(), \"architecture.tex\")\n", fn, name);
  json_object *req = sbs_req_new();
  sbs_req_file(req, "generate.py", script, k, 0);
  const char *run[] = {env->python, "generate.py", NULL}, *collect[] = {"cat", "architecture.tex", NULL};
  sbs_req_step(req, "run", run, SBS_DEFAULT_TIME_S);
  sbs_req_step(req, "collect", collect, SBS_DEFAULT_TIME_S);
  free(script);
  out->request = req;
  out->out_step = "collect";
  out->strip = false;
  snprintf(out->group, sizeof out->group, "PlotNeuralNet");
  snprintf(out->toolchain, sizeof out->toolchain, "python3");
  return 0;
}

int sbs_adapt_rl(size_t index, json_object *item, const sbs_env *env, sbs_job *out, char *err, size_t n) {
  (void)index;
  const char *q = sbs_item_str(item, "question"), *repo = sbs_feature_str(item, "repo");
  const char *run_instr = sbs_feature_str(item, "run_instruction"), *task = sbs_feature_str(item, "task");
  if (!q) {
    snprintf(err, n, "RL item without question");
    return -1;
  }
  out->mode = SBS_OUT_STDOUT;
  if (repo && strcmp(repo, "PlotNeuralNet") == 0) return plotneuralnet(q, env, out, err, n);
  packed_file files[64];
  size_t nf = unpack(q, files, 64);
  if (!nf || !run_instr) {
    snprintf(err, n, "RL item: no packed files or no run instruction");
    return -1;
  }
  json_object *req = sbs_req_new();
  for (size_t i = 0; i < nf; i++) sbs_req_file(req, files[i].path, files[i].content, strlen(files[i].content), 0);
  const char *input = find_file(files, nf, "input/");
  char build[1024] = "", run[512] = "";
  bool is_sudoku = task && strcmp(task, "sudoku") == 0;
  if (is_sudoku) {
    /* GCC >= 10 needs these for the GCC-9-era sources */
    snprintf(build, sizeof build, "exec -a g++ %s -std=gnu++14 -include cstring main.cpp -o main.exe", env->gxx);
    snprintf(run, sizeof run, "./main.exe -s game.txt");
    snprintf(out->group, sizeof out->group, "sudoku");
  } else if (strcmp(run_instr, "make") == 0) {
    for (size_t i = 0; i < nf; i++)
      if (strcmp(files[i].path, "main.cpp") == 0) sbs_req_file(req, "main-3.cpp", files[i].content, strlen(files[i].content), 0);
    snprintf(build, sizeof build, "make");
    snprintf(run, sizeof run, "./main < %s", input ? input : "/dev/null");
    snprintf(out->group, sizeof out->group, "cow");
  } else if (strstr(run_instr, "24_game.py")) {
    snprintf(run, sizeof run, "exec %s 24_game.py", env->python);
    snprintf(out->group, sizeof out->group, "24_game");
  } else {
    /* car: "g++ ... -o main\n./main": build with the first line */
    const char *nl = strchr(run_instr, '\n');
    snprintf(build, sizeof build, "%.*s", nl ? (int)(nl - run_instr) : (int)strlen(run_instr), run_instr);
    snprintf(run, sizeof run, "./main < %s", input ? input : "/dev/null");
    snprintf(out->group, sizeof out->group, "car");
  }
  for (size_t i = 0; i < nf; i++) {
    free(files[i].path);
    free(files[i].content);
  }
  if (build[0]) {
    const char *argv[] = {"bash", "-c", build, NULL};
    sbs_req_step(req, "compile", argv, 120);
  }
  const char *argv[] = {"bash", "-c", run, NULL};
  sbs_req_step(req, "run", argv, SBS_DEFAULT_TIME_S);
  if (is_sudoku) {
    const char *collect[] = {"cat", "sudoku.txt", NULL};
    sbs_req_step(req, "collect", collect, SBS_DEFAULT_TIME_S);
    out->out_step = "collect";
  }
  out->request = req;
  /* car and 24_game references are stripped; cow's is raw ("%.1f", no newline) */
  out->strip = strcmp(out->group, "car") == 0 || strcmp(out->group, "24_game") == 0;
  out->is_rl_sudoku = is_sudoku;
  snprintf(out->toolchain, sizeof out->toolchain, "%s", strcmp(out->group, "24_game") == 0 ? "python3" : env->gxx_name);
  return 0;
}
