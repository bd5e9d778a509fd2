/* The SURGE adapters on small hand-written items in SURGE's format: one per
 * subset and per quirk (DR's merged pipe, BG's class names and
 * "Compilation Error: " prefix, TC's --A argument and in-process timing, RL's
 * three end markers and cow's main-3.cpp, sudoku's sudoku.txt, ML's zh_CN
 * item, FL's JSON). Responses are hand-written too. */
#include "check.h"
#include "regen.h"

#include <stdlib.h>
#include <string.h>

static const char *toolchains_json =
    "[{\"name\":\"g++-11\",\"family\":\"g++\",\"version\":\"11.3.0\",\"path\":\"/usr/bin/g++-11\",\"real_path\":\"/usr/bin/x86_64-linux-gnu-g++-11\",\"available\":true},"
    "{\"name\":\"clang++-19\",\"family\":\"clang++\",\"version\":\"19.1.7\",\"path\":\"/usr/bin/clang++-19\",\"real_path\":\"/usr/lib/llvm-19/bin/clang\",\"available\":true},"
    "{\"name\":\"java\",\"family\":\"java\",\"version\":\"17.0.15\",\"path\":\"/usr/bin/javac\",\"real_path\":\"/usr/lib/jvm/x/bin/javac\",\"available\":true},"
    "{\"name\":\"python3\",\"family\":\"python3\",\"version\":\"3.11.2\",\"path\":\"/usr/bin/python3\",\"real_path\":\"/usr/bin/python3.11\",\"available\":true},"
    "{\"name\":\"python3.8\",\"family\":\"python3\",\"version\":\"3.8.18\",\"path\":\"/opt/py38/bin/python3\",\"real_path\":\"/opt/py38/bin/python3.8\",\"available\":true},"
    "{\"name\":\"julia\",\"family\":\"julia\",\"version\":null,\"available\":false}]";

static json_object *steps_of(json_object *req) { return json_object_object_get(req, "steps"); }
static const char *argv_at(json_object *step, size_t i) {
  return json_object_get_string(json_object_array_get_idx(json_object_object_get(step, "argv"), i));
}
static const char *file_path(json_object *req, size_t i) {
  return json_object_get_string(json_object_object_get(json_object_array_get_idx(json_object_object_get(req, "files"), i), "path"));
}

static void adapt(sbs_subset s, size_t index, const char *item_json, const sbs_env *env, sbs_job *job) {
  json_object *item = json_tokener_parse(item_json);
  char err[256] = "";
  CHECK(item != NULL);
  int rc = sbs_adapt(s, index, item, env, job, err, sizeof err);
  if (rc) fprintf(stderr, "adapt failed: %s\n", err);
  CHECK(rc == 0);
  json_object_put(item);
}

/* The reference from a hand-written answer, typed as the pump hands it over
 * (the answers below omit "type": an exec answer's). */
static char *ref(const sbs_job *job, const char *response_json, double *inproc) {
  json_object *o = json_tokener_parse(response_json);
  if (o && !json_object_object_get_ex(o, "type", NULL)) json_object_object_add(o, "type", json_object_new_string("exec"));
  sbc_result r;
  char err[256] = "";
  CHECK(sbc_result_parse(o, &r, err, sizeof err) == 0);
  json_object_put(o);
  char *s = sbs_reference(job, &r, inproc);
  sbc_result_free(&r);
  return s;
}

