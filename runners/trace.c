/* A traced run's trace, as the supervisor hands it on (PROTOCOL.md
 * "Traces"): whatever the program wrote to SB_TRACE_FD is the tracer's word
 * only; the supervisor has the last one. Each line is parsed (json-c) and
 * checked as a record: a head first, events numbered without gaps, nothing
 * after the end. The first line that fails and everything after it are cut
 * and a `tampered` end appended; a trace the byte cap cut loses its partial
 * last line and gets a `truncated`/`bytes` end; a trace without an end (the
 * tracer killed, os._exit, its descriptor closed) gets a `crashed` one.
 * Done in place on the buffer: no second copy of the trace. */
#include "internal.h"

#include <ctype.h>
#include <json-c/json.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef sb_trace_scan scan;

static const char *const statuses[] = {"complete", "truncated", "tampered", "crashed", NULL};

/* JSON syntax only, without building anything (json-c's parse of every
 * line cost 23 ms per MB on the loop thread; this about a tenth): the end
 * of one value starting at p, or NULL. Records nest a few levels (a value
 * is [type, repr]); deeper than 32 is not a record. */
static const char *scan_value(const char *p, const char *e, int depth);

static const char *skip_ws(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
  return p;
}

/* Bytes a string may hold as they are: not '"', '\\' or a control character. */
static bool plain_byte[256];
static void plain_bytes_init(void) {
  for (int c = 0; c < 256; c++) plain_byte[c] = c >= 0x20 && c != '"' && c != '\\';
}

static const char *scan_string(const char *p, const char *e) {
  for (p++; p < e; p++) {
    while (p < e && plain_byte[(unsigned char)*p]) p++;
    if (p >= e || (unsigned char)*p < 0x20) return NULL;
    if (*p == '"') return p + 1;
    if (++p >= e) return NULL; /* a backslash */
    if (*p == 'u') {
      for (int k = 0; k < 4; k++)
        if (++p >= e || !isxdigit((unsigned char)*p)) return NULL;
    } else if (!*p || !strchr("\"\\/bfnrt", *p)) {
      return NULL;
    }
  }
  return NULL;
}

static const char *scan_digits(const char *p, const char *e) {
  const char *s = p;
  while (p < e && *p >= '0' && *p <= '9') p++;
  return p > s ? p : NULL;
}

static const char *scan_number(const char *p, const char *e) {
  if (*p == '-') p++;
  if (!(p = scan_digits(p, e))) return NULL;
  if (p < e && *p == '.' && !(p = scan_digits(p + 1, e))) return NULL;
  if (p < e && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < e && (*p == '+' || *p == '-')) p++;
    if (!(p = scan_digits(p, e))) return NULL;
  }
  return p;
}

static const char *scan_container(const char *p, const char *e, int depth, char close) {
  p = skip_ws(p + 1, e);
  if (p < e && *p == close) return p + 1;
  for (;;) {
    if (close == '}') {
      if (p >= e || *p != '"' || !(p = scan_string(p, e))) return NULL;
      p = skip_ws(p, e);
      if (p >= e || *p != ':') return NULL;
      p = skip_ws(p + 1, e);
    }
    if (!(p = scan_value(p, e, depth + 1))) return NULL;
    p = skip_ws(p, e);
    if (p < e && *p == close) return p + 1;
    if (p >= e || *p != ',') return NULL;
    p = skip_ws(p + 1, e);
  }
}

static const char *scan_value(const char *p, const char *e, int depth) {
  if (p >= e || depth > 32) return NULL;
  switch (*p) {
  case '{': return scan_container(p, e, depth, '}');
  case '[': return scan_container(p, e, depth, ']');
  case '"': return scan_string(p, e);
  case 't': return e - p >= 4 && !memcmp(p, "true", 4) ? p + 4 : NULL;
  case 'f': return e - p >= 5 && !memcmp(p, "false", 5) ? p + 5 : NULL;
  case 'n': return e - p >= 4 && !memcmp(p, "null", 4) ? p + 4 : NULL;
  default: return *p == '-' || (*p >= '0' && *p <= '9') ? scan_number(p, e) : NULL;
  }
}

static bool starts(const char *p, const char *e, const char *lit) {
  size_t n = strlen(lit);
  return (size_t)(e - p) >= n && memcmp(p, lit, n) == 0;
}

/* The end record's status (the one line json-c parses). */
static const char *end_status(const char *line, size_t len) {
  json_tokener *tok = json_tokener_new();
  json_object *rec = tok ? json_tokener_parse_ex(tok, line, (int)len) : NULL, *v;
  const char *found = NULL;
  if (rec && json_object_object_get_ex(rec, "status", &v) && json_object_is_type(v, json_type_string))
    for (const char *const *s = statuses; *s && !found; s++)
      if (strcmp(*s, json_object_get_string(v)) == 0) found = *s;
  json_object_put(rec);
  if (tok) json_tokener_free(tok);
  return found;
}

/* One line (without its "\n"): valid JSON whose keys start as the tracer
 * writes them ({"t":"ev","i":N,...}: PROTOCOL.md fixes the order); false
 * with sc->reason set when it is not the record that may come next. */
