/* BG: buggy programs in cpp, java and python3, with SURGE's ABSOLUTE paths:
 *   cpp     g++ -std=c++11 /app/test.cpp -o /app/test, then /app/test
 *   java    javac /app/<C>.java (C: the first public class), then java -cp /app <C>
 *   python  python3 /app/test.py (SURGE's was 3.8: tracebacks match it exactly)
 * A failed compile's reference is "Compilation Error: " + the compiler's raw
 * stderr (all 54 cpp and 51 java references are); otherwise stdout then
 * stderr, raw. */
#include "adapt_internal.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

static char *match_group(const char *pattern, const char *src, int g, regoff_t before) {
  regex_t re;
  if (regcomp(&re, pattern, REG_EXTENDED) != 0) return NULL;
  char *out = NULL;
  regmatch_t m[3];
  /* the last match that starts before `before` (-1: the first match) */
  for (const char *p = src; regexec(&re, p, 3, m, p == src ? 0 : REG_NOTBOL) == 0;) {
    if (before >= 0 && (p - src) + m[0].rm_so >= before) break;
    free(out);
    out = strndup(p + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so));
    if (before < 0) break;
    p += m[0].rm_eo;
  }
  regfree(&re);
  return out;
}

char *sbs_java_class(const char *src) {
  char *pub = match_group("public[[:space:]]+(final[[:space:]]+|abstract[[:space:]]+)?class[[:space:]]+([A-Za-z_][A-Za-z0-9_]*)",
                          src, 2, -1);
  if (pub) return pub;
  /* no public class: the class declared last before "static void main" */
  regex_t re;
  regmatch_t m[1];
  if (regcomp(&re, "static[[:space:]]+void[[:space:]]+main[[:space:]]*\\(", REG_EXTENDED) != 0) return NULL;
  int found = regexec(&re, src, 1, m, 0) == 0;
  regfree(&re);
  return found ? match_group("class[[:space:]]+([A-Za-z_][A-Za-z0-9_]*)", src, 1, m[0].rm_so) : NULL;
}

int sbs_adapt_bg(size_t index, json_object *item, const sbs_env *env, sbs_job *out, char *err, size_t n) {
  (void)index;
  const char *lang = sbs_feature_str(item, "language"), *q = sbs_item_str(item, "question");
  if (!lang || !q) {
    snprintf(err, n, "BG item without language or question");
    return -1;
  }
  snprintf(out->group, sizeof out->group, "%s", lang);
  out->mode = SBS_OUT_BG;
  out->is_compile_prefixed = true;
  if (strcmp(lang, "cpp") == 0) {
    if (!env->gxx[0]) {
      snprintf(out->missing, sizeof out->missing, "g++");
      return 0;
    }
    snprintf(out->toolchain, sizeof out->toolchain, "%s", env->gxx_name);
    char cmd[768];
    /* GCC 9 counted a tab as one column and had no -Wvexing-parse: mimic it
     * (bg_mimic_gcc9) so columns and warnings line up with SURGE's. */
    snprintf(cmd, sizeof cmd, "exec -a g++ %s -std=c++11%s /app/test.cpp -o /app/test", env->gxx,
             env->bg_mimic_gcc9 ? " -ftabstop=1 -Wno-vexing-parse" : "");
    json_object *req = sbs_req_new();
    sbs_req_file(req, "test.cpp", q, strlen(q), 0);
    const char *compile[] = {"bash", "-c", cmd, NULL}, *run[] = {"/app/test", NULL};
    sbs_req_step(req, "compile", compile, SBS_DEFAULT_TIME_S);
    sbs_req_step(req, "run", run, SBS_DEFAULT_TIME_S);
    out->request = req;
    return 0;
  }
  if (strcmp(lang, "java") == 0) {
    if (!sbs_env_has(env, "java")) {
      snprintf(out->missing, sizeof out->missing, "java");
      return 0;
    }
    char *cls = sbs_java_class(q);
    char path[300];
    snprintf(path, sizeof path, "%s.java", cls ? cls : "Main");
    free(cls);
    json_object *req = sbs_req_toolchain("java", SBS_DEFAULT_TIME_S);
    sbs_req_file(req, path, q, strlen(q), 0);
    snprintf(out->toolchain, sizeof out->toolchain, "java");
    out->request = req;
    return 0;
  }
  if (strcmp(lang, "python3") == 0) {
    json_object *req = sbs_req_toolchain(env->bg_python, SBS_DEFAULT_TIME_S);
    sbs_req_file(req, "test.py", q, strlen(q), 0);
    snprintf(out->toolchain, sizeof out->toolchain, "%s", env->bg_python);
    out->request = req;
    return 0;
  }
  snprintf(err, n, "BG language %s unknown", lang);
  return -1;
}