static void test_dr(const sbs_env *env) {
  sbs_job j;
  adapt(SBS_DR, 0, "{\"custom_category\":7,\"custom_features\":{\"key\":\"g++-C++11--O1\"},\"question\":\"int main(){}\",\"gt\":\"\"}", env, &j);
  json_object *st = steps_of(j.request);
  CHECK(json_object_array_length(st) == 2);
  json_object *compile = json_object_array_get_idx(st, 0), *run = json_object_array_get_idx(st, 1);
  CHECK_STR(argv_at(compile, 0), "bash");
  CHECK_STR(argv_at(compile, 2), "exec -a g++ /usr/bin/g++-11 -std=c++11 -O1 test.cpp -o test"); /* relative path */
  CHECK(json_object_get_boolean(json_object_object_get(compile, "merge_output")));
  CHECK(json_object_get_boolean(json_object_object_get(compile, "cache")));
  CHECK_STR(argv_at(run, 0), "./test");
  CHECK(json_object_get_boolean(json_object_object_get(run, "merge_output")));
  CHECK(json_object_object_get(json_object_object_get(compile, "env"), "LANG") == NULL); /* POSIX locale */
  CHECK_STR(file_path(j.request, 0), "test.cpp");
  CHECK_STR(j.group, "g++-C++11--O1");
  /* one pipe: diagnostics, then the program's output, raw (newline kept) */
  char *r = ref(&j, "{\"status\":\"ok\",\"steps\":[{\"name\":\"compile\",\"status\":\"ok\",\"stdout\":\"test.cpp:1:1: warning: w\\n\"},"
                    "{\"name\":\"run\",\"status\":\"ok\",\"stdout\":\"42\\n\"}]}", NULL);
  CHECK_STR(r, "test.cpp:1:1: warning: w\n42\n");
  free(r);
  sbs_job_free(&j);
  adapt(SBS_DR, 1, "{\"custom_features\":{\"key\":\"clang++-C++03--Os\"},\"question\":\"int main(){}\",\"gt\":\"\"}", env, &j);
  json_object *c2 = json_object_array_get_idx(steps_of(j.request), 0);
  CHECK(strstr(argv_at(c2, 2), "exec clang++") == argv_at(c2, 2));
  CHECK(strstr(argv_at(c2, 2), "-std=c++03 -Os test.cpp -o test") != NULL);
  CHECK(strncmp(json_object_get_string(json_object_object_get(json_object_object_get(c2, "env"), "PATH")),
                "/usr/lib/llvm-19/bin:", 21) == 0); /* the driver runs as clang++ */
  sbs_job_free(&j);
}

static void test_bg(const sbs_env *env) {
  sbs_job j;
  adapt(SBS_BG, 0, "{\"custom_features\":{\"language\":\"java\"},\"question\":\"import java.util.*;\\nclass Helper {}\\npublic class Solver { public static void main(String[] a) {} }\",\"gt\":\"\"}", env, &j);
  CHECK_STR(file_path(j.request, 0), "Solver.java"); /* /app/<first public class>.java */
  CHECK_STR(json_object_get_string(json_object_object_get(j.request, "toolchain")), "java");
  char *r = ref(&j, "{\"status\":\"compile_error\",\"steps\":[{\"name\":\"compile\",\"status\":\"runtime_error\",\"stdout\":\"\",\"stderr\":\"/app/Solver.java:1: error: ';' expected\\n\"}]}", NULL);
  CHECK_STR(r, "Compilation Error: /app/Solver.java:1: error: ';' expected\n");
  free(r);
  sbs_job_free(&j);
  adapt(SBS_BG, 1, "{\"custom_features\":{\"language\":\"python3\"},\"question\":\"print(1/0)\",\"gt\":\"\"}", env, &j);
  CHECK_STR(json_object_get_string(json_object_object_get(j.request, "toolchain")), "python3.8"); /* SURGE's Python */
  r = ref(&j, "{\"status\":\"runtime_error\",\"steps\":[{\"name\":\"run\",\"status\":\"runtime_error\",\"stdout\":\"a\\n\",\"stderr\":\"Traceback\\n\"}]}", NULL);
  CHECK_STR(r, "a\nTraceback\n"); /* stdout then stderr, raw */
  free(r);
  /* output that is not UTF-8 (a NUL, a 0xff): the text as the daemon sent it,
   * U+FFFD in their places, not the exact bytes of stdout_b64 ("YQD/Cg==":
   * "a\0\xff\n"), which a JSON string could not hold */
  r = ref(&j, "{\"status\":\"ok\",\"steps\":[{\"name\":\"run\",\"status\":\"ok\",\"stdout\":\"a\\ufffd\\ufffd\\n\","
              "\"stdout_lossy\":true,\"stdout_b64\":\"YQD/Cg==\",\"stderr\":\"w\\ufffd\",\"stderr_lossy\":true,"
              "\"stderr_b64\":\"d4A=\"}]}", NULL);
  CHECK_STR(r, "a\xef\xbf\xbd\xef\xbf\xbd\nw\xef\xbf\xbd");
  free(r);
  sbs_job_free(&j);
  adapt(SBS_BG, 2, "{\"custom_features\":{\"language\":\"cpp\"},\"question\":\"int main(){\",\"gt\":\"\"}", env, &j);
  json_object *c = json_object_array_get_idx(steps_of(j.request), 0);
  CHECK(strstr(argv_at(c, 2), "-std=c++11") && strstr(argv_at(c, 2), "/app/test.cpp -o /app/test")); /* absolute */
  CHECK_STR(argv_at(json_object_array_get_idx(steps_of(j.request), 1), 0), "/app/test");
  sbs_job_free(&j);
}

