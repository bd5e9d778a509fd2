/* A JSON syntax error in words for people (protocol.h, sbp_json_error_words):
 * where (the column, the field being written) and what was expected,
 * instead of json-c's "null expected" or "object value separator ',' expected". */
#include "protocol.h"
#include "json_line.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEPTH 8 /* the path names the outermost fields; deeper ones are "..." */

typedef struct {
  bool object, want_key, has_key;
  const char *key; /* the last field name seen in this object */
  size_t key_len, index;
} frame;

/* The field being written at byte `at`: files[0].content, limits.time_s. */
static void field_path(const char *s, size_t at, char *out, size_t out_len, bool *after) {
  frame st[DEPTH];
  size_t depth = 0, deep = 0;
  *after = false;
  out[0] = '\0';
  for (size_t i = 0; i < at; i++) {
    char ch = s[i];
    frame *top = depth ? &st[depth - 1] : NULL;
    if (ch == '"') {
      size_t j = i + 1;
      while (j < at && s[j] != '"') j += s[j] == '\\' ? 2 : 1;
      if (top && !deep && top->object && top->want_key)
        top->key = s + i + 1, top->key_len = (j < at ? j : at) - i - 1, top->has_key = true;
      i = j;
    } else if (ch == '{' || ch == '[') {
      if (depth == DEPTH) deep++;
      else st[depth++] = (frame){.object = ch == '{', .want_key = ch == '{'};
    } else if (ch == '}' || ch == ']') {
      if (deep) deep--;
      else if (depth) depth--;
    } else if (top && !deep && ch == ',') {
      if (top->object) top->want_key = true;
      else top->index++;
    } else if (top && !deep && ch == ':' && top->object) {
      top->want_key = false;
    }
  }
  for (size_t k = 0; k < depth; k++) {
    size_t n = strlen(out);
    if (st[k].object) {
      if (!st[k].has_key) break;
      if (st[k].want_key && k == depth - 1) *after = true; /* between fields: after the last one */
      snprintf(out + n, out_len - n, "%s%.*s", n ? "." : "", (int)(st[k].key_len > 64 ? 64 : st[k].key_len), st[k].key);
    } else {
      snprintf(out + n, out_len - n, "[%zu]", st[k].index);
    }
  }
  if (deep && strlen(out) + 5 < out_len) strcat(out, "...");
}

static const char *words(enum json_tokener_error e) {
  switch (e) {
  case json_tokener_error_depth: return "nested too deeply";
  case json_tokener_error_parse_null:
  case json_tokener_error_parse_boolean:
  case json_tokener_error_parse_unexpected:
    return "not a JSON value (text goes in double quotes; the words are true, false and null)";
  case json_tokener_error_parse_number: return "a malformed number";
  case json_tokener_error_parse_array: return "a list needs , between its items and ] at its end";
  case json_tokener_error_parse_object_key_name: return "expected a field name in double quotes";
  case json_tokener_error_parse_object_key_sep: return "expected : after the field name";
  case json_tokener_error_parse_object_value_sep: return "expected , or } after the field's value";
  case json_tokener_error_parse_string:
    return "a malformed string (a raw tab or newline must be written \\t or \\n; \\ starts only \\\" \\\\ / \\b \\f "
           "\\n \\r \\t \\uXXXX)";
  case json_tokener_error_parse_comment: return "comments are not JSON";
  case json_tokener_error_parse_utf8_string: return "not UTF-8";
  case json_tokener_error_size: return "too long";
  case json_tokener_continue:
  case json_tokener_error_parse_eof: return "the line ends inside a value";
  default: return json_tokener_error_desc(e);
  }
}

