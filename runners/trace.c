/* A traced run's trace, as the supervisor hands it on (PROTOCOL.md
 * "Traces"): whatever the program wrote to SB_TRACE_FD is the tracer's word
 * only; the supervisor has the last one. Each line is scanned as JSON and
 * checked as a record as it arrives: a head first, events numbered without
 * gaps, nothing after the end. The scan is resumable, byte by byte across
 * reads, and builds nothing: a read costs the loop what it brought, and a
 * line of any length costs no memory beyond the buffer that holds it. The
 * first line that fails and everything after it are cut and a `tampered`
 * end appended; a trace the byte cap cut loses its partial last line and
 * gets a `truncated`/`bytes` end; a trace without an end (the tracer killed,
 * os._exit, its descriptor closed) gets a `crashed` one.
 *
 * A sealed trace (the Python tracer's: it shares the program's process, so
 * the program can write on its descriptor too) must carry the tracer's seal
 * line, `{"t":"seal","mac":HEX}`, right before its end: HEX is SHA-256 of
 * the key the supervisor gave the tracer alone, every byte before the seal
 * line, the end's status, "\n" and its cap. Bytes the program wrote around
 * the tracer, an end it forged, or a status it changed after the tracer
 * stopped do not match: `tampered`. The seal line is removed from the trace
 * handed on. Done in place on the buffer: no second copy of the trace. */
#include "internal.h"
#include "sha256.h"

#include <ctype.h>
#include <json-c/json.h>
#include <nettle/sha2.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef sb_trace_scan scan;

static const char *const statuses[] = {"complete", "truncated", "tampered", "crashed", NULL};

/* Bytes a string may hold as they are: not '"', '\\' or a control character. */
static bool plain_byte[256];
static void plain_bytes_init(void) {
  for (int c = 0; c < 256; c++) plain_byte[c] = c >= 0x20 && c != '"' && c != '\\';
}

/* The JSON syntax scan's states (sc->js), one line at a time: a value
 * expected (or, right after '[', its close), a key or '}' (after '{'), a
 * key, its colon, what follows a value, inside a string, an escape, \u's
 * hex digits, a number's parts, a literal's letters; J_BAD for good. */
enum { J_VALUE, J_VALUE_OR_CLOSE, J_KEY_OR_CLOSE, J_KEY, J_COLON, J_AFTER, J_STR, J_ESC, J_HEX,
       J_NUM_MINUS, J_NUM_INT, J_NUM_DOT, J_NUM_FRAC, J_NUM_E, J_NUM_ESIGN, J_NUM_EXP, J_LIT, J_BAD };

static bool is_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\r'; }
static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* One value starting with c; false when c starts none or nests too deep. */
static bool value_start(scan *sc, unsigned char c) {
  if (sc->js_depth > SB_TRACE_SCAN_NEST) return false;
  switch (c) {
  case '{': sc->js_stack[sc->js_depth++] = '}'; sc->js = J_KEY_OR_CLOSE; return true;
  case '[': sc->js_stack[sc->js_depth++] = ']'; sc->js = J_VALUE_OR_CLOSE; return true;
  case '"': sc->js = J_STR; sc->js_key = false; return true;
  case 't': sc->js_lit = "rue"; sc->js = J_LIT; return true;
  case 'f': sc->js_lit = "alse"; sc->js = J_LIT; return true;
  case 'n': sc->js_lit = "ull"; sc->js = J_LIT; return true;
  case '-': sc->js = J_NUM_MINUS; return true;
  default:
    if (!is_digit(c)) return false;
    sc->js = J_NUM_INT;
    return true;
  }
}

/* Scans p..e, bytes of one line without its newline; false at the first
 * byte that cannot continue a JSON value (the state is then J_BAD). */
/* Each feed_* takes the bytes from p in its kind of state and returns where
 * it stopped, or NULL for a byte JSON does not allow there. */

/* J_STR (a run of plain bytes at once), J_ESC, J_HEX, J_LIT */
static const unsigned char *feed_text(scan *sc, const unsigned char *p, const unsigned char *e) {
  unsigned char c = *p;
  switch (sc->js) {
  case J_STR:
    while (p < e && plain_byte[*p]) p++;
    if (p == e) return p;
    if (*p == '"') sc->js = sc->js_key ? J_COLON : J_AFTER;
    else if (*p == '\\') sc->js = J_ESC;
    else return NULL; /* a control character */
    return p + 1;
  case J_ESC:
    if (c == 'u') {
      sc->js = J_HEX;
      sc->js_hex = 4;
    } else if (c && strchr("\"\\/bfnrt", c)) {
      sc->js = J_STR;
    } else {
      return NULL;
    }
    return p + 1;
  case J_HEX:
    if (!isxdigit(c)) return NULL;
    if (--sc->js_hex == 0) sc->js = J_STR;
    return p + 1;
  default: /* J_LIT */
    if (c != (unsigned char)*sc->js_lit) return NULL;
    if (!*++sc->js_lit) sc->js = J_AFTER;
    return p + 1;
  }
}

