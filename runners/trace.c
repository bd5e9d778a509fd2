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

#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint64_t events;      /* ev records kept */
  size_t keep;          /* bytes of valid records (up to the end record, if any) */
  size_t end_at;        /* where the tracer's end record starts, when seen */
  bool end_seen;
  const char *end_status; /* the tracer's end's status (static) */
  char reason[160];     /* why tampered, "" when not */
} scan;

static const char *const statuses[] = {"complete", "truncated", "tampered", "crashed", NULL};

static const char *known_status(json_object *rec) {
  json_object *v;
  if (!json_object_object_get_ex(rec, "status", &v) || !json_object_is_type(v, json_type_string)) return NULL;
  for (const char *const *s = statuses; *s; s++)
    if (strcmp(*s, json_object_get_string(v)) == 0) return *s;
  return NULL;
}

/* One line (without its "\n"): false with sc->reason set when it is not the
 * record that may come next. */
static bool check_line(json_tokener *tok, const char *line, size_t len, uint64_t lineno, scan *sc) {
  json_tokener_reset(tok);
  json_object *rec = len ? json_tokener_parse_ex(tok, line, (int)len) : NULL;
  const char *t = NULL;
  json_object *v;
  if (rec && json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == len &&
      json_object_is_type(rec, json_type_object) && json_object_object_get_ex(rec, "t", &v) &&
      json_object_is_type(v, json_type_string))
    t = json_object_get_string(v);
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
    ok = json_object_object_get_ex(rec, "i", &v) && json_object_is_type(v, json_type_int) &&
         json_object_get_int64(v) >= 0 && (uint64_t)json_object_get_int64(v) == sc->events;
    if (ok) sc->events++;
    else
      snprintf(sc->reason, sizeof sc->reason, "line %llu: event %llu expected", (unsigned long long)lineno,
               (unsigned long long)sc->events);
  } else if (strcmp(t, "end") == 0) {
    sc->end_status = known_status(rec);
    ok = sc->end_status != NULL;
    if (ok) sc->end_seen = true;
    else snprintf(sc->reason, sizeof sc->reason, "line %llu: an end without a known status", (unsigned long long)lineno);
  } else if (strcmp(t, "head") != 0 && strcmp(t, "file") != 0) {
    snprintf(sc->reason, sizeof sc->reason, "line %llu: unknown record \"%.40s\"", (unsigned long long)lineno, t);
    ok = false;
  }
  json_object_put(rec);
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

void sb_trace_finalize(sb_result *r) {
  sb_buf *b = &r->trace;
  bool cut_by_cap = b->truncated;
  scan sc = {0};
  json_tokener *tok = json_tokener_new_ex(64);
  size_t pos = 0;
  uint64_t lineno = 0;
  while (tok && pos < b->len) {
    unsigned char *nl = memchr(b->data + pos, '\n', b->len - pos);
    if (!nl) break; /* a partial last line: cut, whatever it was */
    size_t len = (size_t)(nl - (b->data + pos));
    if (!sc.end_seen) sc.end_at = pos;
    if (!check_line(tok, (const char *)b->data + pos, len, ++lineno, &sc)) break;
    pos += len + 1;
    sc.keep = pos;
  }
  if (tok) json_tokener_free(tok);
  else snprintf(sc.reason, sizeof sc.reason, "out of memory while checking the trace");
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