static void test_tc(const sbs_env *env) {
  sbs_job j;
  adapt(SBS_TC, 0, "{\"custom_features\":{\"fid\":\"qr_r.py\",\"time\":null},\"question\":\"code:```\\nprint(1)\\n```\\ncommand:```\\npython qr_r.py --A 91 53 ;36 54 \\n```\",\"gt\":\"\"}", env, &j);
  json_object *run = json_object_array_get_idx(steps_of(j.request), 0);
  size_t n = json_object_array_length(json_object_object_get(run, "argv"));
  CHECK_STR(argv_at(run, 0), "/usr/bin/python3");
  CHECK_STR(argv_at(run, 1), "-c"); /* the in-process timing wrapper */
  CHECK_STR(argv_at(run, 3), "");    /* span: the whole script */
  CHECK_STR(argv_at(run, 4), "qr_r.py");
  CHECK_STR(argv_at(run, n - 2), "--A");
  CHECK_STR(argv_at(run, n - 1), "91 53 ;36 54"); /* one argument, as SURGE passed it */
  CHECK_STR(file_path(j.request, 0), "qr_r.py");
  double inproc = 0;
  char *r = ref(&j, "{\"status\":\"ok\",\"steps\":[{\"name\":\"run\",\"status\":\"ok\",\"stdout\":\"  13.23\\n\",\"stderr\":\"\\nSURGEBOX_INPROC_CPU=0.012500\\n\"}]}", &inproc);
  CHECK_STR(r, "13.23"); /* stripped */
  CHECK_NEAR(inproc, 0.0125, 1e-9);
  free(r);
  /* the script printed a look-alike first: the wrapper's line (the last) counts */
  r = ref(&j, "{\"status\":\"ok\",\"steps\":[{\"name\":\"run\",\"status\":\"ok\",\"stdout\":\"1\\n\",\"stderr\":\"SURGEBOX_INPROC_CPU=9.5\\n\\nSURGEBOX_INPROC_CPU=0.000300\\n\"}]}", &inproc);
  CHECK_NEAR(inproc, 0.0003, 1e-9);
  free(r);
  sbs_job_free(&j);
  /* tsp.py: SURGE timed the solver only */
  adapt(SBS_TC, 7, "{\"custom_features\":{\"fid\":\"tsp.py\",\"time\":\"0.0001 seconds\"},\"question\":\"code:```\\nx\\n```\\ncommand:```\\npython tsp.py --vertices 3 --positions \\\"1,2 3,4\\\" \\n```\",\"gt\":\"\"}", env, &j);
  run = json_object_array_get_idx(steps_of(j.request), 0);
  CHECK_STR(argv_at(run, 3), "tsp_bruteforce");
  CHECK_STR(argv_at(run, 4), "tsp.py");
  CHECK_STR(argv_at(run, 8), "1,2 3,4");
  CHECK(strstr(argv_at(run, 2), "time.thread_time()") != NULL); /* not the tick-granular process clock */
  CHECK_STR(argv_at(run, 0), "/usr/bin/python3"); /* the host's pyenv 3.8 is not reachable from a raw step */
  CHECK_STR(j.profile, "");
  sbs_job_free(&j);
  adapt(SBS_SC, 1, "{\"custom_features\":{\"fid\":\"tsp.py\"},\"question\":\"code:```\\nx\\n```\\ncommand:```\\npython tsp.py --positions \\\"8.39,9.71 0.91,1.16\\\" --v 3\\n```\",\"gt\":\"\"}", env, &j);
  run = json_object_array_get_idx(steps_of(j.request), 0);
  CHECK_STR(argv_at(run, 1), "tsp.py"); /* SC: no wrapper */
  CHECK_STR(argv_at(run, 3), "8.39,9.71 0.91,1.16"); /* shell quotes */
  CHECK(j.whitespace_free);
  sbs_job_free(&j);
}

