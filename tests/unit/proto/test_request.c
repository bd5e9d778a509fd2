/* Request parsing: every request type, ids, files, steps, toolchain form,
 * every parser error code, and the malformed corpus (malformed.tsv). */
#include <stdlib.h>

#include "check.h"
#include "protocol.h"

#ifndef PROTO_TEST_DIR
#error "PROTO_TEST_DIR must point at tests/unit/proto"
#endif

static const char *err_message(json_object *resp) {
  json_object *e, *m;
  if (!json_object_object_get_ex(resp, "error", &e) || !json_object_object_get_ex(e, "message", &m))
    return NULL;
  return json_object_get_string(m);
}

static sbp_request *parse_ok_lim(const char *line, const sbp_limits *lim) {
  sbp_request *req = (sbp_request *)1;
  json_object *err = (json_object *)1;
  int rc = sbp_request_parse(line, strlen(line), lim, &req, &err);
  CHECK(rc == 0);
  if (rc != 0) {
    fprintf(stderr, "  line:  %s\n  error: %s\n", line, err ? json_object_to_json_string(err) : "(null)");
    json_object_put(err);
    return NULL;
  }
  CHECK(err == NULL);
  CHECK(req != NULL);
  return req;
}

static sbp_request *parse_ok(const char *line) { return parse_ok_lim(line, NULL); }

/* Parse a line that must fail with `code`; the error's id must serialise to
 * `id_json` and its message contain `needle` (when not NULL). */
static void expect_error_len(const char *line, size_t len, const sbp_limits *lim, const char *code,
                             const char *id_json, const char *needle) {
  sbp_request *req = (sbp_request *)1;
  json_object *err = NULL;
  int rc = sbp_request_parse(line, len, lim, &req, &err);
  CHECK(rc == -1);
  CHECK(req == NULL);
  CHECK(err != NULL);
  if (rc == 0) {
    fprintf(stderr, "  unexpectedly parsed: %.200s\n", line ? line : "(null)");
    sbp_request_free(req);
    return;
  }
  if (!err) return;
  CHECK_STR(sbp_response_error_code(err), code);
  json_object *id = NULL, *type = NULL;
  CHECK(json_object_object_get_ex(err, "id", &id));
  CHECK(json_object_object_get_ex(err, "type", &type));
  CHECK_STR(json_object_get_string(type), "error");
  CHECK_STR(json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN), id_json);
  const char *msg = err_message(err);
  CHECK(msg != NULL && *msg);
  if (needle && msg && !strstr(msg, needle)) {
    fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", msg, needle);
    CHECK(!"message names the problem");
  }
  if (strcmp(sbp_response_error_code(err) ? sbp_response_error_code(err) : "", code) != 0)
    fprintf(stderr, "  line: %.200s\n  got:  %s\n", line ? line : "(null)", json_object_to_json_string(err));
  json_object_put(err);
}

static void expect_error(const char *line, const char *code, const char *id_json, const char *needle) {
  expect_error_len(line, strlen(line), NULL, code, id_json, needle);
}

/* ---- simple request types ---------------------------------------------------- */
static void test_ping_status_toolchains(void) {
  sbp_request *r = parse_ok("{\"id\":\"p1\",\"type\":\"ping\"}");
  if (r) {
    CHECK(r->type == SBP_REQ_PING);
    CHECK_STR(r->id_key, "p1");
    CHECK(json_object_is_type(r->id, json_type_string));
    CHECK_STR(json_object_get_string(r->id), "p1");
    sbp_request_free(r);
  }
  r = parse_ok("  {\"type\":\"status\",\"id\":17}  \r");
  if (r) {
    CHECK(r->type == SBP_REQ_STATUS);
    CHECK_STR(r->id_key, "17");
    CHECK(json_object_is_type(r->id, json_type_int));
    CHECK(json_object_get_int64(r->id) == 17);
    sbp_request_free(r);
  }
  r = parse_ok("{\"id\":-5,\"type\":\"toolchains\"}");
  if (r) {
    CHECK(r->type == SBP_REQ_TOOLCHAINS);
    CHECK_STR(r->id_key, "-5");
    sbp_request_free(r);
  }
  CHECK_STR(sbp_request_type_name(SBP_REQ_EXEC), "exec");
  CHECK_STR(sbp_request_type_name(SBP_REQ_CANCEL), "cancel");
  CHECK_STR(sbp_request_type_name(SBP_REQ_TOOLCHAINS), "toolchains");
  CHECK_STR(sbp_request_type_name(SBP_REQ_STATUS), "status");
  CHECK_STR(sbp_request_type_name(SBP_REQ_PING), "ping");
  CHECK_STR(sbp_request_type_name((sbp_request_type)99), "?");
  sbp_request_type t;
  CHECK(sbp_request_type_parse("cancel", &t) == 0 && t == SBP_REQ_CANCEL);
  CHECK(sbp_request_type_parse("Cancel", &t) == -1);
}

