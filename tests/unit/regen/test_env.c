/* SURGE's recorded environment against the one chosen here
 * (dataset/surge/adapt_env.c) and how fidelity.c records it, on hand-written
 * toolchain lists: a non-root host (no Python 3.8, GCC 11, JDK 17), a
 * surge-2025-like one (3.8, GCC 9, JDK 11, clang 19 without a host GCC dir),
 * and Julia from the better profile. */
#include "check.h"
#include "fidelity.h"
#include "regen.h"

#include <stdlib.h>
#include <string.h>

#define TC(name, fam, ver, path) \
  "{\"name\":\"" name "\",\"family\":\"" fam "\",\"version\":\"" ver "\",\"path\":\"" path "\",\"real_path\":\"" path "\",\"available\":true}"

/* as the daemon lists them to nobody on Debian 12 (pyenv's 3.8 is under /root) */
static const char *host_json = "[" TC("g++-11", "g++", "11.3.0", "/usr/bin/g++-11") ","
    TC("clang++-19", "clang++", "19.1.7", "/usr/lib/llvm-19/bin/clang") "," TC("java", "java", "17.0.15", "/usr/bin/javac") ","
    TC("python3", "python3", "3.11.2", "/usr/bin/python3") "]";
static const char *surge_json = "[" TC("g++-9", "g++", "9.3.0", "/usr/bin/g++-9") ","
    TC("clang++-19", "clang++", "19.1.7", "/usr/lib/host-llvm-19/bin/clang") "," TC("java", "java", "11.0.23", "/usr/bin/javac") ","
    TC("python3", "python3", "3.9.2", "/usr/bin/python3") "," TC("python3.8", "python3", "3.8.18", "/usr/local/bin/python3.8") "]";
static const char *best_json = "[" TC("julia", "julia", "1.5.3", "/usr/bin/julia") "]";

static void env_of(sbs_env *e, const char *json) {
  json_object *tcs = json_tokener_parse(json);
  char err[64];
  CHECK(tcs && sbs_env_init(e, tcs, err, sizeof err) == 0);
  json_object_put(tcs);
}

static void adapt(const sbs_env *e, sbs_subset s, const char *item_json, sbs_job *j) {
  json_object *item = json_tokener_parse(item_json);
  char err[128];
  CHECK(sbs_adapt(s, 0, item, e, j, err, sizeof err) == 0);
  json_object_put(item);
}

static char *said(const sbs_env *e, bool strict, int *rc) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  *rc = sbs_env_say_substitutions(e, "regen", strict, f);
  fclose(f);
  return text;
}

#define BG_PY "{\"custom_features\":{\"language\":\"python3\"},\"question\":\"print(1)\",\"gt\":\"1\\n\"}"
#define BG_CPP "{\"custom_features\":{\"language\":\"cpp\"},\"question\":\"int main(){}\",\"gt\":\"\"}"
#define DR_CLANG "{\"custom_features\":{\"key\":\"clang++-C++11--O1\"},\"question\":\"int main(){}\",\"gt\":\"\"}"
#define ML_JULIA "{\"custom_categoey\":1,\"custom_features\":{\"language\":\"Julia\"},\"question\":\"println(1)\",\"gt\":\"1\"}"