/* J_NUM_*: one byte; a byte that ends the number is left for J_AFTER */
static const unsigned char *feed_number(scan *sc, const unsigned char *p) {
  unsigned char c = *p;
  switch (sc->js) {
  case J_NUM_MINUS:
    if (!is_digit(c)) return NULL;
    sc->js = J_NUM_INT;
    return p + 1;
  case J_NUM_INT:
  case J_NUM_FRAC:
    if (is_digit(c)) return p + 1;
    if (c == '.' && sc->js == J_NUM_INT) sc->js = J_NUM_DOT;
    else if (c == 'e' || c == 'E') sc->js = J_NUM_E;
    else return sc->js = J_AFTER, p; /* the number ended: c is what follows it */
    return p + 1;
  case J_NUM_DOT:
    if (!is_digit(c)) return NULL;
    sc->js = J_NUM_FRAC;
    return p + 1;
  case J_NUM_E:
    if (c == '+' || c == '-') sc->js = J_NUM_ESIGN;
    else if (is_digit(c)) sc->js = J_NUM_EXP;
    else return NULL;
    return p + 1;
  case J_NUM_ESIGN:
    if (!is_digit(c)) return NULL;
    sc->js = J_NUM_EXP;
    return p + 1;
  default: /* J_NUM_EXP */
    if (is_digit(c)) return p + 1;
    sc->js = J_AFTER;
    return p;
  }
}

/* Whether c closes the innermost array or object (which is then done: J_AFTER). */
static bool closes(scan *sc, unsigned char c) {
  if (c != (unsigned char)sc->js_stack[sc->js_depth - 1]) return false;
  sc->js_depth--;
  sc->js = J_AFTER;
  return true;
}

/* J_VALUE*, J_KEY*, J_COLON, J_AFTER: one byte */
static const unsigned char *feed_structure(scan *sc, const unsigned char *p) {
  unsigned char c = *p;
  switch (sc->js) {
  case J_VALUE_OR_CLOSE: /* right after '[': ']' closes it empty */
    if (closes(sc, c)) return p + 1;
    /* fall through */
  case J_VALUE:
    return (is_ws(c) && sc->js_depth) || value_start(sc, c) ? p + 1 : NULL;
  case J_KEY_OR_CLOSE: /* right after '{': '}' closes it empty */
    if (closes(sc, c)) return p + 1;
    /* fall through */
  case J_KEY:
    if (c == '"') sc->js = J_STR, sc->js_key = true;
    else if (!is_ws(c)) return NULL;
    return p + 1;
  case J_COLON:
    if (c == ':') sc->js = J_VALUE;
    else if (!is_ws(c)) return NULL;
    return p + 1;
  case J_AFTER:
    if (!sc->js_depth) return NULL; /* the line's value is whole: nothing may follow it */
    if (c == ',') sc->js = sc->js_stack[sc->js_depth - 1] == '}' ? J_KEY : J_VALUE;
    else if (!closes(sc, c) && !is_ws(c)) return NULL;
    return p + 1;
  default:
    return NULL;
  }
}

static bool json_feed(scan *sc, const unsigned char *p, const unsigned char *e) {
  while (p < e) {
    switch (sc->js) {
    case J_STR:
    case J_ESC:
    case J_HEX:
    case J_LIT:
      p = feed_text(sc, p, e);
      break;
    case J_NUM_MINUS:
    case J_NUM_INT:
    case J_NUM_FRAC:
    case J_NUM_DOT:
    case J_NUM_E:
    case J_NUM_ESIGN:
    case J_NUM_EXP:
      p = feed_number(sc, p);
      break;
    default:
      p = feed_structure(sc, p);
    }
    if (!p) {
      sc->js = J_BAD;
      return false;
    }
  }
  return true;
}

/* At the line's newline: one whole value, nothing after it. */
static bool json_whole(const scan *sc) {
  return !sc->js_depth && (sc->js == J_AFTER || sc->js == J_NUM_INT || sc->js == J_NUM_FRAC || sc->js == J_NUM_EXP);
}

static bool starts(const char *p, const char *e, const char *lit) {
  size_t n = strlen(lit);
  return (size_t)(e - p) >= n && memcmp(p, lit, n) == 0;
}

/* The end record's status and cap, where the tracer writes them:
 * {"t":"end","status":"S",["cap":"C",]... (PROTOCOL.md fixes the order). */