static void test_ids(void) {
  /* the largest safe integers are fine, and echo back as integers */
  sbp_request *r = parse_ok("{\"id\":9007199254740991,\"type\":\"ping\"}");
  if (r) {
    CHECK_STR(r->id_key, "9007199254740991");
    json_object *resp = sbp_response_new(r->id, "ping");
    char *line = sbp_encode_line(resp, NULL);
    CHECK_STR(line, "{\"id\":9007199254740991,\"type\":\"ping\"}\n");
    free(line);
    json_object_put(resp);
    sbp_request_free(r);
  }
  r = parse_ok("{\"id\":-9007199254740991,\"type\":\"ping\"}");
  sbp_request_free(r);
  r = parse_ok("{\"id\":0,\"type\":\"ping\"}");
  if (r) CHECK_STR(r->id_key, "0");
  sbp_request_free(r);
  /* a string that looks like a number stays a string */
  r = parse_ok("{\"id\":\"42\",\"type\":\"ping\"}");
  if (r) {
    json_object *resp = sbp_response_new(r->id, "ping");
    char *line = sbp_encode_line(resp, NULL);
    CHECK_STR(line, "{\"id\":\"42\",\"type\":\"ping\"}\n");
    free(line);
    json_object_put(resp);
    sbp_request_free(r);
  }
  /* unicode and escapes in ids survive */
  r = parse_ok("{\"id\":\"job/\\u00e9\\\"x\\\"\",\"type\":\"ping\"}");
  if (r) CHECK_STR(r->id_key, "job/\xc3\xa9\"x\"");
  sbp_request_free(r);
  /* 256 bytes is the longest string id */
  char line[600];
  char id[300];
  memset(id, 'i', 256);
  id[256] = '\0';
  snprintf(line, sizeof line, "{\"id\":\"%s\",\"type\":\"ping\"}", id);
  r = parse_ok(line);
  sbp_request_free(r);
  id[256] = 'i';
  id[257] = '\0';
  snprintf(line, sizeof line, "{\"id\":\"%s\",\"type\":\"ping\"}", id);
  expect_error(line, SBP_E_BAD_REQUEST, "null", "at most 256 bytes");

  /* invalid ids are never echoed */
  expect_error("{\"type\":\"ping\"}", SBP_E_BAD_REQUEST, "null", "missing field \"id\"");
  expect_error("{\"id\":{\"a\":1},\"type\":\"ping\"}", SBP_E_BAD_REQUEST, "null", "string or an integer");
  expect_error("{\"id\":2.5,\"type\":\"ping\"}", SBP_E_BAD_REQUEST, "null", "string or an integer");
  expect_error("{\"id\":9007199254740992,\"type\":\"ping\"}", SBP_E_BAD_REQUEST, "null", "2^53");
  expect_error("{\"id\":\"\",\"type\":\"ping\"}", SBP_E_BAD_REQUEST, "null", "id must not be empty");
  /* once the id is known, errors carry it with its JSON type */
  expect_error("{\"id\":\"x1\",\"type\":\"nope\"}", SBP_E_UNKNOWN_TYPE, "\"x1\"", "\"nope\"");
  expect_error("{\"id\":12,\"type\":\"nope\"}", SBP_E_UNKNOWN_TYPE, "12", "expected exec, cancel");
  expect_error("{\"id\":12}", SBP_E_BAD_REQUEST, "12", "missing field \"type\"");
}

static void test_cancel(void) {
  sbp_request *r = parse_ok("{\"id\":\"c1\",\"type\":\"cancel\",\"target\":\"job-7\"}");
  if (r) {
    CHECK(r->type == SBP_REQ_CANCEL);
    CHECK_STR(r->cancel_target_key, "job-7");
    CHECK(json_object_is_type(r->cancel_target, json_type_string));
    sbp_request_free(r);
  }
  r = parse_ok("{\"id\":2,\"type\":\"cancel\",\"target\":1}");
  if (r) {
    CHECK_STR(r->cancel_target_key, "1");
    CHECK(json_object_is_type(r->cancel_target, json_type_int));
    sbp_request_free(r);
  }
  expect_error("{\"id\":2,\"type\":\"cancel\"}", SBP_E_BAD_REQUEST, "2", "target");
  expect_error("{\"id\":2,\"type\":\"cancel\",\"target\":true}", SBP_E_BAD_REQUEST, "2",
               "target must be a string or an integer");
}

