/* Declared options: the value stored where the option's row says, checked
 * by its kind, and the parse loop every command shares (issue 40). */
#include "cliopt.h"

#include <stdbool.h>
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

static int store_int(const sbo_parser *p, const sbo_opt *o, const char *val, char *field) {
  long n;
  if (sbo_parse_long(val, o->min, o->max, &n) < 0) {
    char what[96];
    snprintf(what, sizeof what, "give an integer from %ld to %ld", o->min, o->max);
    return bad(p, o, val, what);
  }
  put_integer(field, o->size, n);
  return 0;
}

static int append(const sbo_parser *p, const sbo_opt *o, const char *val, char *base) {
  long n = get_integer(base + o->count_at, o->size);
  if (n >= o->max) return sbo_usage_error(p, "--%s given more than %ld times", o->name, o->max);
  memcpy(base + o->at + (size_t)n * sizeof val, &val, sizeof val);
  put_integer(base + o->count_at, o->size, n + 1);
  return 0;
}

int sbo_store(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  char *field = (char *)opts + o->at;
  bool yes = true, no = false;
  double d;
  switch (o->kind) {
  case SBO_KEY:
  case SBO_SKIP: return 0;
  case SBO_PATH:
    if (!val || !*val) return bad(p, o, val, "give a path, not an empty word");
    /* fall through */
  case SBO_STR: memcpy(field, &val, sizeof val); return 0;
  case SBO_INT: return store_int(p, o, val, field);
  case SBO_DOUBLE:
    if (sbo_parse_double(val, &d) < 0) return bad(p, o, val, "give a number above 0");
    memcpy(field, &d, sizeof d);
    return 0;
  case SBO_FLAG: memcpy(field, &yes, sizeof yes); return 0;
  case SBO_CLEAR: memcpy(field, &no, sizeof no); return 0;
  case SBO_LIST: return append(p, o, val, opts);
  case SBO_CALL: return o->call(p, o, val, opts);
  }
  return 0;
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