static const char *end_status(const char *line, const char *e, char cap[32]) {
  const char *p = line + sizeof "{\"t\":\"end\",\"status\":\"" - 1, *found = NULL;
  cap[0] = '\0';
  if (!starts(line, e, "{\"t\":\"end\",\"status\":\"")) return NULL;
  for (const char *const *s = statuses; *s && !found; s++)
    if (starts(p, e, *s) && starts(p + strlen(*s), e, "\",")) found = *s;
  if (!found) return NULL;
  p += strlen(found) + 2;
  if (starts(p, e, "\"cap\":\"")) {
    p += sizeof "\"cap\":\"" - 1;
    size_t n = 0;
    while (p + n < e && n < 31 && (islower((unsigned char)p[n]) || p[n] == '_')) n++;
    if (p + n >= e || p[n] != '"') return NULL;
    memcpy(cap, p, n);
    cap[n] = '\0';
  }
  return found;
}

/* {"t":"seal","mac":"<64 lowercase hex>"}: the mac, or false. */
static bool seal_line(const char *line, size_t len, char mac[65]) {
  static const char pre[] = "{\"t\":\"seal\",\"mac\":\"";
  size_t n = sizeof pre - 1;
  if (len != n + 64 + 2 || memcmp(line, pre, n) != 0 || memcmp(line + n + 64, "\"}", 2) != 0) return false;
  for (size_t i = 0; i < 64; i++) {
    char c = line[n + i];
    if (!(is_digit((unsigned char)c) || (c >= 'a' && c <= 'f'))) return false;
  }
  memcpy(mac, line + n, 64);
  mac[64] = '\0';
  return true;
}

/* Whether the seal matches the end's status and cap. */
static bool seal_matches(const scan *sc, const char *status, const char *cap) {
  struct sha256_ctx h = sc->at_seal;
  unsigned char d[SHA256_DIGEST_SIZE];
  char hex[65];
  sha256_update(&h, strlen(status), (const uint8_t *)status);
  sha256_update(&h, 1, (const uint8_t *)"\n");
  sha256_update(&h, strlen(cap), (const uint8_t *)cap);
  sha256_digest(&h, sizeof d, d);
  sbu_hex(d, sizeof d, hex);
  unsigned diff = 0; /* the whole comparison, whatever differs first */
  for (size_t i = 0; i < 64; i++) diff |= (unsigned)(hex[i] ^ sc->seal_mac[i]);
  return diff == 0;
}

__attribute__((format(printf, 2, 3))) static bool fail(scan *sc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sc->reason, sizeof sc->reason, fmt, ap);
  va_end(ap);
  return false;
}
#define FAIL(...) fail(sc, __VA_ARGS__)

/* One whole line (without its "\n"), its JSON syntax scanned: a record whose
 * keys start as the tracer writes them ({"t":"ev","i":N,...}: PROTOCOL.md
 * fixes the order); false with sc->reason set when it is not the record
 * that may come next. */
static bool check_line(const char *line, size_t len, scan *sc) {
  unsigned long long lineno = (unsigned long long)sc->lineno;
  const char *e = line + len, *p = line + 6, *t = NULL;
  if (starts(line, e, "{\"t\":\"") && json_whole(sc)) {
    if (starts(p, e, "head\",")) t = "head";
    else if (starts(p, e, "file\",")) t = "file";
    else if (starts(p, e, "ev\",")) t = "ev";
    else if (starts(p, e, "end\",")) t = "end";
    else if (sc->seal_wanted && starts(p, e, "seal\",")) t = "seal";
  }
  if (!t) return FAIL("line %llu is not a trace record", lineno);
  if (sc->end_seen) return FAIL("line %llu: a record after the end", lineno);
  if ((lineno == 1) != (strcmp(t, "head") == 0))
    return lineno == 1 ? FAIL("line 1 is not a head") : FAIL("line %llu: a second head", lineno);
  if (sc->seal_seen && strcmp(t, "end") != 0)
    return FAIL("line %llu: a record after the tracer's seal (only its end may follow)", lineno);
  if (strcmp(t, "ev") == 0) {
    char want[32];
    snprintf(want, sizeof want, "\"i\":%llu,", (unsigned long long)sc->events);
    if (!starts(p + 4, e, want)) return FAIL("line %llu: event %llu expected", lineno, (unsigned long long)sc->events);
    sc->events++;
  } else if (strcmp(t, "seal") == 0) {
    if (!seal_line(line, len, sc->seal_mac)) return FAIL("line %llu: a seal not as the tracer writes it", lineno);
    sc->seal_seen = true;
    sc->at_seal = sc->at_line;
  } else if (strcmp(t, "end") == 0) {
    char cap[32];
    if (len + 1 > SB_TRACE_END_MAX)
      return FAIL("line %llu: an end record of %zu bytes (at most %d)", lineno, len + 1, SB_TRACE_END_MAX);
    sc->end_status = end_status(line, e, cap);
    if (!sc->end_status) return FAIL("line %llu: an end without a known status", lineno);
    if (sc->seal_wanted && !sc->seal_seen)
      return FAIL("line %llu: an end without the tracer's seal (not the tracer's record)", lineno);
    if (sc->seal_wanted && !seal_matches(sc, sc->end_status, cap))
      return FAIL("line %llu: the tracer's seal does not match the records and end received (written by the "
                  "program, or changed after the tracer stopped)", lineno);
    sc->sealed = sc->seal_wanted;
    sc->end_seen = true;
  }
  return true;
}

