/* proto/PROTOCOL.md and the parser agree: every `json request` example is a
 * single line the parser handles as the matching `json response` says
 * (parser-level errors must match byte for byte), exec responses have the
 * overall status the rules give, and every error code is documented with an
 * example. */
#include <stdlib.h>

#include "check.h"
#include "protocol.h"

#ifndef PROTOCOL_MD
#error "PROTOCOL_MD must name proto/PROTOCOL.md"
#endif

#define MAX_BLOCKS 128

typedef enum { B_REQUEST, B_TEXT_REQUEST, B_RESPONSE } block_kind;

typedef struct {
  block_kind kind;
  char *text;
  int line; /* of the opening fence */
} block;

static block blocks[MAX_BLOCKS];
static int n_blocks;

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n < 2) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  buf[n] = '\0';
  *len = n;
  return buf;
}

/* Collect fenced blocks whose info string is "json request[ ...]",
 * "text request" or "json response". */
static void collect_blocks(char *doc) {
  char *p = doc;
  int lineno = 1;
  while (*p) {
    char *eol = strchr(p, '\n');
    if (!eol) break;
    *eol = '\0';
    if (strncmp(p, "```", 3) == 0) {
      const char *info = p + 3;
      int open_line = lineno;
      block_kind kind;
      bool wanted = true;
      if (strcmp(info, "json request") == 0 || strncmp(info, "json request ", 13) == 0) kind = B_REQUEST;
      else if (strcmp(info, "text request") == 0) kind = B_TEXT_REQUEST;
      else if (strcmp(info, "json response") == 0) kind = B_RESPONSE;
      else wanted = false;
      /* find the closing fence */
      char *body = eol + 1, *q = body;
      lineno++;
      while (*q && strncmp(q, "```", 3) != 0) {
        char *e = strchr(q, '\n');
        if (!e) break;
        q = e + 1;
        lineno++;
      }
      CHECK(strncmp(q, "```", 3) == 0);
      if (wanted && n_blocks < MAX_BLOCKS) {
        size_t blen = (size_t)(q - body);
        char *text = malloc(blen + 1);
        memcpy(text, body, blen);
        text[blen] = '\0';
        blocks[n_blocks++] = (block){kind, text, open_line};
      }
      eol = strchr(q, '\n');
      if (!eol) break;
    }
    p = eol + 1;
    lineno++;
  }
}

static bool is_parser_code(const char *code) {
  static const char *const parser_codes[] = {SBP_E_BAD_JSON,     SBP_E_BAD_REQUEST, SBP_E_UNKNOWN_TYPE,
                                             SBP_E_UNKNOWN_FIELD, SBP_E_BAD_PATH,    SBP_E_TOO_MANY_FILES,
                                             SBP_E_TOO_LARGE,    SBP_E_BAD_BASE64,  SBP_E_BAD_LIMITS};
  for (size_t i = 0; i < sizeof parser_codes / sizeof parser_codes[0]; i++)
    if (strcmp(code, parser_codes[i]) == 0) return true;
  return false;
}

static const char *plain(json_object *o) { return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN); }

static const char *get_str(json_object *o, const char *key) {
  json_object *v;
  if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string)) return NULL;
  return json_object_get_string(v);
}

/* The request block of a given id (compared as JSON text, so "42" != 42). */
static int find_request(const char *id_json) {
  for (int i = 0; i < n_blocks; i++) {
    if (blocks[i].kind != B_REQUEST) continue;
    json_object *r = json_tokener_parse(blocks[i].text), *id;
    bool match = r && json_object_object_get_ex(r, "id", &id) && strcmp(plain(id), id_json) == 0;
    json_object_put(r);
    if (match) return i;
  }
  return -1;
}

static void check_same(json_object *want, json_object *got, int line) {
  const char *w = plain(want), *g = plain(got);
  if (strcmp(w, g) != 0) {
    fprintf(stderr, "PROTOCOL.md:%d: response differs from the parser's\n  doc:    %s\n  parser: %s\n", line, w, g);
    CHECK(!"documented error equals the parser's");
  }
}