/* ---- exec -------------------------------------------------------------------- */
static void test_exec_steps(void) {
  const char *line =
      "{\"id\":\"e1\",\"type\":\"exec\",\"profile\":\"judge\","
      "\"files\":[{\"path\":\"main.c\",\"content\":\"int main(void){return 0;}\\n\"},"
      "{\"path\":\"./bin//run.sh\",\"content_b64\":\"IyEvYmluL3NoCmVjaG8gaGkK\",\"mode\":493},"
      "{\"path\":\"data/zero.bin\",\"content\":\"a\\u0000b\"},"
      "{\"path\":\"data/empty\",\"content\":\"\"}],"
      "\"steps\":[{\"name\":\"compile\",\"argv\":[\"cc\",\"-O2\",\"-o\",\"main\",\"main.c\"],"
      "\"env\":{\"LANG\":\"C\",\"EMPTY\":\"\"},\"merge_output\":true,"
      "\"limits\":{\"time_s\":10,\"cpu_time_s\":2.5,\"memory_mib\":512,\"pids\":64,\"output_bytes\":65536}},"
      "{\"argv\":[\"./main\",\"arg with space\"],\"stdin\":\"1 2\\n\"},"
      "{\"name\":\"check-2.x\",\"argv\":[\"cat\"],\"stdin_b64\":\"AP8=\",\"env\":{},\"merge_output\":false}]}";
  sbp_request *r = parse_ok(line);
  if (!r) return;
  CHECK(r->type == SBP_REQ_EXEC);
  const sbp_exec *ex = &r->exec;
  CHECK_STR(ex->profile, "judge");
  CHECK(ex->toolchain == NULL && ex->options == NULL && ex->args == NULL);
  CHECK(ex->n_files == 4);
  if (ex->n_files == 4) {
    CHECK_STR(ex->files[0].path, "main.c");
    CHECK(ex->files[0].len == strlen("int main(void){return 0;}\n"));
    CHECK_STR((const char *)ex->files[0].data, "int main(void){return 0;}\n");
    CHECK(ex->files[0].mode == 0644 && !ex->files[0].has_mode);
    CHECK_STR(ex->files[1].path, "bin/run.sh");
    CHECK_STR((const char *)ex->files[1].data, "#!/bin/sh\necho hi\n");
    CHECK(ex->files[1].mode == 0755 && ex->files[1].has_mode);
    CHECK(ex->files[2].len == 3);
    CHECK(memcmp(ex->files[2].data, "a\0b", 3) == 0);
    CHECK(ex->files[2].data[3] == 0);
    CHECK(ex->files[3].len == 0 && ex->files[3].data && ex->files[3].data[0] == 0);
  }
  CHECK(ex->n_steps == 3);
  if (ex->n_steps == 3) {
    const sbp_step *s = &ex->steps[0];
    CHECK_STR(s->name, "compile");
    CHECK(s->argc == 5);
    CHECK_STR(s->argv[0], "cc");
    CHECK_STR(s->argv[4], "main.c");
    CHECK(s->argv[5] == NULL);
    CHECK(s->n_env == 2);
    CHECK_STR(s->env[0], "LANG=C");
    CHECK_STR(s->env[1], "EMPTY=");
    CHECK(s->env[2] == NULL);
    CHECK(s->merge_output);
    CHECK(!s->has_stdin && s->stdin_data == NULL);
    CHECK(s->limits.has_time_s && s->limits.time_s == 10.0);
    CHECK(s->limits.has_cpu_time_s && s->limits.cpu_time_s == 2.5);
    CHECK(s->limits.has_memory_mib && s->limits.memory_mib == 512);
    CHECK(s->limits.has_pids && s->limits.pids == 64);
    CHECK(s->limits.has_output_bytes && s->limits.output_bytes == 65536);

    s = &ex->steps[1];
    CHECK_STR(s->name, "step2"); /* default name: 1-based position */
    CHECK(s->argc == 2);
    CHECK_STR(s->argv[1], "arg with space");
    CHECK(s->env == NULL && s->n_env == 0); /* absent: daemon default environment */
    CHECK(!s->merge_output);
    CHECK(s->has_stdin && s->stdin_len == 4);
    CHECK_STR((const char *)s->stdin_data, "1 2\n");
    CHECK(!s->limits.has_time_s && !s->limits.has_cpu_time_s && !s->limits.has_memory_mib &&
          !s->limits.has_pids && !s->limits.has_output_bytes);

    s = &ex->steps[2];
    CHECK_STR(s->name, "check-2.x");
    CHECK(s->has_stdin && s->stdin_len == 2 && s->stdin_data[0] == 0 && s->stdin_data[1] == 0xff);
    CHECK(s->env != NULL && s->n_env == 0 && s->env[0] == NULL); /* {}: empty environment */
  }
  sbp_request_free(r);
}

static void test_exec_toolchain(void) {
  sbp_request *r = parse_ok(
      "{\"id\":3,\"type\":\"exec\",\"toolchain\":\"gcc-c11\",\"options\":{\"std\":\"c11\",\"opt\":\"O2\","
      "\"defines\":[\"X=1\"]},\"args\":[\"a\",\"\"],\"stdin_b64\":\"aGkK\",\"limits\":{\"time_s\":0.5},"
      "\"files\":[{\"path\":\"main.c\",\"content\":\"\"}]}");
  if (r) {
    const sbp_exec *ex = &r->exec;
    CHECK_STR(ex->toolchain, "gcc-c11");
    CHECK(ex->n_steps == 0 && ex->steps == NULL);
    CHECK(json_object_is_type(ex->options, json_type_object));
    json_object *o;
    CHECK(json_object_object_get_ex(ex->options, "opt", &o) && strcmp(json_object_get_string(o), "O2") == 0);
    CHECK(ex->n_args == 2);
    CHECK_STR(ex->args[0], "a");
    CHECK_STR(ex->args[1], "");
    CHECK(ex->args[2] == NULL);
    CHECK(ex->has_stdin && ex->stdin_len == 3);
    CHECK_STR((const char *)ex->stdin_data, "hi\n");
    CHECK(ex->limits.has_time_s && ex->limits.time_s == 0.5);
    CHECK(ex->n_files == 1);
    CHECK(ex->profile == NULL);
    sbp_request_free(r);
  }
  /* minimal: no options, args default to an empty vector */
  r = parse_ok("{\"id\":4,\"type\":\"exec\",\"toolchain\":\"python3\",\"stdin\":\"x\"}");
  if (r) {
    CHECK(r->exec.options == NULL);
    CHECK(r->exec.args != NULL && r->exec.n_args == 0 && r->exec.args[0] == NULL);
    CHECK(r->exec.has_stdin && r->exec.stdin_len == 1);
    sbp_request_free(r);
  }
}

