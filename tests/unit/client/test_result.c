/* client/result.c on hand-written exec and error responses: every field read,
 * exact bytes from *_b64 (NUL and invalid UTF-8 included) over the lossy
 * text, absent and null fields, malformed answers refused. */
#include "check.h"
#include "result.h"

#include <stdlib.h>
#include <string.h>

static int parse(const char *text, sbc_result *r, char *err, size_t n) {
  json_object *o = json_tokener_parse(text);
  int rc = sbc_result_parse(o, r, err, n);
  json_object_put(o); /* the result holds its own copies and references */
  return rc;
}

static void compile_and_run(void) {
  sbc_result r;
  char err[256] = "";
  /* stdout "a\0\xff\n" as base64 "YQD/Cg==", its text lossy */
  CHECK(parse("{\"id\":\"j1\",\"type\":\"exec\",\"status\":\"runtime_error\","
              "\"toolchain\":{\"name\":\"gcc\",\"version\":\"12.2.0\"},\"profile\":{\"name\":\"host\"},"
              "\"steps\":[{\"name\":\"compile\",\"status\":\"ok\",\"exit_code\":0,\"signal\":null,"
              "\"stdout\":\"\",\"stderr\":\"warn\\n\",\"cpu_time_s\":0.25,\"wall_time_s\":0.5,\"max_rss_kb\":2048,"
              "\"limit_hit\":null,\"cached\":true},"
              "{\"name\":\"run\",\"status\":\"runtime_error\",\"exit_code\":3,\"signal\":null,"
              "\"stdout\":\"a\\ufffd\\ufffd\\n\",\"stdout_lossy\":true,\"stdout_b64\":\"YQD/Cg==\","
              "\"stderr\":\"e\",\"stderr_truncated\":true,\"cpu_time_s\":1,\"wall_time_s\":1.5,"
              "\"max_rss_kb\":9000000000,\"limit_hit\":\"output\",\"enforced\":{\"memory\":\"cgroup v2\"}}]}",
              &r, err, sizeof err) == 0);
  CHECK_STR(err, "");
  CHECK_STR(r.id, "j1");
  CHECK(!r.is_error);
  CHECK_STR(r.status, "runtime_error");
  CHECK(r.error_code == NULL && r.error_message == NULL);
  CHECK(r.n_steps == 2);
  CHECK_STR(json_object_get_string(json_object_object_get(r.toolchain, "version")), "12.2.0");
  CHECK_STR(json_object_get_string(json_object_object_get(r.profile, "name")), "host");
  const sbc_step *c = &r.steps[0], *run = &r.steps[1];
  CHECK_STR(c->name, "compile");
  CHECK(c->has_exit_code && c->exit_code == 0 && c->signal == NULL && c->cached);
  CHECK(c->err.len == 5 && !memcmp(c->err.data, "warn\n", 5) && c->err.exact && !c->err.lossy);
  CHECK_NEAR(c->cpu_time_s, 0.25, 1e-12);
  CHECK_NEAR(c->wall_time_s, 0.5, 1e-12);
  CHECK(c->max_rss_kb == 2048 && c->limit_hit == NULL && c->enforced == NULL);
  CHECK(run->out.len == 4 && !memcmp(run->out.data, "a\0\xff\n", 4));
  CHECK_STR(run->out.text, "a\xef\xbf\xbd\xef\xbf\xbd\n"); /* the text as sent: U+FFFD twice */
  CHECK(run->out.text_len == 8);
  CHECK_STR(c->err.text, "warn\n");
  CHECK_STR(c->out.text, "");
  CHECK(run->out.lossy && run->out.exact && !run->out.truncated);
  CHECK(run->err.len == 1 && run->err.data[0] == 'e' && run->err.truncated);
  CHECK(run->has_exit_code && run->exit_code == 3);
  CHECK(run->max_rss_kb == 9000000000ll);
  CHECK_NEAR(run->cpu_time_s, 1.0, 1e-12);
  CHECK_STR(run->limit_hit, "output");
  CHECK_STR(json_object_get_string(json_object_object_get(run->enforced, "memory")), "cgroup v2");
  CHECK(sbc_result_program_step(&r) == run);
  CHECK(sbc_result_last_step(&r) == run);
  CHECK(sbc_result_step(&r, "compile") == c && sbc_result_step(&r, "run") == run);
  CHECK(sbc_result_step(&r, "collect") == NULL);
  CHECK(!sbc_result_compile_failed(&r)); /* the job failed, its compile step did not */
  CHECK(sbc_result_shell_status(&r) == 3);
  CHECK(!sbc_result_failed(&r));
  CHECK(sbc_result_why(&r) == NULL);
  sbc_result_free(&r);
  CHECK(r.steps == NULL && r.n_steps == 0 && r.status == NULL);
}

