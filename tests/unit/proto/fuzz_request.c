/* libFuzzer target: the request parser, the line splitter and base64.
 *
 *   cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DSURGEBOX_FUZZ=ON
 *   cmake --build build-fuzz --target proto_fuzz_request
 *   build-fuzz/bin/proto_fuzz_request -max_total_time=30 tests/unit/proto/fuzz_corpus
 *
 * Besides "no crash, no leak, no UB" (ASan+UBSan), it checks invariants and
 * aborts when one breaks: every line gets exactly one well-formed response,
 * a parsed request is internally consistent, base64 accepts only canonical
 * input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(x)                                                        \
  do {                                                                    \
    if (!(x)) {                                                           \
      fprintf(stderr, "invariant failed: %s (line %d)\n", #x, __LINE__);  \
      abort();                                                            \
    }                                                                     \
  } while (0)

#define FUZZ_MAX_LINE 4096

static void check_wire_line(json_object *resp) {
  REQUIRE(resp != NULL);
  size_t len = 0;
  char *line = sbp_encode_line(resp, &len);
  REQUIRE(line != NULL && len > 0 && line[len - 1] == '\n');
  REQUIRE(memchr(line, '\n', len - 1) == NULL);
  /* the response is itself a valid request-sized JSON object */
  json_object *back = json_tokener_parse(line);
  REQUIRE(json_object_is_type(back, json_type_object));
  json_object_put(back);
  free(line);
}

static void check_step(const sbp_step *s) {
  REQUIRE(s->name && *s->name);
  REQUIRE(s->argc >= 1 && s->argv && s->argv[s->argc] == NULL);
  /* the program name must be non-empty; later arguments may be "" (a real
   * argument, e.g. `cat ""`), but none may be missing */
  REQUIRE(*s->argv[0]);
  for (size_t i = 0; i < s->argc; i++) REQUIRE(s->argv[i] != NULL);
  if (s->env) {
    REQUIRE(s->env[s->n_env] == NULL);
    for (size_t i = 0; i < s->n_env; i++) REQUIRE(strchr(s->env[i], '=') > s->env[i]);
  }
  REQUIRE(s->has_stdin == (s->stdin_data != NULL));
  if (s->limits.has_time_s) REQUIRE(s->limits.time_s > 0 && s->limits.time_s <= SBP_LIMIT_MAX_TIME_S);
  if (s->limits.has_memory_mib) REQUIRE(s->limits.memory_mib >= 1 && s->limits.memory_mib <= SBP_LIMIT_MAX_MEMORY_MIB);
}

static void check_request(const sbp_request *r) {
  REQUIRE(r->id && r->id_key && *r->id_key);
  REQUIRE(json_object_is_type(r->id, json_type_string) || json_object_is_type(r->id, json_type_int));
  if (r->type == SBP_REQ_CANCEL) REQUIRE(r->cancel_target && r->cancel_target_key);
  if (r->type != SBP_REQ_EXEC) return;
  const sbp_exec *ex = &r->exec;
  REQUIRE((ex->n_steps > 0) != (ex->toolchain != NULL));
  for (size_t i = 0; i < ex->n_files; i++) {
    const sbp_file *f = &ex->files[i];
    REQUIRE(f->path && f->data && f->data[f->len] == 0 && f->mode <= 0777);
    /* stored paths are already normal */
    char *again = NULL;
    const char *why = NULL;
    REQUIRE(sbp_path_normalize(f->path, strlen(f->path), &again, &why) == 0);
    REQUIRE(strcmp(again, f->path) == 0);
    free(again);
    for (size_t j = 0; j < i; j++) REQUIRE(strcmp(ex->files[j].path, f->path) != 0);
  }
  for (size_t i = 0; i < ex->n_steps; i++) check_step(&ex->steps[i]);
  if (ex->toolchain) REQUIRE(ex->args && ex->args[ex->n_args] == NULL);
}

static void handle_line(const char *line, size_t len) {
  sbp_request *req = NULL;
  json_object *err = NULL;
  int rc = sbp_request_parse(line, len, NULL, &req, &err);
  if (rc == 0) {
    REQUIRE(req != NULL && err == NULL);
    check_request(req);
    json_object *resp = sbp_response_new(req->id, sbp_request_type_name(req->type));
    check_wire_line(resp);
    json_object_put(resp);
    sbp_request_free(req);
  } else {
    REQUIRE(rc == -1 && req == NULL && err != NULL);
    REQUIRE(sbp_error_code_known(sbp_response_error_code(err)));
    check_wire_line(err);
    json_object_put(err);
  }
}

static int on_line(void *ctx, sbp_line_event ev, const char *line, size_t len) {
  size_t *events = ctx;
  (*events)++;
  if (ev == SBP_LINE_TOO_LARGE) {
    REQUIRE(line == NULL && len > FUZZ_MAX_LINE);
    json_object *resp = sbp_too_large_response(FUZZ_MAX_LINE);
    check_wire_line(resp);
    json_object_put(resp);
    return 0;
  }
  REQUIRE(ev == SBP_LINE_OK && len <= FUZZ_MAX_LINE && memchr(line, '\n', len) == NULL);
  handle_line(line, len);
  return 0;
}

static void fuzz_base64(const uint8_t *data, size_t size) {
  unsigned char *out = NULL;
  size_t out_len = 0, bad = 0;
  sbu_b64_result r = sbu_base64_decode((const char *)data, size, &out, &out_len, &bad);
  if (r != SBU_B64_OK) {
    REQUIRE(r == SBU_B64_INVALID && out == NULL && bad <= size);
    return;
  }
  /* only canonical input decodes: re-encoding gives it back (modulo padding) */
  size_t enc_len = 0;
  char *enc = sbu_base64_encode(out, out_len, &enc_len);
  REQUIRE(enc != NULL);
  size_t a = size, b = enc_len;
  while (a && data[a - 1] == '=') a--;
  while (b && enc[b - 1] == '=') b--;
  REQUIRE(a == b && memcmp(data, enc, a) == 0);
  free(enc);
  free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* 1. the whole input as one request line */
  handle_line((const char *)data, size);

  /* 2. as a stream, in chunks sized by the first byte, with a small cap */
  sbp_linesplit ls;
  sbp_linesplit_init(&ls, FUZZ_MAX_LINE);
  size_t chunk = size ? (size_t)(data[0] % 17) + 1 : 1;
  size_t events = 0;
  for (size_t off = 0; off < size; off += chunk) {
    size_t n = size - off < chunk ? size - off : chunk;
    REQUIRE(sbp_linesplit_feed(&ls, data + off, n, on_line, &events) == 0);
    REQUIRE(sbp_linesplit_buffered(&ls) <= FUZZ_MAX_LINE);
  }
  REQUIRE(sbp_linesplit_finish(&ls, on_line, &events) == 0);
  sbp_linesplit_free(&ls);

  /* 3. base64 */
  fuzz_base64(data, size);
  return 0;
}