/* ---- error codes, with the message naming the problem ---------------------------- */
static void test_error_codes(void) {
  expect_error("{\"id\":1,\"type\":\"ping\"", SBP_E_BAD_JSON, "null", "incomplete");
  expect_error("", SBP_E_BAD_JSON, "null", "empty");
  expect_error("   \t", SBP_E_BAD_JSON, "null", "incomplete");
  expect_error_len(NULL, 0, NULL, SBP_E_BAD_JSON, "null", "empty");
  expect_error("{\"id\":1,\"type\":\"ping\"} x", SBP_E_BAD_JSON, "null", NULL);
  expect_error_len("{\"id\":1,\0\"type\":\"ping\"}", 23, NULL, SBP_E_BAD_JSON, "null", "NUL byte at offset 8");
  expect_error("{\"id\":\"\xff\",\"type\":\"ping\"}", SBP_E_BAD_JSON, "null", "UTF-8"); /* the message: "not UTF-8" */
  expect_error("[1]", SBP_E_BAD_REQUEST, "null", "JSON object");
  expect_error("{\"id\":1,\"type\":\"ping\",\"verbose\":true}", SBP_E_UNKNOWN_FIELD, "1", "\"verbose\"");
  expect_error("{\"id\":1,\"type\":\"exec\",\"steps\":[{\"argv\":[\"x\"],\"limits\":{\"rss\":1}}]}",
               SBP_E_UNKNOWN_FIELD, "1", "steps[0].limits: unknown field \"rss\"");
  expect_error("{\"id\":1,\"type\":\"exec\",\"files\":[{\"path\":\"a\",\"content\":\"\",\"x\":0}],"
               "\"steps\":[{\"argv\":[\"x\"]}]}",
               SBP_E_UNKNOWN_FIELD, "1", "files[0]: unknown field \"x\"");
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"steps\":[{\"argv\":[\"x\",3]}]}", SBP_E_BAD_REQUEST, "\"u\"",
               "steps[0].argv[1] must be a string");
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"steps\":[{\"argv\":[\"x\"]},{\"argv\":[]}]}", SBP_E_BAD_REQUEST,
               "\"u\"", "steps[1].argv must not be empty");
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"steps\":[]}", SBP_E_BAD_REQUEST, "\"u\"", "steps must not be empty");
  /* an empty program name is refused; an empty argument is a real argument (SURGE TC 55: --edges "") */
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"steps\":[{\"argv\":[\"\"]}]}", SBP_E_BAD_REQUEST, "\"u\"",
               "steps[0].argv[0] (the program) must not be empty");
  {
    const char *ok = "{\"id\":\"e\",\"type\":\"exec\",\"steps\":[{\"argv\":[\"echo\",\"\",\"x\"]}]}";
    sbp_request *r = NULL;
    json_object *err = NULL;
    CHECK(sbp_request_parse(ok, strlen(ok), NULL, &r, &err) == 0);
    if (r) {
      CHECK(r->exec.steps[0].argc == 3);
      CHECK_STR(r->exec.steps[0].argv[1], "");
      sbp_request_free(r);
    }
    if (err) json_object_put(err);
  }
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"steps\":[{\"argv\":[\"x\"]}],\"toolchain\":\"c\"}",
               SBP_E_BAD_REQUEST, "\"u\"", "not both");
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"files\":[{\"path\":\"x/../../etc/passwd\",\"content\":\"\"}],"
               "\"steps\":[{\"argv\":[\"x\"]}]}",
               SBP_E_BAD_PATH, "\"u\"", "files[0].path \"x/../../etc/passwd\" has a \"..\" component");
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"files\":[{\"path\":\"b\",\"content\":\"\"},{\"path\":\"a\","
               "\"content\":\"\"},{\"path\":\"./b\",\"content\":\"\"}],\"steps\":[{\"argv\":[\"x\"]}]}",
               SBP_E_BAD_PATH, "\"u\"", "files[2].path \"b\" duplicates files[0].path");
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"files\":[{\"path\":\"a/b/c\",\"content\":\"\"},{\"path\":\"a/b\","
               "\"content\":\"\"}],\"steps\":[{\"argv\":[\"x\"]}]}",
               SBP_E_BAD_PATH, "\"u\"", "files[1].path \"a/b\" is a file, but files[0].path");
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"files\":[{\"path\":\"a\",\"content_b64\":\"YW=\"}],"
               "\"steps\":[{\"argv\":[\"x\"]}]}",
               SBP_E_BAD_BASE64, "\"u\"", "files[0].content_b64 is not valid base64 (at character 2)");
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"steps\":[{\"argv\":[\"x\"],\"stdin_b64\":\"a\"}]}", SBP_E_BAD_BASE64,
               "\"u\"", "steps[0].stdin_b64");
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"toolchain\":\"c\",\"stdin_b64\":\"a\"}", SBP_E_BAD_BASE64, "\"u\"",
               "stdin_b64 is not valid");
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"steps\":[{\"argv\":[\"x\"],\"limits\":{\"memory_mib\":-1}}]}",
               SBP_E_BAD_LIMITS, "\"u\"", "steps[0].limits.memory_mib must be greater than 0");
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"steps\":[{\"argv\":[\"x\"],\"limits\":{\"time_s\":\"1\"}}]}",
               SBP_E_BAD_LIMITS, "\"u\"", "steps[0].limits.time_s must be a number");
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"steps\":[{\"argv\":[\"x\"],\"limits\":{\"pids\":99999999}}]}",
               SBP_E_BAD_LIMITS, "\"u\"", "absurd");
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"toolchain\":\"c\",\"limits\":{\"cpu_time_s\":0}}", SBP_E_BAD_LIMITS,
               "\"u\"", "limits.cpu_time_s must be greater than 0");
  expect_error("{\"id\":\"u\",\"type\":\"exec\",\"files\":[{\"path\":\"a\",\"content\":\"\",\"mode\":4095}],"
               "\"steps\":[{\"argv\":[\"x\"]}]}",
               SBP_E_BAD_REQUEST, "\"u\"", "files[0].mode");
}

