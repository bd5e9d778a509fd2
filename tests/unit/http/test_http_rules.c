/* SandboxFusion's status rules as http/answer.c applies them, on native
 * results written here by hand; paths, the token, addresses. Every expected
 * value is SandboxFusion's (sandbox/server/sandbox_api.py) or the rule in
 * docs/http.md, worked out by hand. */
#include "check.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static sbh_server srv;

static json_object *answer(const char *native, int *http) {
  json_object *n = native ? json_tokener_parse(native) : NULL;
  json_object *ctx = json_tokener_parse("{\"language\":\"python\",\"fetch\":[],\"warm_asked\":false,\"warm_why\":\"x\"}");
  json_object *a = sbh_run_code_answer(&srv, n, ctx, http);
  if (n) json_object_put(n);
  json_object_put(ctx);
  return a;
}

static const char *str(json_object *o, const char *path1, const char *path2) {
  json_object *v = NULL;
  if (!json_object_object_get_ex(o, path1, &v)) return NULL;
  if (path2 && (!v || !json_object_object_get_ex(v, path2, &v))) return NULL;
  return v ? json_object_get_string(v) : "null";
}

#define STEP(name, status, ec, sig) \
  "{\"name\":\"" name "\",\"status\":\"" status "\",\"exit_code\":" ec ",\"signal\":" sig \
  ",\"stdout\":\"o\",\"stderr\":\"e\",\"wall_time_s\":0.5}"
#define EXEC(st, steps) "{\"id\":1,\"type\":\"exec\",\"status\":\"" st "\",\"steps\":[" steps "]}"

static void rule(const char *native, const char *top, const char *compile_st, const char *run_st, const char *run_rc) {
  int http = 0;
  json_object *a = answer(native, &http);
  CHECK(http == 200);
  CHECK_STR(str(a, "status", NULL), top);
  if (compile_st) CHECK_STR(str(a, "compile_result", "status"), compile_st);
  else CHECK_STR(str(a, "compile_result", NULL), "null");
  if (run_st) CHECK_STR(str(a, "run_result", "status"), run_st);
  else CHECK_STR(str(a, "run_result", NULL), "null");
  if (run_rc) CHECK_STR(str(a, "run_result", "return_code"), run_rc);
  json_object *msg;
  CHECK(json_object_object_get_ex(a, "message", &msg) && json_object_is_type(msg, json_type_string));
  json_object_put(a);
}

