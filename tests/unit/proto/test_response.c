/* Responses: envelopes, error responses for every code, exec wrapping and
 * overall status, wire encoding. */
#include <stdlib.h>

#include "check.h"
#include "protocol.h"

static char *line_of(json_object *o) {
  size_t len = 0;
  char *s = sbp_encode_line(o, &len);
  CHECK(s != NULL);
  if (s) {
    CHECK(len == strlen(s));
    CHECK(len > 0 && s[len - 1] == '\n');
    CHECK(memchr(s, '\n', len - 1) == NULL);
  }
  return s;
}

static void check_line(json_object *o, const char *want) {
  char *s = line_of(o);
  CHECK_STR(s, want);
  free(s);
}

static void test_envelopes(void) {
  json_object *sid = json_object_new_string("a/b");
  json_object *iid = json_object_new_int64(-12);
  json_object *r = sbp_response_new(sid, "ping");
  check_line(r, "{\"id\":\"a/b\",\"type\":\"ping\"}\n"); /* no "\/" escaping */
  json_object_put(r);
  r = sbp_response_new(iid, "status");
  check_line(r, "{\"id\":-12,\"type\":\"status\"}\n");
  json_object_put(r);
  r = sbp_response_new(NULL, "ping");
  check_line(r, "{\"id\":null,\"type\":\"ping\"}\n");
  json_object_put(r);
  /* the caller's id reference is untouched */
  json_object_put(sid);
  json_object_put(iid);
  CHECK(sbp_encode_line(NULL, NULL) == NULL);
}