static void test_host(void) {
  sbs_env e;
  env_of(&e, host_json);
  CHECK_STR(e.subs[SBS_ENV_BG_PYTHON].used, "python3 3.11.2");
  CHECK(e.subs[SBS_ENV_BG_PYTHON].substituted);
  CHECK_STR(e.subs[SBS_ENV_GXX].used, "g++-11 11.3.0");
  CHECK(e.subs[SBS_ENV_GXX].substituted);
  CHECK_STR(e.subs[SBS_ENV_JAVA].used, "java 17.0.15");
  CHECK(e.subs[SBS_ENV_JAVA].substituted);
  CHECK_STR(e.subs[SBS_ENV_JULIA].used, ""); /* absent: missing_toolchain, not a substitution */
  CHECK(!e.subs[SBS_ENV_JULIA].substituted);
  /* nothing built yet: nothing to say */
  int rc;
  char *t = said(&e, true, &rc);
  CHECK(rc == 0 && !strcmp(t, ""));
  free(t);
  sbs_job j[3];
  adapt(&e, SBS_BG, BG_PY, &j[0]);
  adapt(&e, SBS_BG, BG_PY, &j[1]);
  adapt(&e, SBS_BG, BG_CPP, &j[2]);
  CHECK(j[0].substituted == &e.subs[SBS_ENV_BG_PYTHON] && j[2].substituted == &e.subs[SBS_ENV_GXX]);
  CHECK(e.subs[SBS_ENV_BG_PYTHON].jobs == 2 && e.subs[SBS_ENV_GXX].jobs == 1 && e.subs[SBS_ENV_JAVA].jobs == 0);
  t = said(&e, false, &rc);
  CHECK(rc == 0);
  CHECK_STR(t, "regen: warning: BG python3 (2 item(s)) run on python3 3.11.2, not SURGE's Python 3.8: their misses are "
               "classed toolchain_drift\n"
               "regen: warning: DR g++ and BG cpp (1 item(s)) run on g++-11 11.3.0, not SURGE's GCC 9: their misses are "
               "classed toolchain_drift\n"
               "regen: SURGE's environment: surgebox profile create surge-2025, then --profile surge-2025 (--strict "
               "refuses to run instead)\n");
  free(t);
  t = said(&e, true, &rc);
  CHECK(rc == -1);
  CHECK_STR(t, "regen: --strict: BG python3 (2 item(s)) would run on python3 3.11.2, not SURGE's Python 3.8\n"
               "regen: --strict: DR g++ and BG cpp (1 item(s)) would run on g++-11 11.3.0, not SURGE's GCC 9\n"
               "regen: nothing ran; SURGE's environment: surgebox profile create surge-2025, then --profile surge-2025\n");
  free(t);

  /* the record: a miss classed other is the substitution's; an exact match stays unclassed */
  json_object *miss = json_tokener_parse("{\"regenerated\":true,\"matched\":\"no\",\"class\":\"other\"}");
  json_object *hit = json_tokener_parse("{\"regenerated\":true,\"matched\":\"exact\",\"class\":null}");
  json_object *err = json_tokener_parse("{\"regenerated\":false,\"status\":\"internal_error\",\"class\":\"other\"}");
  sbs_exec_substitution(miss, &j[0]);
  sbs_exec_substitution(hit, &j[1]);
  sbs_exec_substitution(err, &j[0]);
  CHECK_STR(json_object_get_string(json_object_object_get(miss, "class")), "toolchain_drift");
  CHECK(json_object_object_get(hit, "class") == NULL);
  CHECK_STR(json_object_get_string(json_object_object_get(err, "class")), "other"); /* it did not run: not drift */
  CHECK_STR(json_object_to_json_string_ext(json_object_object_get(miss, "substituted"), JSON_C_TO_STRING_PLAIN),
            "{\"used\":\"python3 3.11.2\",\"surge\":\"Python 3.8\"}");

  /* the summary and the table */
  json_object *bg = json_object_new_array();
  json_object *execs[2] = {miss, hit};
  for (int k = 0; k < 2; k++) {
    json_object *it = json_object_new_object();
    json_object_object_add(execs[k], "group", json_object_new_string("python3"));
    json_object *pf = json_tokener_parse("{\"name\":\"host\"}");
    json_object_object_add(execs[k], "profile", pf);
    json_object_object_add(it, "exec", execs[k]);
    json_object_array_add(bg, it);
  }
  sbs_subset sub = SBS_BG;
  json_object *s = sbs_summary(&bg, &sub, 1);
  json_object *o = json_object_object_get(s, "bg");
  CHECK_STR(json_object_get_string(json_object_object_get(o, "substituted")), "python3 3.11.2 (SURGE: Python 3.8)");
  CHECK_STR(json_object_get_string(json_object_object_get(json_object_object_get(json_object_object_get(o, "by"), "python3"),
                                                          "substituted")),
            "python3 3.11.2 (SURGE: Python 3.8)");
  CHECK(json_object_array_length(json_object_object_get(json_object_object_get(o, "mismatches"), "toolchain_drift")) == 1);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  sbs_print_table(s, f);
  fclose(f);
  CHECK(strstr(text, "  host; python3 3.11.2 (SURGE: Python 3.8)\n") != NULL);
  CHECK(strstr(text, "  bg   toolchain_drift      1: 0\n") != NULL);
  if (check_failures_) fputs(text, stderr);
  free(text);
  json_object_put(s);
  json_object_put(bg);
  json_object_put(err);
  for (int k = 0; k < 3; k++) sbs_job_free(&j[k]);
  sbs_env_free(&e);
}

static void test_surge_like(void) {
  sbs_env e;
  env_of(&e, surge_json);
  snprintf(e.run_profile, sizeof e.run_profile, "surge-2025");
  for (int k = 0; k < SBS_N_ENV; k++) CHECK(!e.subs[k].substituted);
  CHECK_STR(e.subs[SBS_ENV_BG_PYTHON].used, "python3.8 3.8.18");
  CHECK_STR(e.subs[SBS_ENV_GXX].used, "g++-9 9.3.0");
  CHECK_STR(e.subs[SBS_ENV_CLANG].used, "clang++-19 19.1.7"); /* the launcher's GCC 9: not seen from the host */
  sbs_job j;
  adapt(&e, SBS_BG, BG_PY, &j);
  CHECK(j.substituted == NULL);
  sbs_job_free(&j);
  adapt(&e, SBS_DR, DR_CLANG, &j);
  CHECK(j.substituted == NULL);
  sbs_job_free(&j);
  int rc;
  char *t = said(&e, true, &rc);
  CHECK(rc == 0 && !strcmp(t, ""));
  free(t);
  /* Julia: absent here, 1.5.3 in the better profile (as adapt_mlcl.c runs it) */
  json_object *best = json_tokener_parse(best_json);
  sbs_env_set_best(&e, "surge-2025", best);
  json_object_put(best);
  CHECK_STR(e.subs[SBS_ENV_JULIA].used, "julia 1.5.3");
  CHECK(!e.subs[SBS_ENV_JULIA].substituted);
  adapt(&e, SBS_ML, ML_JULIA, &j);
  CHECK(j.request != NULL && j.substituted == NULL);
  sbs_job_free(&j);
  sbs_env_free(&e);
}