int main(void) {
  snprintf(srv.hostname, sizeof srv.hostname, "h");
  sbh_limits_default(&srv.opt.limits);

  /* Success: every step exited 0 */
  rule(EXEC("ok", STEP("run", "ok", "0", "null")), "Success", NULL, "Finished", "0");
  rule(EXEC("ok", STEP("compile", "ok", "0", "null") "," STEP("run", "ok", "0", "null")), "Success", "Finished",
       "Finished", "0");
  /* a non-zero return code: Failed */
  rule(EXEC("runtime_error", STEP("run", "runtime_error", "3", "null")), "Failed", NULL, "Finished", "3");
  /* a compile error: Failed, no run */
  rule(EXEC("compile_error", STEP("compile", "runtime_error", "1", "null")), "Failed", "Finished", NULL, NULL);
  /* a signal: Finished with -N (SIGSEGV 11) */
  rule(EXEC("signaled", STEP("run", "signaled", "null", "\"SIGSEGV\"")), "Failed", NULL, "Finished", "-11");
  /* a time limit: TimeLimitExceeded, return_code null, Failed */
  rule(EXEC("timeout", STEP("run", "timeout", "null", "\"SIGKILL\"")), "Failed", NULL, "TimeLimitExceeded", "null");
  rule(EXEC("compile_error", STEP("compile", "timeout", "null", "\"SIGKILL\"")), "Failed", "TimeLimitExceeded", NULL,
       NULL);
  /* a memory kill: Finished, never 0: the killing signal, else -9; an own non-zero exit kept */
  rule(EXEC("memory_limit", STEP("run", "memory_limit", "null", "\"SIGKILL\"")), "Failed", NULL, "Finished", "-9");
  rule(EXEC("memory_limit", STEP("run", "memory_limit", "0", "null")), "Failed", NULL, "Finished", "-9");
  rule(EXEC("memory_limit", STEP("run", "memory_limit", "1", "null")), "Failed", NULL, "Finished", "1");
  rule(EXEC("output_limit", STEP("run", "output_limit", "null", "\"SIGKILL\"")), "Failed", NULL, "Finished", "-9");
  /* the sandbox failed: Error, SandboxError, its error as the message */
  rule(EXEC("internal_error", STEP("run", "internal_error", "null", "null")), "SandboxError", NULL, "Error", "null");
  rule(EXEC("internal_error", STEP("compile", "internal_error", "null", "null")), "SandboxError", "Error", NULL, NULL);
  /* any Error wins over a time limit (SandboxFusion checks Error first) */
  rule(EXEC("internal_error", STEP("compile", "timeout", "null", "null") "," STEP("run", "internal_error", "null", "null")),
       "SandboxError", "TimeLimitExceeded", "Error", "null");
  /* nothing ran: a toolchain not installed, cancelled, the daemon gone */
  rule("{\"id\":1,\"type\":\"exec\",\"status\":\"toolchain_missing\",\"steps\":[],\"error\":\"g++ is not installed\"}",
       "SandboxError", NULL, NULL, NULL);
  rule(NULL, "SandboxError", NULL, NULL, NULL);
  {
    int http = 0;
    json_object *a = answer("{\"id\":1,\"type\":\"error\",\"error\":{\"code\":\"busy\",\"message\":\"queue full\"}}", &http);
    CHECK(http == 503); /* never a verdict */
    json_object_put(a);
    a = answer("{\"id\":1,\"type\":\"error\",\"error\":{\"code\":\"bad_request\",\"message\":\"files[1]\"}}", &http);
    CHECK(http == 400);
    json_object_put(a);
    a = answer("{\"id\":1,\"type\":\"error\",\"error\":{\"code\":\"unknown_toolchain\",\"message\":\"no java\"}}", &http);
    CHECK(http == 200);
    CHECK_STR(str(a, "status", NULL), "SandboxError");
    CHECK(strstr(str(a, "message", NULL), "no java") != NULL);
    json_object_put(a);
  }

  /* paths stay inside /app */
  char why[128];
  struct {
    const char *in, *out;
  } paths[] = {{"a/b", "a/b"},   {"/app/a/b", "a/b"}, {"/a/b", "a/b"},     {"./a//b/", "a/b"}, {"//app/x", "app/x"},
               {"..", NULL},     {"a/../b", NULL},    {"/app/../x", NULL}, {"", NULL},         {"/", NULL},
               {"/app/", NULL},  {".", NULL},         {"a/..", NULL},      {"...", "..."},     {"..a", "..a"}};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
    char *p = sbh_app_path(paths[i].in, strlen(paths[i].in), why, sizeof why);
    if (paths[i].out) CHECK_STR(p, paths[i].out);
    else CHECK(p == NULL);
    free(p);
  }
  CHECK(sbh_app_path("a\0b", 3, why, sizeof why) == NULL);

  /* the token */
  const char *tok = "abcdefghijklmnop";
  CHECK(sbh_token_ok(tok, "Bearer abcdefghijklmnop", 23));
  CHECK(!sbh_token_ok(tok, "Bearer abcdefghijklmnoq", 23));
  CHECK(!sbh_token_ok(tok, "Bearer abcdefghijklmno", 22));
  CHECK(!sbh_token_ok(tok, "Bearer abcdefghijklmnopq", 24));
  CHECK(!sbh_token_ok(tok, "bearer abcdefghijklmnop", 23));
  CHECK(!sbh_token_ok(tok, NULL, 0));

  /* addresses */
  struct sockaddr_storage ss;
  bool lo = false;
  CHECK(sbh_parse_addr("127.0.0.1:8080", &ss, &lo) == 0 && lo);
  CHECK(sbh_parse_addr("127.1.2.3:0", &ss, &lo) == 0 && lo);
  CHECK(sbh_parse_addr("[::1]:8080", &ss, &lo) == 0 && lo);
  CHECK(sbh_parse_addr("0.0.0.0:8080", &ss, &lo) == 0 && !lo);
  CHECK(sbh_parse_addr("[::]:8080", &ss, &lo) == 0 && !lo);
  CHECK(sbh_parse_addr("10.0.0.1:80", &ss, &lo) == 0 && !lo);
  CHECK(sbh_parse_addr("localhost:80", &ss, &lo) < 0);
  CHECK(sbh_parse_addr("127.0.0.1", &ss, &lo) < 0);
  CHECK(sbh_parse_addr("127.0.0.1:65536", &ss, &lo) < 0);
  CHECK(sbh_parse_addr("::1:80", &ss, &lo) < 0);
  CHECK(sbh_parse_addr(":80", &ss, &lo) < 0);
  return check_exit();
}