static void signalled_and_internal(void) {
  sbc_result r;
  char err[256] = "";
  CHECK(parse("{\"id\":7,\"type\":\"exec\",\"status\":\"signaled\",\"steps\":[{\"name\":\"x\",\"status\":\"signaled\","
              "\"exit_code\":null,\"signal\":\"SIGSEGV\",\"stdout\":\"lossy\\ufffd\",\"stdout_lossy\":true}]}",
              &r, err, sizeof err) == 0);
  CHECK_STR(r.id, "7");
  CHECK(r.n_steps == 1 && !r.steps[0].has_exit_code && r.steps[0].exit_code == -1);
  CHECK(sbc_result_program_step(&r) == &r.steps[0]); /* the only step, whatever its name */
  CHECK(sbc_result_shell_status(&r) == 128 + 11);
  CHECK(r.steps[0].out.lossy && !r.steps[0].out.exact); /* no b64 came: the text is all there is */
  CHECK(r.steps[0].err.len == 0 && r.steps[0].err.data && r.steps[0].err.data[0] == '\0');
  CHECK(r.steps[0].cpu_time_s == -1 && r.steps[0].max_rss_kb == -1);
  sbc_result_free(&r);

  CHECK(parse("{\"id\":\"i\",\"type\":\"exec\",\"status\":\"internal_error\",\"steps\":[{\"name\":\"compile\","
              "\"status\":\"internal_error\",\"exit_code\":null,\"signal\":null,\"stdout\":\"\",\"stderr\":\"\","
              "\"error\":\"move_mount /app: No such file or directory\"},{\"name\":\"check\",\"status\":\"ok\","
              "\"exit_code\":0,\"error\":\"later\"}]}",
              &r, err, sizeof err) == 0);
  CHECK(sbc_result_failed(&r));
  CHECK_STR(sbc_result_why(&r), "move_mount /app: No such file or directory");
  CHECK(sbc_result_program_step(&r) == NULL); /* no "run" among two steps */
  CHECK(sbc_result_compile_failed(&r)); /* its compile step ended internal_error */
  sbc_result_free(&r);

  CHECK(parse("{\"id\":\"t\",\"type\":\"exec\",\"status\":\"toolchain_missing\",\"steps\":[],"
              "\"error\":\"g++-9 is not installed here\"}",
              &r, err, sizeof err) == 0);
  CHECK(sbc_result_failed(&r) && r.n_steps == 0 && sbc_result_shell_status(&r) == -1);
  CHECK_STR(sbc_result_why(&r), "g++-9 is not installed here");
  sbc_result_free(&r);
}

static void errors_and_malformed(void) {
  sbc_result r;
  char err[256] = "";
  CHECK(parse("{\"id\":null,\"type\":\"error\",\"error\":{\"code\":\"bad_request\","
              "\"message\":\"unknown profile \\\"nope\\\"\"}}",
              &r, err, sizeof err) == 0);
  CHECK(r.is_error && r.status == NULL && sbc_result_failed(&r));
  CHECK_STR(r.id, "");
  CHECK_STR(r.error_code, "bad_request");
  CHECK_STR(sbc_result_why(&r), "unknown profile \"nope\"");
  sbc_result_free(&r);

  CHECK(parse("{\"id\":1,\"type\":\"status\"}", &r, err, sizeof err) < 0);
  CHECK_STR(err, "not an exec response (type status)");
  sbc_result_free(&r); /* harmless on the emptied result */
  CHECK(parse("{\"id\":1,\"type\":\"exec\",\"steps\":[]}", &r, err, sizeof err) < 0);
  CHECK_STR(err, "an exec response without a status");
  CHECK(parse("{\"id\":1,\"type\":\"exec\",\"status\":\"ok\",\"steps\":[{\"name\":\"run\",\"stdout_b64\":\"!!\"}]}",
              &r, err, sizeof err) < 0);
  CHECK_STR(err, "stdout_b64 is not base64");
  CHECK(r.steps == NULL && r.n_steps == 0);
  CHECK(parse("{\"id\":1,\"type\":\"exec\",\"status\":\"ok\",\"steps\":[3]}", &r, err, sizeof err) < 0);
  CHECK_STR(err, "a step is not an object");
  CHECK(sbc_result_parse(NULL, &r, err, sizeof err) < 0);
}

