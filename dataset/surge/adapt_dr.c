/* DR: one C++ snippet under a compiler / standard / -O configuration
 * (custom_features.key, e.g. "clang++-C++11--O1").
 *
 * SURGE: write the snippet to /app/test.cpp and, in /app, run
 *   bash -c '<cc> -std=c++NN -Ox test.cpp -o test && ./test'
 * with the RELATIVE path (absolute paths change every diagnostic), stdout
 * and stderr in ONE pipe in order, the POSIX locale, and the clang driver
 * named clang++. bash execs the last command of the list, so no
 * "Segmentation fault" line of its own appears. The reference is the raw
 * merged output.
 * Here the compile and the run are two steps of one job, each with its
 * output merged into one pipe: the concatenation is byte for byte what the
 * single bash pipe carried (the compile ends before ./test starts), and the
 * compile step can come from the compile cache (dr-matrix runs 8,000). */
#include "adapt_internal.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

int sbs_dr_parse_key(const char *key, char *compiler, size_t clen, char *std, size_t slen, char *opt, size_t olen);
int sbs_dr_parse_key(const char *key, char *compiler, size_t clen, char *std, size_t slen, char *opt, size_t olen) {
  regex_t re;
  regmatch_t m[4];
  if (regcomp(&re, "^(clang\\+\\+|g\\+\\+)-C\\+\\+(03|11|14|17)--(O[0-3s])$", REG_EXTENDED) != 0) return -1;
  int rc = regexec(&re, key, 4, m, 0) == 0 ? 0 : -1;
  if (rc == 0) {
    snprintf(compiler, clen, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), key + m[1].rm_so);
    snprintf(std, slen, "c++%.*s", (int)(m[2].rm_eo - m[2].rm_so), key + m[2].rm_so);
    snprintf(opt, olen, "%.*s", (int)(m[3].rm_eo - m[3].rm_so), key + m[3].rm_so);
  }
  regfree(&re);
  return rc;
}

/* The bash command for one configuration: shared with dr-matrix. */
int sbs_dr_command(const sbs_env *env, const char *compiler, const char *std, const char *opt, char *cmd, size_t cap,
                   char *path, size_t pcap, char *tc_name, size_t tlen);
int sbs_dr_command(const sbs_env *env, const char *compiler, const char *std, const char *opt, char *cmd, size_t cap,
                   char *path, size_t pcap, char *tc_name, size_t tlen) {
  if (strcmp(compiler, "g++") == 0) {
    if (!env->gxx[0]) return -1;
    /* argv[0] "g++": GCC names itself after it in driver messages */
    snprintf(cmd, cap, "exec -a g++ %s -std=%s -%s test.cpp -o test", env->gxx, std, opt);
    snprintf(path, pcap, "/usr/local/bin:/usr/bin:/bin");
    snprintf(tc_name, tlen, "%s", env->gxx_name);
  } else {
    if (!env->clang_dir[0]) return -1;
    /* clang++ found first in PATH is the chosen clang; it uses the chosen
     * GCC's libstdc++ (SURGE's clang used GCC 9's). */
    char gid[300] = "";
    if (env->gcc_install_dir[0]) snprintf(gid, sizeof gid, " --gcc-install-dir=%s", env->gcc_install_dir);
    snprintf(cmd, cap, "exec clang++%s -std=%s -%s test.cpp -o test", gid, std, opt);
    snprintf(path, pcap, "%s:/usr/local/bin:/usr/bin:/bin", env->clang_dir);
    snprintf(tc_name, tlen, "%s", env->clang_name);
  }
  return 0;
}

int sbs_adapt_dr(size_t index, json_object *item, const sbs_env *env, sbs_job *out, char *err, size_t n) {
  (void)index;
  const char *key = sbs_feature_str(item, "key"), *q = sbs_item_str(item, "question");
  char compiler[16], std[16], opt[8];
  if (!key || !q || sbs_dr_parse_key(key, compiler, sizeof compiler, std, sizeof std, opt, sizeof opt) < 0) {
    snprintf(err, n, "DR item without a valid custom_features.key");
    return -1;
  }
  snprintf(out->group, sizeof out->group, "%s", key);
  char cmd[1024], path[512];
  if (sbs_dr_command(env, compiler, std, opt, cmd, sizeof cmd, path, sizeof path, out->toolchain, sizeof out->toolchain) < 0) {
    snprintf(out->missing, sizeof out->missing, "%s", compiler);
    return 0;
  }
  json_object *req = sbs_req_new();
  sbs_req_file(req, "test.cpp", q, strlen(q), 0);
  const char *compile[] = {"bash", "-c", cmd, NULL}, *run[] = {"./test", NULL};
  json_object *step = sbs_req_step(req, "compile", compile, SBS_DEFAULT_TIME_S);
  json_object_object_add(step, "merge_output", json_object_new_boolean(true));
  json_object_object_add(step, "env", sbs_posix_env(path));
  json_object_object_add(step, "cache", json_object_new_boolean(true));
  step = sbs_req_step(req, "run", run, SBS_DEFAULT_TIME_S);
  json_object_object_add(step, "merge_output", json_object_new_boolean(true));
  json_object_object_add(step, "env", sbs_posix_env(path));
  out->request = req;
  out->mode = SBS_OUT_CONCAT;
  out->strip = false; /* raw bytes, trailing newline included */
  return 0;
}
