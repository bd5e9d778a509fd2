/* Template expansion for toolchain files. */
#include "toolchain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *s;
  size_t len, cap;
} sbuf;

static void put(sbuf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = (b->cap ? b->cap : 64);
    while (cap < b->len + n + 1) cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) abort(); /* out of memory while expanding a short template */
    b->s = p;
    b->cap = cap;
  }
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

static const char *var(const sbt_vars *v, const char *name, size_t n) {
#define VAR(key, field) \
  if (n == sizeof key - 1 && memcmp(name, key, n) == 0) return v->field;
  VAR("bin", bin)
  VAR("bin_real", bin_real)
  VAR("bin_dir", bin_dir)
  VAR("main", main)
  VAR("main_stem", main_stem)
  VAR("version", version)
  VAR("value", value)
  VAR("libraries", libraries)
#undef VAR
  return NULL;
}

/* What a placeholder stands for, put into b; ph is the whole placeholder
 * ("{name}", "${name:-default}"), len bytes with its braces. */
typedef void put_value(sbuf *b, const char *ph, size_t len, const void *ctx);

/* s with each placeholder (from opener to the next '}') replaced by what
 * value puts for it; text after an opener with no '}' is copied as is. */
static char *expand(const char *s, const char *opener, put_value *value, const void *ctx) {
  sbuf b = {0};
  put(&b, "", 0);
  for (const char *p = s; *p;) {
    const char *open = strstr(p, opener);
    const char *close = open ? strchr(open, '}') : NULL;
    if (!open || !close) {
      put(&b, p, strlen(p));
      break;
    }
    put(&b, p, (size_t)(open - p));
    value(&b, open, (size_t)(close - open + 1), ctx);
    p = close + 1;
  }
  return b.s;
}

/* "{name}": the variable's value; an unknown name is kept as written. */
static void put_var(sbuf *b, const char *ph, size_t len, const void *ctx) {
  const char *val = var(ctx, ph + 1, len - 2);
  if (val) put(b, val, strlen(val));
  else put(b, ph, len);
}

char *sbt_expand_string(const char *tmpl, const sbt_vars *v) {
  return expand(tmpl, "{", put_var, v);
}

/* "${NAME:-default}": the environment's NAME when set and not empty, else
 * the default ("" without one). */
static void put_env(sbuf *b, const char *ph, size_t len, const void *ctx) {
  (void)ctx;
  char name[256];
  size_t n = len - 3;
  snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), ph + 2);
  char *dflt = strstr(name, ":-");
  if (dflt) {
    *dflt = '\0';
    dflt += 2;
  }
  const char *val = getenv(name);
  if (!val || !*val) val = dflt ? dflt : "";
  put(b, val, strlen(val));
}

char *sbt_expand_env(const char *s) {
  return expand(s, "${", put_env, NULL);
}

char *sbt_version_part(const char *version, int parts) {
  size_t n = 0;
  int seen = 0;
  while (version[n]) {
    if (version[n] == '.' && ++seen == parts) break;
    n++;
  }
  char *out = malloc(n + 1);
  if (out) {
    memcpy(out, version, n);
    out[n] = '\0';
  }
  return out;
}