static bool check_line(const char *line, size_t len, uint64_t lineno, scan *sc) {
  const char *e = line + len, *p = line + 6, *t = NULL;
  if (starts(line, e, "{\"t\":\"") && scan_value(line, e, 0) == e) {
    if (starts(p, e, "head\",")) t = "head";
    else if (starts(p, e, "file\",")) t = "file";
    else if (starts(p, e, "ev\",")) t = "ev";
    else if (starts(p, e, "end\",")) t = "end";
  }
  bool ok = true;
  if (!t) {
    snprintf(sc->reason, sizeof sc->reason, "line %llu is not a trace record", (unsigned long long)lineno);
    ok = false;
  } else if (sc->end_seen) {
    snprintf(sc->reason, sizeof sc->reason, "line %llu: a record after the end", (unsigned long long)lineno);
    ok = false;
  } else if ((lineno == 1) != (strcmp(t, "head") == 0)) {
    snprintf(sc->reason, sizeof sc->reason, lineno == 1 ? "line 1 is not a head" : "line %llu: a second head",
             (unsigned long long)lineno);
    ok = false;
  } else if (strcmp(t, "ev") == 0) {
    char want[32];
    int n = snprintf(want, sizeof want, "\"i\":%llu,", (unsigned long long)sc->events);
    ok = starts(p + 4, e, want) && n > 0;
    if (ok) sc->events++;
    else
      snprintf(sc->reason, sizeof sc->reason, "line %llu: event %llu expected", (unsigned long long)lineno,
               (unsigned long long)sc->events);
  } else if (strcmp(t, "end") == 0) {
    sc->end_status = end_status(line, len);
    ok = sc->end_status != NULL;
    if (ok) sc->end_seen = true;
    else snprintf(sc->reason, sizeof sc->reason, "line %llu: an end without a known status", (unsigned long long)lineno);
  }
  return ok;
}

/* The supervisor's end record, appended (the buffer may grow past the cap
 * by this line: at most a few hundred bytes). */
static void append_end(sb_buf *b, const char *status, const char *cap, const char *reason, uint64_t events,
                       const sb_result *r) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "t", json_object_new_string("end"));
  json_object_object_add(o, "status", json_object_new_string(status));
  if (cap) json_object_object_add(o, "cap", json_object_new_string(cap));
  if (reason) json_object_object_add(o, "reason", json_object_new_string(reason));
  json_object_object_add(o, "events", json_object_new_int64((int64_t)events));
  json_object *ex = json_object_new_object();
  if (r->signal) json_object_object_add(ex, "signal", json_object_new_int(r->signal));
  else if (r->exit_code >= 0) json_object_object_add(ex, "code", json_object_new_int(r->exit_code));
  json_object_object_add(o, "exit", ex);
  json_object_object_add(o, "by", json_object_new_string("supervisor"));
  const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  size_t n = strlen(text);
  unsigned char *p = realloc(b->data, b->len + n + 2);
  if (p) {
    b->data = p;
    b->cap = b->len + n + 2;
    memcpy(b->data + b->len, text, n);
    b->len += n;
    b->data[b->len++] = '\n';
    b->data[b->len] = '\0';
  }
  json_object_put(o);
}

bool sb_trace_scan_more(sb_trace_scan *sc, const sb_buf *b) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, plain_bytes_init);
  while (!sc->reason[0] && sc->keep < b->len) {
    size_t pos = sc->keep, from = sc->searched > pos ? sc->searched : pos;
    unsigned char *nl = memchr(b->data + from, '\n', b->len - from);
    if (!nl) { /* a partial line: checked once it is whole, else cut */
      sc->searched = b->len;
      break;
    }
    size_t len = (size_t)(nl - (b->data + pos));
    if (!sc->end_seen) sc->end_at = pos;
    if (!check_line((const char *)b->data + pos, len, ++sc->lineno, sc)) break;
    sc->keep = pos + len + 1;
  }
  return !sc->reason[0];
}

void sb_trace_finalize(sb_result *r, sb_trace_scan *so_far) {
  sb_buf *b = &r->trace;
  bool cut_by_cap = b->truncated;
  scan own = {0}, *s = so_far ? so_far : &own;
  sb_trace_scan_more(s, b);
  scan sc = *s;
  if (!sc.reason[0] && cut_by_cap && sc.end_seen) /* bytes written after the tracer's end */
    snprintf(sc.reason, sizeof sc.reason, "bytes after the end (the byte cap was reached)");
  if (sc.reason[0]) {
    /* Cut before the offending line, and before the tracer's end if
     * something followed it: one end, the supervisor's. */
    b->len = sc.end_seen ? sc.end_at : sc.keep;
    append_end(b, "tampered", NULL, sc.reason, sc.events, r);
    r->trace_status = "tampered";
  } else if (cut_by_cap) {
    b->len = sc.keep;
    append_end(b, "truncated", "bytes", NULL, sc.events, r);
    r->trace_status = "truncated";
  } else if (!sc.end_seen) {
    b->len = sc.keep;
    append_end(b, "crashed", NULL, "no end record: the tracer was killed, exited early or lost its descriptor",
               sc.events, r);
    r->trace_status = "crashed";
  } else {
    b->len = sc.keep;
    r->trace_status = sc.end_status;
  }
  if (b->data) b->data[b->len] = '\0';
}