/* A fresh Debian 12 host beside a surge-2025 created there (no pyenv 3.8 to
 * import: Debian 11's Python 3.9): each role runs where its version is
 * closer to SURGE's, without --profile. */
static const char *fresh_profile_json = "[" TC("g++-9", "g++", "9.3.0", "/usr/bin/g++-9") ","
    TC("java", "java", "11.0.23", "/usr/bin/javac") "," TC("python3", "python3", "3.9.2", "/usr/bin/python3") ","
    TC("julia", "julia", "1.5.3", "/usr/bin/julia") "]";
#define BG_JAVA "{\"custom_features\":{\"language\":\"java\"},\"question\":\"public class A{}\",\"gt\":\"\"}"

static void test_closest(void) {
  sbs_env e;
  env_of(&e, host_json);
  json_object *best = json_tokener_parse(fresh_profile_json);
  sbs_env_set_best(&e, "surge-2025", best);
  json_object_put(best);
  CHECK(e.alt != NULL);
  /* Python 3.9 is one minor from SURGE's 3.8, the host's 3.11 three: still a substitution, named */
  CHECK(e.in_alt[SBS_ENV_BG_PYTHON] && e.subs[SBS_ENV_BG_PYTHON].substituted);
  CHECK_STR(e.subs[SBS_ENV_BG_PYTHON].used, "python3 3.9.2");
  CHECK_STR(e.subs[SBS_ENV_BG_PYTHON].profile, "surge-2025");
  CHECK(e.in_alt[SBS_ENV_GXX] && !e.subs[SBS_ENV_GXX].substituted);
  CHECK(e.in_alt[SBS_ENV_JAVA] && !e.subs[SBS_ENV_JAVA].substituted);
  CHECK(e.in_alt[SBS_ENV_JULIA] && !e.subs[SBS_ENV_JULIA].substituted);
  /* the profile has no clang: the host's */
  CHECK(!e.in_alt[SBS_ENV_CLANG] && !strcmp(e.subs[SBS_ENV_CLANG].profile, ""));
  sbs_job j;
  adapt(&e, SBS_BG, BG_PY, &j);
  CHECK_STR(j.profile, "surge-2025");
  CHECK_STR(json_object_get_string(json_object_object_get(j.request, "profile")), "surge-2025");
  CHECK(j.substituted == &e.subs[SBS_ENV_BG_PYTHON]);
  sbs_job_free(&j);
  adapt(&e, SBS_BG, BG_CPP, &j); /* GCC 9 itself: no mimicry flags, the profile's path */
  CHECK_STR(j.profile, "surge-2025");
  CHECK(j.substituted == NULL);
  const char *req = json_object_to_json_string_ext(j.request, JSON_C_TO_STRING_NOSLASHESCAPE);
  CHECK(strstr(req, "/usr/bin/g++-9 -std=c++11 /app/test.cpp") != NULL && strstr(req, "ftabstop") == NULL);
  sbs_job_free(&j);
  adapt(&e, SBS_BG, BG_JAVA, &j);
  CHECK_STR(j.profile, "surge-2025");
  sbs_job_free(&j);
  adapt(&e, SBS_DR, DR_CLANG, &j); /* the host's clang: no profile named */
  CHECK_STR(j.profile, "");
  CHECK(json_object_object_get(j.request, "profile") == NULL);
  sbs_job_free(&j);
  int rc;
  char *t = said(&e, false, &rc);
  CHECK(strstr(t, "BG python3 (1 item(s)) run on python3 3.9.2 in profile surge-2025, not SURGE's Python 3.8") != NULL);
  CHECK(strstr(t, "profile surge-2025 lacks these") != NULL);
  free(t);
  sbs_env_free(&e);

  /* a tie stays on the host: its own Python 3.8 */
  static const char *host38 = "[" TC("python3.8", "python3", "3.8.18", "/usr/local/bin/python3.8") "]";
  static const char *prof38 = "[" TC("python3.8", "python3", "3.8.10", "/usr/local/python3.8/bin/python3.8") "]";
  env_of(&e, host38);
  best = json_tokener_parse(prof38);
  sbs_env_set_best(&e, "surge-2025", best);
  json_object_put(best);
  CHECK(!e.in_alt[SBS_ENV_BG_PYTHON] && !e.subs[SBS_ENV_BG_PYTHON].substituted);
  adapt(&e, SBS_BG, BG_PY, &j);
  CHECK_STR(j.profile, "");
  sbs_job_free(&j);
  sbs_env_free(&e);
}

int main(void) {
  test_host();
  test_surge_like();
  test_closest();
  return check_exit();
}