static void test_error_responses(void) {
  json_object *id = json_object_new_string("j1");
  for (int i = 0; sbp_error_codes[i]; i++) {
    json_object *r = sbp_error_response(id, sbp_error_codes[i], "problem %d with \"%s\"", i, "x\ny");
    CHECK(r != NULL);
    CHECK_STR(sbp_response_error_code(r), sbp_error_codes[i]);
    char want[256];
    snprintf(want, sizeof want,
             "{\"id\":\"j1\",\"type\":\"error\",\"error\":{\"code\":\"%s\",\"message\":\"problem %d with "
             "\\\"x\\ny\\\"\"}}\n",
             sbp_error_codes[i], i);
    check_line(r, want);
    json_object_put(r);
  }
  int n = 0;
  for (; sbp_error_codes[n]; n++) CHECK(sbp_error_code_known(sbp_error_codes[n]));
  CHECK(n == 14);
  CHECK(sbp_error_code_known("busy"));
  CHECK(sbp_error_code_known("unknown_toolchain"));
  CHECK(sbp_error_code_known("not_found"));
  CHECK(sbp_error_code_known("unauthorized"));
  CHECK(sbp_error_code_known("internal"));
  CHECK(!sbp_error_code_known("Busy"));
  CHECK(!sbp_error_code_known(""));
  CHECK(!sbp_error_code_known(NULL));

  /* null id (unparseable line) */
  json_object *r = sbp_error_response(NULL, SBP_E_TOO_LARGE, "request line longer than %zu bytes", (size_t)10);
  check_line(r, "{\"id\":null,\"type\":\"error\",\"error\":{\"code\":\"too_large\",\"message\":\"request line longer "
                "than 10 bytes\"}}\n");
  json_object_put(r);

  /* a very long message is cut, never overflows */
  char big[4000];
  memset(big, 'm', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  r = sbp_error_response(id, SBP_E_INTERNAL, "%s", big);
  json_object *e = NULL, *m = NULL;
  CHECK(json_object_object_get_ex(r, "error", &e) && json_object_object_get_ex(e, "message", &m));
  CHECK(strlen(json_object_get_string(m)) == 1023);
  json_object_put(r);

  /* sbp_response_error_code on non-errors */
  r = sbp_response_new(id, "ping");
  CHECK(sbp_response_error_code(r) == NULL);
  json_object_put(r);
  CHECK(sbp_response_error_code(NULL) == NULL);
  json_object_put(id);
}

static json_object *result_doc(const char *status, int exit_code) {
  json_object *d = json_object_new_object();
  json_object_object_add(d, "status", json_object_new_string(status));
  json_object_object_add(d, "exit_code", json_object_new_int(exit_code));
  json_object_object_add(d, "stdout", json_object_new_string(""));
  return d;
}

static const char *status_of(const char *names[], const char *statuses[], size_t n) {
  static char buf[64];
  json_object *resp = sbp_exec_response_new(NULL);
  for (size_t i = 0; i < n; i++) CHECK(sbp_exec_response_add_step(resp, names[i], result_doc(statuses[i], 0)) == 0);
  CHECK(sbp_exec_response_finish(resp) == 0);
  json_object *s = NULL;
  CHECK(json_object_object_get_ex(resp, "status", &s));
  snprintf(buf, sizeof buf, "%s", json_object_get_string(s));
  json_object_put(resp);
  return buf;
}

static void test_exec_status(void) {
  CHECK_STR(status_of(NULL, NULL, 0), "ok");
  CHECK_STR(status_of((const char *[]){"compile", "run"}, (const char *[]){"ok", "ok"}, 2), "ok");
  CHECK_STR(status_of((const char *[]){"compile"}, (const char *[]){"runtime_error"}, 1), "compile_error");
  CHECK_STR(status_of((const char *[]){"compile"}, (const char *[]){"timeout"}, 1), "compile_error");
  CHECK_STR(status_of((const char *[]){"compile"}, (const char *[]){"internal_error"}, 1), "internal_error");
  CHECK_STR(status_of((const char *[]){"compile", "run"}, (const char *[]){"ok", "runtime_error"}, 2),
            "runtime_error");
  CHECK_STR(status_of((const char *[]){"compile", "run"}, (const char *[]){"ok", "memory_limit"}, 2), "memory_limit");
  CHECK_STR(status_of((const char *[]){"run", "check"}, (const char *[]){"signaled", "ok"}, 2), "signaled");
  CHECK_STR(status_of((const char *[]){"a", "b", "c"}, (const char *[]){"ok", "output_limit", "timeout"}, 3),
            "output_limit");
  /* a "run" step failing is not a compile error, even after a compile step */
  CHECK_STR(status_of((const char *[]){"compile", "run"}, (const char *[]){"ok", "timeout"}, 2), "timeout");
}

static void test_exec_response(void) {
  json_object *id = json_object_new_int(7);
  json_object *resp = sbp_exec_response_new(id);
  json_object_put(id);
  CHECK(resp != NULL);
  CHECK(sbp_exec_response_add_step(resp, "compile", result_doc("ok", 0)) == 0);
  CHECK(sbp_exec_response_add_step(resp, "run", result_doc("runtime_error", 3)) == 0);
  CHECK(sbp_exec_response_finish(resp) == 0);
  check_line(resp,
             "{\"id\":7,\"type\":\"exec\",\"status\":\"runtime_error\",\"steps\":["
             "{\"status\":\"ok\",\"exit_code\":0,\"stdout\":\"\",\"name\":\"compile\"},"
             "{\"status\":\"runtime_error\",\"exit_code\":3,\"stdout\":\"\",\"name\":\"run\"}]}\n");
  /* explicit status (e.g. cancelled) */
  CHECK(sbp_exec_response_set_status(resp, SBP_STATUS_CANCELLED) == 0);
  json_object *s = NULL;
  CHECK(json_object_object_get_ex(resp, "status", &s) && strcmp(json_object_get_string(s), "cancelled") == 0);

  /* misuse: not an exec response / not an object result; result is consumed */
  json_object *ping = sbp_response_new(NULL, "ping");
  CHECK(sbp_exec_response_add_step(ping, "run", result_doc("ok", 0)) == -1);
  CHECK(sbp_exec_response_set_status(ping, "ok") == -1);
  CHECK(sbp_exec_response_finish(ping) == -1);
  CHECK(sbp_exec_response_add_step(resp, "run", json_object_new_string("not an object")) == -1);
  json_object_put(ping);

  /* a step document without status is a daemon bug: internal_error */
  json_object *bad = json_object_new_object();
  CHECK(sbp_exec_response_add_step(resp, "run", bad) == 0);
  CHECK(sbp_exec_response_finish(resp) == 0);
  CHECK(json_object_object_get_ex(resp, "status", &s));
  CHECK_STR(json_object_get_string(s), "runtime_error"); /* the earlier failure still decides */
  json_object_put(resp);

  resp = sbp_exec_response_new(NULL);
  CHECK(sbp_exec_response_add_step(resp, "run", json_object_new_object()) == 0);
  CHECK(sbp_exec_response_finish(resp) == 0);
  CHECK(json_object_object_get_ex(resp, "status", &s));
  CHECK_STR(json_object_get_string(s), "internal_error");
  json_object_put(resp);
}

static void test_encoding(void) {
  /* strings with control characters, quotes, slashes, unicode */
  json_object *r = sbp_response_new(NULL, "exec");
  json_object_object_add(r, "stdout", json_object_new_string_len("a\nb\r\t\"\\/\x01\xc3\xa9", 11));
  check_line(r, "{\"id\":null,\"type\":\"exec\",\"stdout\":\"a\\nb\\r\\t\\\"\\\\/\\u0001\xc3\xa9\"}\n");
  json_object_put(r);
  /* embedded NUL survives as \u0000 */
  r = json_object_new_object();
  json_object_object_add(r, "x", json_object_new_string_len("a\0b", 3));
  check_line(r, "{\"x\":\"a\\u0000b\"}\n");
  json_object_put(r);
}

int main(void) {
  test_envelopes();
  test_error_responses();
  test_exec_status();
  test_exec_response();
  test_encoding();
  return check_exit();
}
