/* From an exec response to the reference string SURGE stored. */
#include "adapt_internal.h"
#include "cleanup.h"

#include <stdlib.h>
#include <string.h>

/* A step's stream as text ("" when the step did not run). */
static const char *out_of(const sbc_step *s) { return s ? s->out.text : ""; }
static const char *err_of(const sbc_step *s) { return s ? s->err.text : ""; }

static char *concat(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  char *out = malloc(la + lb + 1);
  if (!out) return NULL;
  memcpy(out, a, la);
  memcpy(out + la, b, lb + 1);
  return out;
}

char *sbs_strip(const char *s) {
  const char *ws = " \t\n\r\v\f";
  while (*s && strchr(ws, *s)) s++;
  size_t n = strlen(s);
  while (n && strchr(ws, s[n - 1])) n--;
  return strndup(s, n);
}

/* ---- FL: Lean's JSON messages -> SURGE's {"errors", "pass", "complete"},
 * serialised as Python's json.dumps does by default: ", " and ": "
 * separators and every non-ASCII character escaped. ---- */
static void put(char **buf, size_t *len, size_t *cap, const char *s, size_t n) {
  if (*len + n + 1 > *cap) {
    *cap = (*cap + n) * 2 + 64;
    *buf = realloc(*buf, *cap);
  }
  memcpy(*buf + *len, s, n);
  *len += n;
  (*buf)[*len] = '\0';
}

static void py_string(char **b, size_t *l, size_t *c, const char *s) {
  put(b, l, c, "\"", 1);
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    unsigned cp = *p;
    size_t k = 1;
    if (cp >= 0xF0) cp = ((cp & 7u) << 18) | ((p[1] & 63u) << 12) | ((p[2] & 63u) << 6) | (p[3] & 63u), k = 4;
    else if (cp >= 0xE0) cp = ((cp & 15u) << 12) | ((p[1] & 63u) << 6) | (p[2] & 63u), k = 3;
    else if (cp >= 0xC0) cp = ((cp & 31u) << 6) | (p[1] & 63u), k = 2;
    char esc[16];
    if (cp == '"') put(b, l, c, "\\\"", 2);
    else if (cp == '\\') put(b, l, c, "\\\\", 2);
    else if (cp == '\n') put(b, l, c, "\\n", 2);
    else if (cp == '\r') put(b, l, c, "\\r", 2);
    else if (cp == '\t') put(b, l, c, "\\t", 2);
    else if (cp == '\b') put(b, l, c, "\\b", 2);
    else if (cp == '\f') put(b, l, c, "\\f", 2);
    else if (cp < 0x20 || (cp >= 0x7f && cp < 0x10000)) put(b, l, c, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", cp));
    else if (cp >= 0x10000) {
      unsigned v = cp - 0x10000;
      put(b, l, c, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF)));
    } else put(b, l, c, (const char *)p, 1);
    p += k;
  }
  put(b, l, c, "\"", 1);
}

static void py_pos(char **b, size_t *l, size_t *c, json_object *pos) {
  json_object *line = NULL, *col = NULL;
  json_object_object_get_ex(pos, "line", &line);
  json_object_object_get_ex(pos, "column", &col);
  char tmp[96];
  put(b, l, c, tmp, (size_t)snprintf(tmp, sizeof tmp, "{\"line\": %d, \"column\": %d}", json_object_get_int(line),
                                     json_object_get_int(col)));
}

static char *fl_reference(const char *out) {
  char *buf = NULL;
  size_t len = 0, cap = 0;
  put(&buf, &len, &cap, "{\"errors\": [", strlen("{\"errors\": ["));
  int n_err = 0;
  char *copy = strdup(out);
  for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
    json_object *m = json_tokener_parse(line), *sev, *pos, *endpos, *data;
    if (!m) continue;
    if (json_object_object_get_ex(m, "severity", &sev) && strcmp(json_object_get_string(sev), "error") == 0 &&
        json_object_object_get_ex(m, "pos", &pos) && json_object_object_get_ex(m, "data", &data)) {
      if (n_err++) put(&buf, &len, &cap, ", ", 2);
      put(&buf, &len, &cap, "{\"severity\": \"error\", \"pos\": ", strlen("{\"severity\": \"error\", \"pos\": "));
      py_pos(&buf, &len, &cap, pos);
      put(&buf, &len, &cap, ", \"endPos\": ", strlen(", \"endPos\": "));
      if (json_object_object_get_ex(m, "endPos", &endpos) && endpos) py_pos(&buf, &len, &cap, endpos);
      else put(&buf, &len, &cap, "null", 4);
      put(&buf, &len, &cap, ", \"data\": ", strlen(", \"data\": "));
      py_string(&buf, &len, &cap, json_object_get_string(data));
      put(&buf, &len, &cap, "}", 1);
    }
    json_object_put(m);
  }
  free(copy);
  const char *tail = n_err ? "], \"pass\": false, \"complete\": false}" : "], \"pass\": true, \"complete\": true}";
  put(&buf, &len, &cap, tail, strlen(tail));
  return buf;
}

char *sbs_reference(const sbs_job *j, const sbc_result *r, double *inproc_cpu_s) {
  if (inproc_cpu_s) *inproc_cpu_s = -1;
  if (!r || r->n_steps == 0) return NULL;
  char *raw = NULL;
  if (j->mode == SBS_OUT_BG) {
    if (sbc_result_compile_failed(r))
      raw = concat("Compilation Error: ", err_of(sbc_result_step(r, "compile")));
    else {
      const sbc_step *run = sbc_result_step(r, "run");
      raw = concat(out_of(run), err_of(run));
    }
  } else if (j->mode == SBS_OUT_CONCAT) {
    raw = strdup("");
    for (size_t i = 0; raw && i < r->n_steps; i++) {
      SBU_AUTOFREE char *prev = raw;
      raw = concat(prev, out_of(&r->steps[i]));
    }
  } else {
    const sbc_step *s = sbc_result_step(r, j->out_step);
    if (!s) return NULL; /* the step did not run (an earlier one failed) */
    raw = j->mode == SBS_OUT_STDOUT_STDERR ? concat(out_of(s), err_of(s)) : strdup(out_of(s));
    if (strcmp(j->toolchain, "lean4") == 0) {
      SBU_AUTOFREE char *whole = raw;
      raw = fl_reference(whole);
    }
    if (j->inproc_marker && inproc_cpu_s) {
      /* the wrapper's line is the last one: the script may print look-alikes */
      const char *m = NULL;
      for (const char *p = strstr(err_of(s), "SURGEBOX_INPROC_CPU="); p; p = strstr(p + 1, "SURGEBOX_INPROC_CPU="))
        m = p;
      if (m) *inproc_cpu_s = strtod(m + strlen("SURGEBOX_INPROC_CPU="), NULL);
    }
  }
  if (raw && j->strip) {
    SBU_AUTOFREE char *unstripped = raw;
    raw = sbs_strip(unstripped);
  }
  return raw;
}
