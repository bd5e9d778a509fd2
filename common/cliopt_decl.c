/* Declared options: the value stored where the option's row says, checked
 * by its kind, and the parse loop every command shares (issue 40). */
#include "cliopt.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Is o in the command's own tables (opts, more), where declarations point
 * into the command's options struct? The shared groups' rows are SBO_KEY. */
static bool own(const sbo_cmd *c, const sbo_opt *o) {
  for (const sbo_opt *t = c->opts; t && t->name; t++)
    if (t == o) return true;
  for (const sbo_opt *t = c->more; t && t->name; t++)
    if (t == o) return true;
  return false;
}

static int bad(const sbo_parser *p, const sbo_opt *o, const char *val, const char *what) {
  if (!what || p->cmd->terse) return sbo_opt_bad_value(p, o, val);
  return sbo_usage_error(p, "bad value '%s' for --%s: %s", val ? val : "", o->name, what);
}

/* An int or a long field (by its size), read and written. */
static long get_integer(const char *field, unsigned size) {
  int i;
  long n;
  if (size == sizeof i) return memcpy(&i, field, sizeof i), i;
  return memcpy(&n, field, sizeof n), n;
}

static void put_integer(char *field, unsigned size, long n) {
  int i = (int)n;
  if (size == sizeof i) memcpy(field, &i, sizeof i);
  else memcpy(field, &n, sizeof n);
}

/* A double: finite, above 0 (SBO_DOUBLE) or from 0 (SBO_NONNEG), at most .max when set. */
static bool read_double(const sbo_opt *o, const char *val, double *d) {
  char *end;
  errno = 0;
  *d = val ? strtod(val, &end) : 0;
  bool in = val && !errno && end != val && !*end && isfinite(*d) && (o->kind == SBO_NONNEG ? *d >= 0 : *d > 0);
  return in && (!o->max || *d <= (double)o->max);
}

enum { STORED = 0, BAD = -1, FULL = -2 };

/* o's value into opts: STORED, BAD (*what says what was wanted), FULL (a
 * list at its capacity), or an SBO_CALL's own answer. */
static int put(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts, char *what, size_t cap) {
  char *field = (char *)opts + o->at;
  bool yes = true, no = false;
  long n;
  double d;
  switch (o->kind) {
  case SBO_KEY:
  case SBO_SKIP: return STORED;
  case SBO_PATH:
    if (!val || !*val) return snprintf(what, cap, "give a path, not an empty word"), BAD;
    /* fall through */
  case SBO_STR: memcpy(field, &val, sizeof val); return STORED;
  case SBO_INT:
    if (val && sbo_parse_long(val, o->min, o->max, &n) == 0) {
      put_integer(field, o->size, n);
      return STORED;
    }
    if (o->max == LONG_MAX) snprintf(what, cap, "give an integer of at least %ld", o->min);
    else snprintf(what, cap, "give an integer from %ld to %ld", o->min, o->max);
    return BAD;
  case SBO_DOUBLE:
  case SBO_NONNEG:
    if (!read_double(o, val, &d)) {
      int w = snprintf(what, cap, "give a number %s 0", o->kind == SBO_NONNEG ? "from" : "above");
      if (o->max && w > 0 && (size_t)w < cap)
        snprintf(what + w, cap - (size_t)w, o->kind == SBO_NONNEG ? " to %ld" : ", at most %ld", o->max);
      return BAD;
    }
    memcpy(field, &d, sizeof d);
    return STORED;
  case SBO_FLAG: memcpy(field, &yes, sizeof yes); return STORED;
  case SBO_CLEAR: memcpy(field, &no, sizeof no); return STORED;
  case SBO_WORD:
    if (!val || (strcmp(val, o->words[0]) && strcmp(val, o->words[1])))
      return snprintf(what, cap, "give %s or %s", o->words[0], o->words[1]), BAD;
    memcpy(field, strcmp(val, o->words[0]) ? &no : &yes, sizeof yes);
    return STORED;
  case SBO_LIST:
    n = get_integer((char *)opts + o->count_at, o->size);
    if (n >= o->max) return FULL;
    memcpy(field + (size_t)n * sizeof val, &val, sizeof val);
    put_integer((char *)opts + o->count_at, o->size, n + 1);
    return STORED;
  case SBO_CALL: return o->call(p, o, val, opts);
  }
  return STORED;
}

int sbo_store(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  char what[96] = "";
  int rc = put(p, o, val, opts, what, sizeof what);
  if (rc == FULL) return sbo_usage_error(p, "--%s given more than %ld times", o->name, o->max);
  if (rc == BAD) return bad(p, o, val, *what ? what : NULL);
  return rc;
}

int sbo_check(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  char what[96];
  return put(p, o, val, opts, what, sizeof what) == STORED ? 0 : -1;
}

int sbo_parse(sbo_parser *p, const sbo_cmd *cmd, int argc, char **argv, void *opts, sbo_key_fn key_fn, void *arg) {
  sbo_init(p, cmd, argc, argv);
  int k = SBO_END, rc = 0;
  const char *v;
  while (rc == 0 && (k = sbo_next(p, &v)) > 0) {
    const sbo_opt *o = sbo_opt_of(cmd, k);
    if (o && o->kind != SBO_KEY && own(cmd, o)) rc = sbo_store(p, o, v, opts);
    else if (key_fn) rc = key_fn(p, arg, k, v);
  }
  if (rc == 0 && k == SBO_STOP) rc = p->status ? p->status : -1;
  return rc;
}