static void test_configurable_caps(void) {
  sbp_limits lim;
  sbp_limits_default(&lim);
  CHECK(lim.max_line_bytes == 64u << 20);
  CHECK(lim.max_files == 1000);
  CHECK(lim.max_steps == 32);

  /* too_many_files: default cap 1000 */
  size_t cap = 1001 * 40 + 200;
  char *big = malloc(cap);
  size_t o = (size_t)snprintf(big, cap, "{\"id\":\"f\",\"type\":\"exec\",\"steps\":[{\"argv\":[\"true\"]}],\"files\":[");
  for (int i = 0; i < 1001; i++) o += (size_t)snprintf(big + o, cap - o, "%s{\"path\":\"f%d\",\"content\":\"\"}", i ? "," : "", i);
  snprintf(big + o, cap - o, "]}");
  expect_error(big, SBP_E_TOO_MANY_FILES, "\"f\"", "1001 files, at most 1000");
  /* exactly 1000 is fine */
  char *last = strstr(big, ",{\"path\":\"f1000\"");
  CHECK(last != NULL);
  if (last) {
    strcpy(last, "]}");
    sbp_request *r = parse_ok(big);
    if (r) CHECK(r->exec.n_files == 1000);
    sbp_request_free(r);
  }
  free(big);

  lim.max_files = 2;
  const char *three = "{\"id\":\"f\",\"type\":\"exec\",\"steps\":[{\"argv\":[\"true\"]}],\"files\":[{\"path\":\"a\",\"content\":\"\"},"
                      "{\"path\":\"b\",\"content\":\"\"},{\"path\":\"c\",\"content\":\"\"}]}";
  expect_error_len(three, strlen(three), &lim, SBP_E_TOO_MANY_FILES, "\"f\"", "3 files, at most 2");
  lim.max_files = 3;
  sbp_request_free(parse_ok_lim(three, &lim));

  lim.max_steps = 1;
  const char *two = "{\"id\":\"s\",\"type\":\"exec\",\"steps\":[{\"argv\":[\"a\"]},{\"argv\":[\"b\"]}]}";
  expect_error_len(two, strlen(two), &lim, SBP_E_BAD_REQUEST, "\"s\"", "2 steps, at most 1");

  /* too_large: the parser enforces the line cap too (id unknown: null) */
  const char *ping = "{\"id\":\"p\",\"type\":\"ping\"}";
  lim.max_line_bytes = strlen(ping) - 1;
  expect_error_len(ping, strlen(ping), &lim, SBP_E_TOO_LARGE, "null", "at most 23");
  lim.max_line_bytes = strlen(ping);
  sbp_request_free(parse_ok_lim(ping, &lim));
}