static void test_rl(const sbs_env *env) {
  sbs_job j;
  adapt(SBS_RL, 0, "{\"custom_features\":{\"repo\":\"TUOJ\",\"run_instruction\":\"make\",\"task\":\"oop\"},"
        "\"question\":\"Here is the code repository:main.cpp:<start_file>int main(){}<endfile>Farm.h:<start_file>#pragma once<end_file>, and the input file is:./input/3.txt:<start_file>2\\n<enfile>\",\"gt\":\"\"}", env, &j);
  json_object *files = json_object_object_get(j.request, "files");
  CHECK(json_object_array_length(files) == 4); /* three packed files (three end markers) + main-3.cpp */
  CHECK_STR(file_path(j.request, 2), "input/3.txt");
  CHECK_STR(file_path(j.request, 3), "main-3.cpp");
  CHECK_STR(argv_at(json_object_array_get_idx(steps_of(j.request), 0), 2), "make");
  CHECK_STR(argv_at(json_object_array_get_idx(steps_of(j.request), 1), 2), "./main < input/3.txt");
  CHECK(!j.strip); /* cow: raw "%.1f" */
  sbs_job_free(&j);
  adapt(SBS_RL, 1, "{\"custom_features\":{\"repo\":\"sudoku-player\",\"run_instruction\":\"./main.exe -s game.txt\",\"task\":\"sudoku\"},"
        "\"question\":\"main.cpp:<start_file>int main(){}<end_file>;game.txt:<start_file><7 9 $<endfile>\",\"gt\":\"\"}", env, &j);
  CHECK(json_object_array_length(steps_of(j.request)) == 3);
  CHECK(strstr(argv_at(json_object_array_get_idx(steps_of(j.request), 0), 2), "-std=gnu++14 -include cstring"));
  char *r = ref(&j, "{\"status\":\"ok\",\"steps\":[{\"name\":\"compile\",\"status\":\"ok\",\"stdout\":\"\"},{\"name\":\"run\",\"status\":\"ok\",\"stdout\":\"\"},{\"name\":\"collect\",\"status\":\"ok\",\"stdout\":\"7 9 5 \\n\"}]}", NULL);
  CHECK_STR(r, "7 9 5 \n"); /* the file sudoku.txt, raw */
  free(r);
  sbs_job_free(&j);
}

/* Julia runs in the surge-2025 profile when the daemon has it; nothing else moves there. */
static void test_best_profile(sbs_env *env) {
  json_object *prof = json_tokener_parse(
      "[{\"name\":\"julia\",\"family\":\"julia\",\"version\":\"1.5.3\",\"path\":\"/usr/bin/julia\",\"available\":true},"
      "{\"name\":\"python3\",\"family\":\"python3\",\"version\":\"3.9.2\",\"path\":\"/usr/bin/python3\",\"available\":true},"
      "{\"name\":\"python3.8\",\"family\":\"python3.8\",\"version\":\"3.8.18\",\"path\":\"/usr/local/python3.8/bin/python3.8\",\"available\":true}]");
  sbs_env_set_best(env, "surge-2025", prof);
  json_object_put(prof);
  sbs_job j;
  adapt(SBS_ML, 5, "{\"custom_features\":{\"language\":\"Julia\"},\"question\":\"println(1)\",\"gt\":\"1\"}", env, &j);
  CHECK(j.request != NULL);
  CHECK_STR(j.missing, "");
  CHECK_STR(j.profile, "surge-2025");
  CHECK_STR(json_object_get_string(json_object_object_get(j.request, "profile")), "surge-2025");
  CHECK_STR(json_object_get_string(json_object_object_get(j.request, "toolchain")), "julia");
  CHECK_STR(file_path(j.request, 0), "main.jl");
  sbs_job_free(&j);
  adapt(SBS_ML, 6, "{\"custom_features\":{\"language\":\"Python\"},\"question\":\"print(1)\",\"gt\":\"1\"}", env, &j);
  CHECK_STR(j.profile, ""); /* the host's python3 reproduces ML Python already */
  CHECK(json_object_object_get(j.request, "profile") == NULL);
  sbs_job_free(&j);
  const char *tsp = "{\"custom_features\":{\"fid\":\"tsp.py\",\"time\":\"1.1037 seconds\"},\"question\":\"code:```\\nx\\n```\\ncommand:```\\npython tsp.py --vertices 3 \\n```\",\"gt\":\"\"}";
  adapt(SBS_TC, 17, tsp, env, &j); /* SURGE's Python 3.8 for the timed items */
  CHECK_STR(argv_at(json_object_array_get_idx(steps_of(j.request), 0), 0), "/usr/local/python3.8/bin/python3.8");
  CHECK_STR(j.profile, "surge-2025");
  CHECK_STR(j.toolchain, "python3.8");
  sbs_job_free(&j);
  adapt(SBS_TC, 60, "{\"custom_features\":{\"fid\":\"lu_l.py\",\"time\":null},\"question\":\"code:```\\nx\\n```\\ncommand:```\\npython lu_l.py \\n```\",\"gt\":\"\"}", env, &j);
  CHECK_STR(argv_at(json_object_array_get_idx(steps_of(j.request), 0), 0), "/usr/bin/python3"); /* numpy: the host's */
  CHECK_STR(j.profile, "");
  sbs_job_free(&j);
  snprintf(env->run_profile, sizeof env->run_profile, "surge-2025"); /* --profile surge-2025: its own 3.8 */
  adapt(SBS_TC, 17, tsp, env, &j);
  CHECK_STR(argv_at(json_object_array_get_idx(steps_of(j.request), 0), 0), "/opt/py38/bin/python3");
  CHECK_STR(j.profile, ""); /* the run's profile, not named per job */
  sbs_job_free(&j);
  env->run_profile[0] = '\0';
  sbs_env_set_best(env, NULL, NULL); /* the profile is absent: back to missing */
  adapt(SBS_ML, 5, "{\"custom_features\":{\"language\":\"Julia\"},\"question\":\"println(1)\",\"gt\":\"1\"}", env, &j);
  CHECK_STR(j.missing, "julia");
  CHECK_STR(j.profile, "");
  sbs_job_free(&j);
}