static void check_exec_response(json_object *resp, const sbp_request *req, int line) {
  const char *status = get_str(resp, "status");
  json_object *steps;
  CHECK(status != NULL);
  CHECK(json_object_object_get_ex(resp, "steps", &steps) && json_object_is_type(steps, json_type_array));
  if (!status || !json_object_is_type(steps, json_type_array)) return;
  size_t n = json_object_array_length(steps);
  for (size_t i = 0; i < n; i++) {
    json_object *doc = json_object_array_get_idx(steps, i);
    CHECK(get_str(doc, "status") != NULL);
    CHECK(get_str(doc, "name") != NULL);
    /* steps form: the documents follow the request's steps, by name */
    if (req->exec.n_steps) {
      CHECK(i < req->exec.n_steps);
      if (i < req->exec.n_steps && get_str(doc, "name") && strcmp(get_str(doc, "name"), req->exec.steps[i].name)) {
        fprintf(stderr, "PROTOCOL.md:%d: step %zu is \"%s\", the request's is \"%s\"\n", line, i,
                get_str(doc, "name"), req->exec.steps[i].name);
        CHECK(!"step names follow the request");
      }
    }
  }
  /* cancelled, and the statuses decided before any step ran, do not follow
   * from the steps */
  bool from_steps = strcmp(status, SBP_STATUS_CANCELLED) != 0 && strcmp(status, SBP_STATUS_TOOLCHAIN_MISSING) != 0 &&
                    strcmp(status, SBP_STATUS_UNSUPPORTED) != 0;
  if (!from_steps) CHECK(strcmp(status, SBP_STATUS_CANCELLED) == 0 || n == 0);
  if (from_steps) {
    if (strcmp(sbp_exec_overall_status(steps), status) != 0) {
      fprintf(stderr, "PROTOCOL.md:%d: status \"%s\", the rules give \"%s\"\n", line, status,
              sbp_exec_overall_status(steps));
      CHECK(!"overall status follows the rules");
    }
    /* steps stop at the first failure */
    for (size_t i = 0; i + 1 < n; i++)
      CHECK(strcmp(get_str(json_object_array_get_idx(steps, i), "status"), "ok") == 0);
  }
}

static void check_response(int bi, bool *code_seen, bool *request_answered) {
  const block *b = &blocks[bi];
  json_object *resp = json_tokener_parse(b->text);
  CHECK(resp != NULL && json_object_is_type(resp, json_type_object));
  if (!resp) {
    fprintf(stderr, "PROTOCOL.md:%d: response is not JSON\n", b->line);
    return;
  }
  json_object *id;
  const char *type = get_str(resp, "type");
  CHECK(json_object_object_get_ex(resp, "id", &id));
  CHECK(type != NULL);
  if (!type) type = "";
  const char *code = sbp_response_error_code(resp);
  if (strcmp(type, "error") == 0) {
    CHECK(code != NULL && sbp_error_code_known(code));
    CHECK(get_str(json_object_object_get(resp, "error"), "message") != NULL);
    for (int i = 0; code && sbp_error_codes[i]; i++)
      if (strcmp(sbp_error_codes[i], code) == 0) code_seen[i] = true;
  }

  if (id == NULL && code && strcmp(code, SBP_E_UNAUTHORIZED) == 0) {
    /* a refused peer is answered on connect, before its request is read (so the id is null): the
       daemon's words, checked by daemon.protocol_examples; here only that it follows its request */
    CHECK(bi > 0 && blocks[bi - 1].kind == B_REQUEST);
    if (bi > 0 && blocks[bi - 1].kind == B_REQUEST) request_answered[bi - 1] = true;
    json_object_put(resp);
    return;
  }
  if (id == NULL) { /* an unreadable line: the text request just before, or no request shown */
    CHECK(code && (strcmp(code, SBP_E_BAD_JSON) == 0 || strcmp(code, SBP_E_TOO_LARGE) == 0));
    json_object *got = NULL;
    if (code && strcmp(code, SBP_E_TOO_LARGE) == 0) {
      got = sbp_too_large_response(SBP_DEFAULT_MAX_LINE);
    } else if (bi > 0 && blocks[bi - 1].kind == B_TEXT_REQUEST) {
      const char *raw = blocks[bi - 1].text;
      size_t len = strlen(raw);
      if (len && raw[len - 1] == '\n') len--;
      sbp_request *req = NULL;
      CHECK(sbp_request_parse(raw, len, NULL, &req, &got) == -1);
      sbp_request_free(req);
      request_answered[bi - 1] = true;
    } else {
      CHECK(!"a null-id bad_json response follows its text request");
    }
    if (got) check_same(resp, got, b->line);
    json_object_put(got);
    json_object_put(resp);
    return;
  }

  int ri = find_request(plain(id));
  if (ri < 0) { /* requests too long to show: only error responses */
    if (!code) fprintf(stderr, "PROTOCOL.md:%d: no request with id %s\n", b->line, plain(id));
    CHECK(code != NULL);
    json_object_put(resp);
    return;
  }
  request_answered[ri] = true;
  const char *line = blocks[ri].text;
  size_t len = strlen(line);
  if (len && line[len - 1] == '\n') len--;
  sbp_request *req = NULL;
  json_object *err = NULL;
  int rc = sbp_request_parse(line, len, NULL, &req, &err);
  if (rc != 0) {
    /* the parser answers: the documented response must be exactly its answer */
    check_same(resp, err, b->line);
  } else if (code) {
    if (is_parser_code(code))
      fprintf(stderr, "PROTOCOL.md:%d: the parser accepts this request, yet the doc says %s\n", b->line, code);
    CHECK(!is_parser_code(code)); /* only the daemon's own errors remain */
  } else {
    CHECK_STR(type, sbp_request_type_name(req->type));
    if (req->type == SBP_REQ_EXEC) check_exec_response(resp, req, b->line);
    if (req->type == SBP_REQ_CANCEL) CHECK_STR(get_str(resp, "target"), req->cancel_target_key);
  }
  sbp_request_free(req);
  json_object_put(err);
  json_object_put(resp);
}