static void test_paths(void) {
  struct {
    const char *in;
    const char *out; /* NULL: rejected */
  } cases[] = {
      {"a", "a"},
      {"dir/sub/file.c", "dir/sub/file.c"},
      {"./a", "a"},
      {"a//b", "a/b"},
      {"a/./b/.", "a/b"},
      {"...", "..."},
      {"..a/b..", "..a/b.."},
      {".hidden", ".hidden"},
      {"", NULL},
      {"/abs", NULL},
      {"//abs", NULL},
      {"..", NULL},
      {"../a", NULL},
      {"a/..", NULL},
      {"a/../b", NULL},
      {"a/", NULL},
      {".", NULL},
      {"./", NULL},
      {"./.", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *out = (char *)1;
    const char *why = NULL;
    int rc = sbp_path_normalize(cases[i].in, strlen(cases[i].in), &out, &why);
    if (cases[i].out) {
      CHECK(rc == 0);
      CHECK_STR(out, cases[i].out);
      CHECK(why == NULL);
      free(out);
    } else {
      if (rc != -1) fprintf(stderr, "  path \"%s\" accepted\n", cases[i].in);
      CHECK(rc == -1);
      CHECK(out == NULL);
      CHECK(why != NULL);
    }
  }
  char *out;
  const char *why;
  CHECK(sbp_path_normalize("a\0b", 3, &out, &why) == -1);
  CHECK(strstr(why, "NUL") != NULL);
  CHECK(sbp_path_normalize("/x", 2, &out, &why) == -1 && strstr(why, "absolute"));
  CHECK(sbp_path_normalize("a/../b", 6, &out, &why) == -1 && strstr(why, ".."));

  /* length: 4096 is the limit, components 255 */
  char p[5000];
  for (size_t i = 0; i < sizeof p; i++) p[i] = (i % 100 == 99) ? '/' : 'x';
  p[4095] = 'x';
  CHECK(sbp_path_normalize(p, 4096, &out, &why) == 0);
  if (out) CHECK(strlen(out) == 4096);
  free(out);
  CHECK(sbp_path_normalize(p, 4097, &out, &why) == -1 && strstr(why, "4096"));
  memset(p, 'y', 300);
  CHECK(sbp_path_normalize(p, 255, &out, &why) == 0);
  free(out);
  CHECK(sbp_path_normalize(p, 256, &out, &why) == -1 && strstr(why, "255"));

  /* through the parser: a long path is reported clipped, not echoed whole */
  char line[5200];
  memset(p, 'z', 4097);
  p[4097] = '\0';
  snprintf(line, sizeof line,
           "{\"id\":1,\"type\":\"exec\",\"files\":[{\"path\":\"%s\",\"content\":\"\"}],\"steps\":[{\"argv\":[\"x\"]}]}", p);
  sbp_request *req;
  json_object *err;
  CHECK(sbp_request_parse(line, strlen(line), NULL, &req, &err) == -1);
  CHECK_STR(sbp_response_error_code(err), SBP_E_BAD_PATH);
  const char *msg = err_message(err);
  CHECK(msg && strlen(msg) < 200 && strstr(msg, "...") && strstr(msg, "longer than 4096"));
  json_object_put(err);
}

/* Build a request with json-c, serialise, parse: what went in comes out. */
static void test_round_trip(void) {
  unsigned char bin[300];
  for (size_t i = 0; i < sizeof bin; i++) bin[i] = (unsigned char)(255 - i);
  char *b64 = sbu_base64_encode(bin, sizeof bin, NULL);

  json_object *req = json_object_new_object();
  json_object_object_add(req, "id", json_object_new_string("rt-\xe2\x9c\x93"));
  json_object_object_add(req, "type", json_object_new_string("exec"));
  json_object *files = json_object_new_array();
  json_object *f = json_object_new_object();
  json_object_object_add(f, "path", json_object_new_string("blob.bin"));
  json_object_object_add(f, "content_b64", json_object_new_string(b64));
  json_object_array_add(files, f);
  f = json_object_new_object();
  json_object_object_add(f, "path", json_object_new_string("text/\xe6\x97\xa5\xe6\x9c\xac.txt"));
  json_object_object_add(f, "content", json_object_new_string("line1\nline2\t\"quoted\" \\ /slash\n"));
  json_object_object_add(f, "mode", json_object_new_int(0600));
  json_object_array_add(files, f);
  json_object_object_add(req, "files", files);
  json_object *steps = json_object_new_array();
  json_object *s = json_object_new_object();
  json_object *argv = json_object_new_array();
  json_object_array_add(argv, json_object_new_string("sh"));
  json_object_array_add(argv, json_object_new_string("-c"));
  json_object_array_add(argv, json_object_new_string("cat blob.bin | wc -c; echo \"$X\""));
  json_object_object_add(s, "argv", argv);
  json_object *env = json_object_new_object();
  json_object_object_add(env, "X", json_object_new_string("a=b=c"));
  json_object_object_add(s, "env", env);
  json_object_object_add(s, "stdin_b64", json_object_new_string(b64));
  json_object_array_add(steps, s);
  json_object_object_add(req, "steps", steps);

  size_t len;
  char *line = sbp_encode_line(req, &len);
  CHECK(line != NULL && len > 0 && line[len - 1] == '\n');
  CHECK(memchr(line, '\n', len - 1) == NULL); /* one line on the wire */
  sbp_request *r = parse_ok_lim(line, NULL);
  if (r) {
    CHECK_STR(r->id_key, "rt-\xe2\x9c\x93");
    CHECK(r->exec.n_files == 2);
    if (r->exec.n_files == 2) {
      CHECK(r->exec.files[0].len == sizeof bin && memcmp(r->exec.files[0].data, bin, sizeof bin) == 0);
      CHECK_STR(r->exec.files[1].path, "text/\xe6\x97\xa5\xe6\x9c\xac.txt");
      CHECK_STR((const char *)r->exec.files[1].data, "line1\nline2\t\"quoted\" \\ /slash\n");
      CHECK(r->exec.files[1].mode == 0600);
    }
    CHECK(r->exec.n_steps == 1);
    if (r->exec.n_steps == 1) {
      CHECK_STR(r->exec.steps[0].argv[2], "cat blob.bin | wc -c; echo \"$X\"");
      CHECK_STR(r->exec.steps[0].env[0], "X=a=b=c");
      CHECK(r->exec.steps[0].stdin_len == sizeof bin);
      CHECK(memcmp(r->exec.steps[0].stdin_data, bin, sizeof bin) == 0);
    }
    /* the response echoes the id byte for byte */
    json_object *resp = sbp_response_new(r->id, "exec");
    char *rl = sbp_encode_line(resp, NULL);
    CHECK_STR(rl, "{\"id\":\"rt-\xe2\x9c\x93\",\"type\":\"exec\"}\n");
    free(rl);
    json_object_put(resp);
    sbp_request_free(r);
  }
  free(line);
  json_object_put(req);
  free(b64);
}

static void test_malformed_corpus(void) {
  const char *path = PROTO_TEST_DIR "/malformed.tsv";
  FILE *fp = fopen(path, "r");
  CHECK(fp != NULL);
  if (!fp) return;
  char *buf = NULL;
  size_t cap = 0;
  ssize_t n;
  int lineno = 0, cases = 0;
  bool seen[32] = {false};
  while ((n = getline(&buf, &cap, fp)) >= 0) {
    lineno++;
    if (n > 0 && buf[n - 1] == '\n') buf[--n] = '\0';
    if (n == 0 || buf[0] == '#') continue;
    char *tab = strchr(buf, '\t');
    CHECK(tab != NULL);
    if (!tab) continue;
    *tab = '\0';
    const char *code = buf, *req_line = tab + 1;
    CHECK(sbp_error_code_known(code));
    for (int i = 0; sbp_error_codes[i]; i++)
      if (strcmp(sbp_error_codes[i], code) == 0) seen[i] = true;
    sbp_request *req = NULL;
    json_object *err = NULL;
    int rc = sbp_request_parse(req_line, strlen(req_line), NULL, &req, &err);
    const char *got = sbp_response_error_code(err);
    if (rc != -1 || !got || strcmp(got, code) != 0) {
      fprintf(stderr, "%s:%d: expected %s, got %s\n", path, lineno, code,
              err ? json_object_to_json_string(err) : "success");
      CHECK(!"corpus line fails with its code");
    }
    /* an error response is itself one valid line */
    char *line = sbp_encode_line(err, NULL);
    CHECK(line != NULL);
    json_object *back = line ? json_tokener_parse(line) : NULL;
    CHECK(back != NULL);
    json_object_put(back);
    free(line);
    sbp_request_free(req);
    json_object_put(err);
    cases++;
  }
  free(buf);
  fclose(fp);
  CHECK(cases > 100);
  /* the corpus covers every parser-level code */
  const char *parser_codes[] = {SBP_E_BAD_JSON,  SBP_E_BAD_REQUEST, SBP_E_UNKNOWN_TYPE, SBP_E_UNKNOWN_FIELD,
                                SBP_E_BAD_PATH,  SBP_E_BAD_BASE64,  SBP_E_BAD_LIMITS};
  for (size_t k = 0; k < sizeof parser_codes / sizeof parser_codes[0]; k++)
    for (int i = 0; sbp_error_codes[i]; i++)
      if (strcmp(sbp_error_codes[i], parser_codes[k]) == 0 && !seen[i]) {
        fprintf(stderr, "  corpus lacks %s\n", parser_codes[k]);
        CHECK(!"corpus covers the code");
      }
}

/* Parse a valid request truncated at every length: never crashes, never
 * succeeds on a strict prefix, always yields an error response. */
static void test_truncations(void) {
  const char *line = "{\"id\":\"t\",\"type\":\"exec\",\"files\":[{\"path\":\"a.sh\",\"content_b64\":\"ZWNobyBoaQo=\","
                     "\"mode\":493}],\"steps\":[{\"name\":\"run\",\"argv\":[\"sh\",\"a.sh\"],\"env\":{\"A\":\"1\"},"
                     "\"limits\":{\"time_s\":1}}]}";
  size_t n = strlen(line);
  for (size_t k = 0; k < n; k++) {
    sbp_request *req = NULL;
    json_object *err = NULL;
    int rc = sbp_request_parse(line, k, NULL, &req, &err);
    CHECK(rc == -1);
    CHECK(req == NULL);
    CHECK(err != NULL && sbp_response_error_code(err) != NULL);
    json_object_put(err);
  }
  sbp_request_free(parse_ok(line));
}

/* outputs: per step (steps form), on the request (toolchain form). */
static void test_outputs(void) {
  sbp_request *r = parse_ok("{\"id\":\"o\",\"type\":\"exec\",\"outputs_max_bytes\":1000,\"steps\":[{\"argv\":[\"true\"]},"
                            "{\"argv\":[\"true\"],\"outputs\":[\"result.txt\",\"./out//b.bin\"]}]}");
  if (r) {
    CHECK(r->exec.steps[0].outputs == NULL && r->exec.steps[0].n_outputs == 0);
    CHECK(r->exec.steps[1].n_outputs == 2);
    CHECK_STR(r->exec.steps[1].outputs[0], "result.txt");
    CHECK_STR(r->exec.steps[1].outputs[1], "out/b.bin");
    CHECK(r->exec.steps[1].outputs[2] == NULL);
    CHECK(r->exec.outputs_max_bytes == 1000);
    sbp_request_free(r);
  }
  r = parse_ok("{\"id\":\"t\",\"type\":\"exec\",\"toolchain\":\"gcc\",\"outputs\":[\"a.txt\"]}");
  if (r) {
    CHECK(r->exec.n_outputs == 1);
    CHECK_STR(r->exec.outputs[0], "a.txt");
    CHECK(r->exec.outputs_max_bytes == 0);
    sbp_request_free(r);
  }
  /* 32 paths are fine, 33 are not */
  char line[2048];
  int n = snprintf(line, sizeof line, "{\"id\":1,\"type\":\"exec\",\"steps\":[{\"argv\":[\"x\"],\"outputs\":[");
  for (int i = 0; i < 32; i++) n += snprintf(line + n, sizeof line - (size_t)n, "%s\"f%d\"", i ? "," : "", i);
  snprintf(line + n, sizeof line - (size_t)n, "]}]}");
  sbp_request_free(parse_ok(line));
  snprintf(line + n, sizeof line - (size_t)n, ",\"f32\"]}]}");
  expect_error(line, SBP_E_BAD_REQUEST, "1", "at most 32");
  expect_error("{\"id\":1,\"type\":\"exec\",\"steps\":[{\"argv\":[\"x\"],\"outputs\":[\"a\",\"./a\"]}]}", SBP_E_BAD_PATH, "1",
               "duplicates steps[0].outputs[0]");
  expect_error("{\"id\":1,\"type\":\"exec\",\"steps\":[{\"argv\":[\"x\"],\"outputs\":[\"../etc/passwd\"]}]}", SBP_E_BAD_PATH,
               "1", "steps[0].outputs[0]");
  expect_error("{\"id\":1,\"type\":\"exec\",\"steps\":[{\"argv\":[\"x\"]}],\"outputs\":[\"a\"]}", SBP_E_BAD_REQUEST, "1",
               "only valid with");
  expect_error("{\"id\":1,\"type\":\"exec\",\"steps\":[{\"argv\":[\"x\"]}],\"outputs_max_bytes\":0}", SBP_E_BAD_LIMITS,
               "1", "outputs_max_bytes");
}

/* "output_encoding": "text" | "base64", on the request and on a step. */
static void test_output_encoding(void) {
  sbp_request *r = parse_ok("{\"id\":1,\"type\":\"exec\",\"output_encoding\":\"base64\","
                            "\"steps\":[{\"argv\":[\"a\"]},{\"argv\":[\"b\"],\"output_encoding\":\"text\"}]}");
  if (r) {
    CHECK(r->exec.output_base64);
    CHECK(!r->exec.steps[0].output_base64 && !r->exec.steps[1].output_base64);
    sbp_request_free(r);
  }
  r = parse_ok("{\"id\":2,\"type\":\"exec\",\"steps\":[{\"argv\":[\"a\"],\"output_encoding\":\"base64\"}]}");
  if (r) {
    CHECK(!r->exec.output_base64 && r->exec.steps[0].output_base64);
    sbp_request_free(r);
  }
  r = parse_ok("{\"id\":3,\"type\":\"exec\",\"toolchain\":\"c\",\"output_encoding\":\"text\"}");
  if (r) {
    CHECK(!r->exec.output_base64);
    sbp_request_free(r);
  }
  expect_error("{\"id\":4,\"type\":\"exec\",\"output_encoding\":\"hex\",\"steps\":[{\"argv\":[\"a\"]}]}",
               "bad_request", "4", "output_encoding must be");
  expect_error("{\"id\":5,\"type\":\"exec\",\"steps\":[{\"argv\":[\"a\"],\"output_encoding\":true}]}",
               "bad_request", "5", "steps[0].output_encoding must be");
  expect_error("{\"id\":6,\"type\":\"status\",\"output_encoding\":\"base64\"}", "unknown_field", "6", "output_encoding");
}

int main(void) {
  test_outputs();
  test_output_encoding();
  test_ping_status_toolchains();
  test_ids();
  test_cancel();
  test_exec_steps();
  test_exec_toolchain();
  test_error_codes();
  test_configurable_caps();
  test_paths();
  test_round_trip();
  test_malformed_corpus();
  test_truncations();
  return check_exit();
}