void sb_trace_scan_seal(sb_trace_scan *sc, const unsigned char key[SB_TRACE_KEY_BYTES]) {
  sc->seal_wanted = true;
  sha256_init(&sc->hash);
  sha256_update(&sc->hash, SB_TRACE_KEY_BYTES, key);
  sc->at_line = sc->hash;
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
  while (!sc->reason[0] && sc->scanned < b->len) {
    size_t pos = sc->keep, from = sc->scanned > pos ? sc->scanned : pos;
    const unsigned char *s = b->data + from, *nl = memchr(s, '\n', b->len - from);
    const unsigned char *stop = nl ? nl : b->data + b->len;
    bool syntax = json_feed(sc, s, stop);
    if (sc->seal_wanted) sha256_update(&sc->hash, (size_t)(stop - s) + (nl ? 1 : 0), s);
    sc->scanned = (size_t)(stop - b->data);
    const char *line = (const char *)b->data + pos, *e = (const char *)stop;
    if (!syntax) { /* no newline can make it a record: said now, the pipe closed */
      FAIL("line %llu is not a trace record", (unsigned long long)sc->lineno + 1);
      break;
    }
    if (!nl) { /* a partial line: checked once it is whole, else cut; an end past its bound fails now */
      if (sc->scanned - pos >= SB_TRACE_END_MAX && starts(line, e, "{\"t\":\"end\","))
        FAIL("line %llu: an end record of more than %d bytes", (unsigned long long)sc->lineno + 1, SB_TRACE_END_MAX);
      break;
    }
    size_t len = (size_t)(stop - (b->data + pos));
    if (!sc->end_seen) sc->end_at = pos;
    sc->lineno++;
    bool was_sealed = sc->seal_seen;
    if (!check_line(line, len, sc)) break;
    if (sc->seal_seen && !was_sealed) {
      sc->seal_at = pos;
      sc->seal_len = len + 1;
    }
    sc->keep = sc->scanned = pos + len + 1;
    sc->js = J_VALUE;
    sc->js_depth = 0;
    if (sc->seal_wanted) sc->at_line = sc->hash;
  }
  return !sc->reason[0];
}

/* The seal line is the supervisor's business: removed from the trace kept
 * up to cut (after it comes at most the end record: nothing else passes). */
static size_t drop_seal(sb_buf *b, const scan *sc, size_t cut) {
  if (!sc->seal_seen || sc->seal_at + sc->seal_len > cut) return cut;
  memmove(b->data + sc->seal_at, b->data + sc->seal_at + sc->seal_len, cut - sc->seal_at - sc->seal_len);
  return cut - sc->seal_len;
}

void sb_trace_finalize(sb_result *r, sb_trace_scan *so_far) {
  sb_buf *b = &r->trace;
  bool cut_by_cap = b->truncated;
  scan own = {0}, *s = so_far ? so_far : &own;
  sb_trace_scan_more(s, b);
  scan sc = *s;
  if (!sc.reason[0] && cut_by_cap && sc.end_seen) /* bytes written after the tracer's end */
    snprintf(sc.reason, sizeof sc.reason, "bytes after the end (the byte cap was reached)");
  r->trace_seal_wanted = sc.seal_wanted;
  r->trace_sealed = false;
  if (sc.reason[0]) {
    /* Cut before the offending line, and before the tracer's end if
     * something followed it: one end, the supervisor's. */
    b->len = drop_seal(b, &sc, sc.end_seen ? sc.end_at : sc.keep);
    append_end(b, "tampered", NULL, sc.reason, sc.events, r);
    r->trace_status = "tampered";
  } else if (cut_by_cap) {
    b->len = drop_seal(b, &sc, sc.keep);
    append_end(b, "truncated", "bytes", NULL, sc.events, r);
    r->trace_status = "truncated";
  } else if (!sc.end_seen) {
    b->len = drop_seal(b, &sc, sc.keep);
    append_end(b, "crashed", NULL, "no end record: the tracer was killed, exited early or lost its descriptor",
               sc.events, r);
    r->trace_status = "crashed";
  } else {
    b->len = drop_seal(b, &sc, sc.keep);
    r->trace_status = sc.end_status;
    r->trace_sealed = sc.sealed;
  }
  if (b->data) b->data[b->len] = '\0';
}