json_object *sbp_json_line(const char *s, size_t n, char *why, size_t why_len) {
  if (memchr(s, '\0', n) || n > INT_MAX) {
    snprintf(why, why_len, "%s", memchr(s, '\0', n) ? "a NUL byte in the line" : "the line is too long");
    return NULL;
  }
  json_tokener *tok = json_tokener_new();
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
  json_object *o = json_tokener_parse_ex(tok, s, (int)n);
  enum json_tokener_error e = json_tokener_get_error(tok);
  size_t used = json_tokener_get_parse_end(tok);
  json_tokener_free(tok);
  if (!o || e != json_tokener_success) {
    char words[512];
    sbp_json_error_words(s, n, e == json_tokener_success ? json_tokener_continue : e, used, words, sizeof words);
    snprintf(why, why_len, "not JSON %s", words);
    json_object_put(o);
    return NULL;
  }
  while (used < n && strchr(" \t\r\n", s[used])) used++; /* no NUL in s: checked above */
  if (used < n) {
    snprintf(why, why_len, "not JSON: text after the value");
    json_object_put(o);
    return NULL;
  }
  return o;
}

void sbp_json_error_words(const char *s, size_t n, enum json_tokener_error e, size_t at, char *buf, size_t len) {
  if (at > n) at = n;
  char path[256];
  bool after;
  field_path(s, at, path, sizeof path, &after);
  char where[320] = "";
  if (path[0]) snprintf(where, sizeof where, " (%s field \"%s\")", after ? "after the" : "in the", path);
  const char *what = words(e);
  size_t back = at;
  while (back > 0 && strchr(" \t\r\n", s[back - 1])) back--;
  if (at < n && (s[at] == '}' || s[at] == ']') && back > 0 && s[back - 1] == ',')
    what = "a , before the closing } or ] (JSON allows no trailing comma)";
  snprintf(buf, len, "at column %zu%s: %s", at + 1, where, what);
}

json_object *sbp_json_file(const char *path, char *err, size_t len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) {
    int e = errno;
    snprintf(err, len, "%s", e == ENOENT ? "no such file" : strerror(e));
    if (fd >= 0) close(fd);
    return NULL;
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    snprintf(err, len, "a directory, not a file");
    return NULL;
  }
  size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 65536, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (!buf) break;
    if (n == cap) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) free(buf);
      buf = nb;
      if (!buf) break;
    }
    ssize_t got = read(fd, buf + n, cap - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int e = errno;
      free(buf);
      buf = NULL;
      errno = e;
      break;
    }
    if (got == 0) break;
    n += (size_t)got;
  }
  int e = errno;
  close(fd);
  if (!buf) {
    snprintf(err, len, "cannot read it: %s", strerror(e));
    return NULL;
  }
  size_t lead = 0;
  while (lead < n && strchr(" \t\r\n", buf[lead])) lead++;
  if (lead == n) {
    free(buf);
    snprintf(err, len, "empty, not JSON");
    return NULL;
  }
  json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
  json_object *o = tok && n <= INT_MAX ? json_tokener_parse_ex(tok, buf, (int)n) : NULL;
  enum json_tokener_error je = tok ? json_tokener_get_error(tok) : json_tokener_error_size;
  size_t at = tok ? json_tokener_get_parse_end(tok) : 0;
  if (o && je == json_tokener_success) { /* only white space may follow */
    size_t k = at;
    while (k < n && strchr(" \t\r\n", buf[k])) k++;
    if (k < n) {
      json_object_put(o);
      o = NULL;
      at = k;
      je = json_tokener_error_parse_unexpected;
    }
  }
  if (!o) {
    if (je == json_tokener_continue) at = n; /* it ended inside a value */
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < at && i < n; i++)
      if (buf[i] == '\n') line++, line_start = i + 1;
    char words[512];
    /* the column within its line: the words are computed on the line's own bytes */
    sbp_json_error_words(buf, n, je, at, words, sizeof words);
    const char *what = strstr(words, ": ");
    const char *field = strstr(words, " (");
    char fieldbuf[300] = "";
    if (field && what && field < what) snprintf(fieldbuf, sizeof fieldbuf, "%.*s", (int)(what - field), field);
    snprintf(err, len, "not valid JSON at line %zu, column %zu%s: %s", line, at - line_start + 1, fieldbuf,
             what ? what + 2 : words);
    if (je == json_tokener_continue || je == json_tokener_error_parse_eof)
      snprintf(err, len, "not valid JSON: the file ends inside a value (line %zu)", line);
  }
  if (tok) json_tokener_free(tok);
  free(buf);
  return o;
}
