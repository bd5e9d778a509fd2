/* A json.loads work-alike (CPython's C scanner rules) producing json-c values. */
#include "eval_pyjson.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval_unicode.h"

#define MAX_DEPTH 900 /* Python raises RecursionError near here */

typedef struct {
  const char *s;
  size_t n, i;
  int depth;
} scanner;

static int ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static void skip_ws(scanner *p) {
  while (p->i < p->n && ws(p->s[p->i])) p->i++;
}
static int lit(scanner *p, const char *w) {
  size_t m = strlen(w);
  if (p->n - p->i < m || memcmp(p->s + p->i, w, m) != 0) return 0;
  p->i += m;
  return 1;
}
static int isdig(scanner *p, size_t i) { return i < p->n && p->s[i] >= '0' && p->s[i] <= '9'; }

static int hex4(scanner *p, size_t at, uint32_t *out) {
  if (p->n - at < 4) return -1;
  uint32_t v = 0;
  for (size_t k = 0; k < 4; k++) {
    char c = p->s[at + k];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v << 4 | (uint32_t)d;
  }
  *out = v;
  return 0;
}

/* Code point as UTF-8; surrogates in three bytes, as Python keeps them. */
static void put_cp(char *o, size_t *w, uint32_t c) {
  if (c < 0x80) {
    o[(*w)++] = (char)c;
  } else if (c < 0x800) {
    o[(*w)++] = (char)(0xC0 | (c >> 6));
    o[(*w)++] = (char)(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    o[(*w)++] = (char)(0xE0 | (c >> 12));
    o[(*w)++] = (char)(0x80 | ((c >> 6) & 0x3F));
    o[(*w)++] = (char)(0x80 | (c & 0x3F));
  } else {
    o[(*w)++] = (char)(0xF0 | (c >> 18));
    o[(*w)++] = (char)(0x80 | ((c >> 12) & 0x3F));
    o[(*w)++] = (char)(0x80 | ((c >> 6) & 0x3F));
    o[(*w)++] = (char)(0x80 | (c & 0x3F));
  }
}

/* p->i is just past the opening quote. */
static int scan_string(scanner *p, char **out, size_t *out_len) {
  char *o = sbe_xmalloc(p->n - p->i + 1);
  size_t w = 0;
  for (;;) {
    if (p->i >= p->n) goto bad; /* unterminated */
    unsigned char c = (unsigned char)p->s[p->i++];
    if (c == '"') break;
    if (c < 0x20) goto bad; /* strict: no raw control characters */
    if (c != '\\') {
      o[w++] = (char)c;
      continue;
    }
    if (p->i >= p->n) goto bad;
    char e = p->s[p->i++];
    switch (e) {
      case '"': o[w++] = '"'; break;
      case '\\': o[w++] = '\\'; break;
      case '/': o[w++] = '/'; break;
      case 'b': o[w++] = '\b'; break;
      case 'f': o[w++] = '\f'; break;
      case 'n': o[w++] = '\n'; break;
      case 'r': o[w++] = '\r'; break;
      case 't': o[w++] = '\t'; break;
      case 'u': {
        uint32_t u, u2;
        if (hex4(p, p->i, &u) != 0) goto bad;
        p->i += 4;
        /* A high surrogate followed by \u: that escape must be valid hex, and
         * joins when it is a low surrogate. */
        if (u >= 0xD800 && u <= 0xDBFF && p->n - p->i >= 6 && p->s[p->i] == '\\' && p->s[p->i + 1] == 'u') {
          if (hex4(p, p->i + 2, &u2) != 0) goto bad;
          if (u2 >= 0xDC00 && u2 <= 0xDFFF) {
            u = 0x10000 + ((u - 0xD800) << 10) + (u2 - 0xDC00);
            p->i += 6;
          }
        }
        put_cp(o, &w, u);
        break;
      }
      default: goto bad;
    }
  }
  o[w] = '\0';
  *out = o;
  *out_len = w;
  return 0;
bad:
  free(o);
  return -1;
}

/* CPython's _match_number_unicode; p->i at '-' or a digit. */
static int scan_number(scanner *p, json_object **out) {
  size_t start = p->i, i = p->i;
  int is_float = 0;
  if (i < p->n && p->s[i] == '-') i++;
  if (isdig(p, i) && p->s[i] != '0') {
    while (isdig(p, i)) i++;
  } else if (i < p->n && p->s[i] == '0') {
    i++;
  } else {
    return -1;
  }
  if (i < p->n && p->s[i] == '.' && isdig(p, i + 1)) {
    is_float = 1;
    i += 2;
    while (isdig(p, i)) i++;
  }
  if (i < p->n && (p->s[i] == 'e' || p->s[i] == 'E')) {
    size_t e = i++;
    if (i < p->n && (p->s[i] == '-' || p->s[i] == '+')) i++;
    size_t d = i;
    while (isdig(p, i)) i++;
    if (i > d) is_float = 1;
    else i = e; /* backtrack: "1e" is the number 1 followed by junk */
  }
  char *num = sbe_xstrndup(p->s + start, i - start);
  p->i = i;
  if (!is_float) {
    errno = 0;
    long long v = strtoll(num, NULL, 10);
    if (errno != ERANGE) {
      *out = json_object_new_int64(v);
      free(num);
      return 0;
    }
    /* Python ints are unbounded; beyond int64 we keep the nearest double. */
  }
  *out = json_object_new_double(strtod(num, NULL));
  free(num);
  return 0;
}

static int scan_value(scanner *p, json_object **out);

/* c next (then taken): true. */
static bool eat(scanner *p, char c) {
  if (p->i >= p->n || p->s[p->i] != c) return false;
  p->i++;
  return true;
}

/* After a container's member: 1 at its closing character, 0 past a comma
 * (another member follows), -1 at anything else. */
static int after_member(scanner *p, char close) {
  skip_ws(p);
  if (eat(p, close)) return 1;
  if (!eat(p, ',')) return -1;
  skip_ws(p);
  return 0;
}

/* A container c (taken over) up to its close: member(p, c) for each member,
 * commas between; *out = c, or -1 with c freed. */
static int scan_container(scanner *p, json_object *c, char close, int (*member)(scanner *p, json_object *c),
                          json_object **out) {
  skip_ws(p);
  int end = eat(p, close);
  while (!end) {
    if (member(p, c) != 0 || (end = after_member(p, close)) < 0) {
      json_object_put(c);
      return -1;
    }
  }
  *out = c;
  return 0;
}

static int array_member(scanner *p, json_object *arr) {
  json_object *v;
  if (scan_value(p, &v) != 0) return -1;
  json_object_array_add(arr, v);
  return 0;
}

static int object_member(scanner *p, json_object *obj) {
  char *key;
  size_t klen;
  json_object *v;
  if (!eat(p, '"')) return -1; /* also rejects a trailing comma */
  if (scan_string(p, &key, &klen) != 0) return -1;
  skip_ws(p);
  int rc = -1;
  if (eat(p, ':')) {
    skip_ws(p);
    if ((rc = scan_value(p, &v)) == 0) json_object_object_add(obj, key, v); /* a repeated key: the last one wins */
  }
  free(key);
  return rc;
}

static int scan_array(scanner *p, json_object **out) {
  return scan_container(p, json_object_new_array(), ']', array_member, out);
}

static int scan_object(scanner *p, json_object **out) {
  return scan_container(p, json_object_new_object(), '}', object_member, out);
}

static int scan_value(scanner *p, json_object **out) {
  if (p->i >= p->n) return -1;
  char c = p->s[p->i];
  *out = NULL;
  switch (c) {
    case '"': {
      char *s;
      size_t len;
      p->i++;
      if (scan_string(p, &s, &len) != 0) return -1;
      *out = json_object_new_string_len(s, (int)len);
      free(s);
      return 0;
    }
    case '{':
    case '[': {
      if (++p->depth > MAX_DEPTH) return -1;
      p->i++;
      int r = c == '{' ? scan_object(p, out) : scan_array(p, out);
      p->depth--;
      return r;
    }
    case 'n': return lit(p, "null") ? 0 : -1;
    case 't': return lit(p, "true") ? (*out = json_object_new_boolean(1), 0) : -1;
    case 'f': return lit(p, "false") ? (*out = json_object_new_boolean(0), 0) : -1;
    case 'N': return lit(p, "NaN") ? (*out = json_object_new_double(NAN), 0) : -1;
    case 'I': return lit(p, "Infinity") ? (*out = json_object_new_double(INFINITY), 0) : -1;
    case '-':
      if (lit(p, "-Infinity")) return *out = json_object_new_double(-INFINITY), 0;
      return scan_number(p, out);
    default: return scan_number(p, out);
  }
}

int sbe_pyjson_loads(const char *text, size_t n, json_object **out) {
  scanner p = {text, n, 0, 0};
  *out = NULL;
  if (!text) return -1; /* json.loads(None) raises TypeError */
  skip_ws(&p);
  json_object *v;
  if (scan_value(&p, &v) != 0) return -1;
  skip_ws(&p);
  if (p.i != p.n) { /* "Extra data" */
    json_object_put(v);
    return -1;
  }
  *out = v;
  return 0;
}

int sbe_py_truthy(json_object *v) {
  switch (json_object_get_type(v)) {
    case json_type_null: return 0;
    case json_type_boolean: return json_object_get_boolean(v);
    case json_type_int: return json_object_get_int64(v) != 0;
    case json_type_double: return json_object_get_double(v) != 0.0; /* NaN is truthy */
    case json_type_string: return json_object_get_string_len(v) > 0;
    case json_type_array: return json_object_array_length(v) > 0;
    case json_type_object: return json_object_object_length(v) > 0;
  }
  return 0;
}

static int numeric(json_object *v) {
  json_type t = json_object_get_type(v);
  return t == json_type_boolean || t == json_type_int || t == json_type_double;
}

static int num_equal(json_object *a, json_object *b) {
  int da = json_object_get_type(a) == json_type_double, db = json_object_get_type(b) == json_type_double;
  if (!da && !db) return json_object_get_int64(a) == json_object_get_int64(b); /* bools read as 0/1 */
  if (da && db) return json_object_get_double(a) == json_object_get_double(b);
  double d = json_object_get_double(da ? a : b);
  int64_t i = json_object_get_int64(da ? b : a);
  /* Python compares int and float exactly. */
  if (!(d == floor(d)) || d < -9223372036854775808.0 || d >= 9223372036854775808.0) return 0;
  return (int64_t)d == i;
}

int sbe_py_equal(json_object *a, json_object *b) {
  if (!a || !b) return !a && !b;
  if (numeric(a) && numeric(b)) return num_equal(a, b);
  json_type t = json_object_get_type(a);
  if (t != json_object_get_type(b)) return 0;
  if (t == json_type_string) {
    int la = json_object_get_string_len(a);
    return la == json_object_get_string_len(b) &&
           memcmp(json_object_get_string(a), json_object_get_string(b), (size_t)la) == 0;
  }
  if (t == json_type_array) {
    size_t n = json_object_array_length(a);
    if (n != json_object_array_length(b)) return 0;
    for (size_t i = 0; i < n; i++)
      if (!sbe_py_equal(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i))) return 0;
    return 1;
  }
  if (t == json_type_object) {
    if (json_object_object_length(a) != json_object_object_length(b)) return 0;
    json_object_object_foreach(a, key, va) {
      json_object *vb;
      if (!json_object_object_get_ex(b, key, &vb) || !sbe_py_equal(va, vb)) return 0;
    }
    return 1;
  }
  return 0;
}

int sbe_py_hashable(json_object *v) {
  json_type t = json_object_get_type(v);
  return t != json_type_array && t != json_type_object;
}