static void test_ml_fl(const sbs_env *env) {
  sbs_job j;
  adapt(SBS_ML, 43, "{\"custom_categoey\":1,\"custom_features\":{\"language\":\"Java\"},\"question\":\"class Main { public static void main(String[] a) {} }\",\"gt\":\"\"}", env, &j);
  CHECK_STR(file_path(j.request, 0), "Main.java"); /* no public class: the class with main */
  CHECK_STR(json_object_get_string(json_object_object_get(json_object_object_get(j.request, "options"), "locale")), "zh_CN");
  sbs_job_free(&j);
  /* the class with main comes after a helper method's closing brace */
  adapt(SBS_ML, 9, "{\"custom_features\":{\"language\":\"Java\"},\"question\":\"import java.util.*;\\nclass Util {}\\nclass Solution {\\n static int f() { return 1; }\\n public static void main(String[] args) { }\\n}\",\"gt\":\"\"}", env, &j);
  CHECK_STR(file_path(j.request, 0), "Solution.java");
  sbs_job_free(&j);
  adapt(SBS_ML, 5, "{\"custom_features\":{\"language\":\"Julia\"},\"question\":\"println(1)\",\"gt\":\"1\"}", env, &j);
  CHECK(j.request == NULL);
  CHECK_STR(j.missing, "julia"); /* reported, never guessed */
  sbs_job_free(&j);
  /* FL: Lean's messages -> SURGE's JSON (errors only, Python separators, ASCII) */
  sbs_job fl = {0};
  fl.mode = SBS_OUT_STDOUT;
  fl.out_step = "run";
  snprintf(fl.toolchain, sizeof fl.toolchain, "lean4");
  char *r = ref(&fl, "{\"status\":\"runtime_error\",\"steps\":[{\"name\":\"run\",\"status\":\"runtime_error\",\"stdout\":"
                     "\"{\\\"severity\\\":\\\"warning\\\",\\\"pos\\\":{\\\"line\\\":1,\\\"column\\\":0},\\\"data\\\":\\\"w\\\"}\\n"
                     "{\\\"severity\\\":\\\"error\\\",\\\"pos\\\":{\\\"line\\\":38,\\\"column\\\":6},\\\"endPos\\\":{\\\"line\\\":38,\\\"column\\\":13},\\\"data\\\":\\\"tactic \\u2018x\\u2019 failed\\\"}\\n\"}]}", NULL);
  CHECK_STR(r, "{\"errors\": [{\"severity\": \"error\", \"pos\": {\"line\": 38, \"column\": 6}, \"endPos\": {\"line\": 38, \"column\": 13}, "
               "\"data\": \"tactic \\u2018x\\u2019 failed\"}], \"pass\": false, \"complete\": false}");
  free(r);
}

int main(void) {
  sbs_env env;
  json_object *tcs = json_tokener_parse(toolchains_json);
  char err[128];
  sbs_env_init(&env, tcs, err, sizeof err);
  json_object_put(tcs);
  CHECK_STR(env.gxx_name, "g++-11");
  CHECK_STR(env.clang_dir, "/usr/lib/llvm-19/bin");
  CHECK_STR(env.bg_python, "python3.8");
  CHECK_STR(env.python, "/usr/bin/python3");
  test_dr(&env);
  test_bg(&env);
  test_tc(&env);
  test_rl(&env);
  test_ml_fl(&env);
  test_best_profile(&env);
  sbs_env_free(&env);
  return check_exit();
}