int main(void) {
  size_t len = 0;
  char *doc = read_file(PROTOCOL_MD, &len);
  CHECK(doc != NULL);
  if (!doc) return check_exit();
  char *copy = strdup(doc);
  collect_blocks(copy);
  CHECK(n_blocks > 20);

  bool types_seen[8] = {false};
  bool code_seen[32] = {false};
  bool answered[MAX_BLOCKS] = {false};
  for (int i = 0; i < n_blocks; i++) {
    if (blocks[i].kind != B_REQUEST) continue;
    /* one line on the wire */
    const char *t = blocks[i].text;
    const char *nl = strchr(t, '\n');
    if (nl && nl[1] != '\0') fprintf(stderr, "PROTOCOL.md:%d: request spans lines\n", blocks[i].line);
    CHECK(nl == NULL || nl[1] == '\0');
    json_object *r = json_tokener_parse(t);
    CHECK(r != NULL);
    const char *type = r ? get_str(r, "type") : NULL;
    sbp_request_type ty;
    if (type && sbp_request_type_parse(type, &ty) == 0) types_seen[ty] = true;
    /* ids are unique in the document */
    json_object *id;
    if (r && json_object_object_get_ex(r, "id", &id)) CHECK(find_request(plain(id)) == i);
    json_object_put(r);
  }
  for (int i = 0; i < n_blocks; i++)
    if (blocks[i].kind == B_RESPONSE) check_response(i, code_seen, answered);
  for (int i = 0; i < n_blocks; i++)
    if (blocks[i].kind != B_RESPONSE && !answered[i]) {
      fprintf(stderr, "PROTOCOL.md:%d: request without a response\n", blocks[i].line);
      CHECK(!"every request has a response");
    }

  CHECK(types_seen[SBP_REQ_EXEC] && types_seen[SBP_REQ_CANCEL] && types_seen[SBP_REQ_TOOLCHAINS] &&
        types_seen[SBP_REQ_STATUS] && types_seen[SBP_REQ_PING]);
  for (int i = 0; sbp_error_codes[i]; i++) {
    char row[64];
    snprintf(row, sizeof row, "| `%s` |", sbp_error_codes[i]);
    if (!strstr(doc, row)) fprintf(stderr, "PROTOCOL.md: no table row for %s\n", sbp_error_codes[i]);
    CHECK(strstr(doc, row) != NULL);
    if (!code_seen[i]) fprintf(stderr, "PROTOCOL.md: no example response for %s\n", sbp_error_codes[i]);
    CHECK(code_seen[i]);
  }
  /* the statuses and exit codes the header defines are documented */
  const char *must[] = {"`" SBP_STATUS_COMPILE_ERROR "`", "`" SBP_STATUS_CANCELLED "`", "`" SBP_STATUS_INTERNAL_ERROR "`",
                        "| 0 |", "| 1 |", "| 2 |", "64 MiB", "1000"};
  for (size_t i = 0; i < sizeof must / sizeof must[0]; i++) CHECK(strstr(doc, must[i]) != NULL);

  for (int i = 0; i < n_blocks; i++) free(blocks[i].text);
  free(copy);
  free(doc);
  return check_exit();
}