/* A compile error: the compile step's status, not the job's; a step named
 * twice is found by its first; an answer without steps has none. */
static void compile_error(void) {
  sbc_result r;
  char err[256] = "";
  CHECK(parse("{\"id\":\"c\",\"type\":\"exec\",\"status\":\"compile_error\",\"steps\":["
              "{\"name\":\"compile\",\"status\":\"runtime_error\",\"exit_code\":1,\"stderr\":\"e1\"},"
              "{\"name\":\"compile\",\"status\":\"ok\",\"exit_code\":0,\"stderr\":\"e2\"}]}",
              &r, err, sizeof err) == 0);
  CHECK(sbc_result_compile_failed(&r));
  CHECK(sbc_result_step(&r, "compile") == &r.steps[0]);
  CHECK_STR(sbc_result_step(&r, "compile")->err.text, "e1");
  CHECK(sbc_result_step(&r, "run") == NULL);
  sbc_result_free(&r);
  /* a compile step without a status did not end ok */
  CHECK(parse("{\"id\":\"d\",\"type\":\"exec\",\"status\":\"ok\",\"steps\":[{\"name\":\"compile\"}]}", &r, err,
              sizeof err) == 0);
  CHECK(sbc_result_compile_failed(&r));
  sbc_result_free(&r);
  CHECK(parse("{\"id\":\"e\",\"type\":\"exec\",\"status\":\"ok\",\"steps\":[{\"name\":\"run\",\"status\":\"ok\"}]}",
              &r, err, sizeof err) == 0);
  CHECK(!sbc_result_compile_failed(&r) && sbc_result_step(&r, "compile") == NULL);
  sbc_result_free(&r);
}

/* sbc_result_of: every answer accounted for; an unreadable one is an error
 * result that keeps its id and says why. */
static void unreadable_answers(void) {
  sbc_result r;
  json_object *o = json_tokener_parse("{\"id\":\"12\",\"type\":\"exec\",\"steps\":[]}");
  sbc_result_of(o, &r);
  json_object_put(o);
  CHECK(r.is_error && sbc_result_failed(&r));
  CHECK_STR(r.id, "12");
  CHECK_STR(r.error_code, "bad_response");
  CHECK_STR(sbc_result_why(&r), "the daemon's answer cannot be read: an exec response without a status");
  sbc_result_free(&r);
  o = json_tokener_parse("{\"id\":null,\"type\":\"exec\",\"status\":\"ok\",\"steps\":[{\"stderr_b64\":\"*\"}]}");
  sbc_result_of(o, &r);
  json_object_put(o);
  CHECK(r.is_error && r.n_steps == 0 && r.status == NULL);
  CHECK_STR(r.id, "");
  CHECK_STR(r.error_message, "the daemon's answer cannot be read: stderr_b64 is not base64");
  sbc_result_free(&r);
  /* a readable one is parsed as sbc_result_parse does */
  o = json_tokener_parse("{\"id\":3,\"type\":\"exec\",\"status\":\"timeout\",\"steps\":[{\"name\":\"run\",\"status\":\"timeout\"}]}");
  sbc_result_of(o, &r);
  json_object_put(o);
  CHECK(!r.is_error && r.error_code == NULL && r.n_steps == 1);
  CHECK_STR(r.status, "timeout");
  CHECK_STR(r.id, "3");
  sbc_result_free(&r);
  sbc_result_of(NULL, &r);
  CHECK(r.is_error);
  CHECK_STR(r.error_message, "the daemon's answer cannot be read: not an exec response (type missing)");
  sbc_result_free(&r);
}

int main(void) {
  compile_and_run();
  compile_error();
  unreadable_answers();
  signalled_and_internal();
  errors_and_malformed();
  return check_exit();
}
