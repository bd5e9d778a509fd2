/* The shared command-line parser: a table of options -> getopt_long. */
#include "cliopt.h"
#include "nearest.h"

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const sbo_opt help_opt = {"help", 'h', NULL, "print this help and exit"};

/* The i-th option of the command's tables (help last); NULL past the end. */
static const sbo_opt *nth(const sbo_cmd *c, int i) {
  for (const sbo_opt *t = c->opts; t && t->name; t++)
    if (i-- == 0) return t;
  for (const sbo_opt *t = c->more; t && t->name; t++)
    if (i-- == 0) return t;
  for (const sbo_opt *const *g = c->groups; g && *g; g++)
    for (const sbo_opt *t = *g; t->name; t++)
      if (i-- == 0) return t;
  return i == 0 ? &help_opt : NULL;
}

/* The i-th row's key: its own, or (0: a declared row needs none) one made from its place. */
static int key_of(const sbo_opt *o, int i) { return o->key ? o->key : SBO_AUTO_KEY + i; }

static const sbo_opt *by_key(const sbo_cmd *c, int key) {
  const sbo_opt *o;
  for (int i = 0; (o = nth(c, i)); i++)
    if (key_of(o, i) == key) return o;
  return NULL;
}

const sbo_opt *sbo_opt_of(const sbo_cmd *cmd, int key) { return by_key(cmd, key); }

/* "--name" or a unique prefix of one (as getopt_long accepts). */
static const sbo_opt *by_long(const sbo_cmd *c, const char *s, size_t len) {
  const sbo_opt *o, *hit = NULL;
  int n = 0;
  for (int i = 0; (o = nth(c, i)); i++) {
    if (strlen(o->name) == len && !strncmp(o->name, s, len)) return o;
    if (!strncmp(o->name, s, len)) hit = o, n++;
  }
  return n == 1 ? hit : NULL;
}

/* Where the options end: the first "--" that is not an option's value (or,
 * in order, the first positional). getopt is then run on argv[0..end) so
 * that "--" and what follows keep their places. */
static int options_end(const sbo_cmd *c, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) return i;
    if (a[0] != '-' || !a[1]) {
      if (c->in_order) return argc;
      continue;
    }
    if (a[1] == '-') {
      const char *eq = strchr(a + 2, '=');
      const sbo_opt *o = by_long(c, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
      if (o && o->arg && !eq) i++;
      continue;
    }
    for (const char *s = a + 1; *s; s++) {
      const sbo_opt *o = by_key(c, (unsigned char)*s);
      if (o && o->arg) {
        if (!s[1]) i++;
        break;
      }
    }
  }
  return argc;
}

void sbo_init(sbo_parser *p, const sbo_cmd *cmd, int argc, char **argv) {
  memset(p, 0, sizeof *p);
  p->cmd = cmd;
  p->argc = argc;
  p->argv = argv;
  p->end = options_end(cmd, argc, argv);
  bool has_json = false;
  const sbo_opt *o;
  for (int i = 0; (o = nth(cmd, i)); i++) has_json |= !strcmp(o->name, "json");
  for (int i = 1; has_json && i < p->end; i++) p->json |= !strcmp(argv[i], "--json");
  struct option *lo = calloc(SBO_MAX_OPTS + 1, sizeof *lo);
  p->longopts_ = lo;
  char *so = p->shortopts_;
  if (cmd->in_order) *so++ = '+';
  *so++ = ':'; /* a missing value returns ':' */
  int n = 0;
  for (int i = 0; lo && (o = nth(cmd, i)) && n < SBO_MAX_OPTS; i++, n++) {
    lo[n] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL, key_of(o, i)};
    if (o->key > 0 && o->key < 128) {
      *so++ = (char)o->key;
      if (o->arg) *so++ = ':';
    }
  }
  *so = '\0';
  p->opt_count_ = n;
  optind = 0; /* 0: glibc reinitialises (a new argv, permutation state reset) */
  opterr = 0;
}

void sbo_done(sbo_parser *p) {
  free(p->longopts_);
  p->longopts_ = NULL;
}

/* The command's long option nearest to a mistyped name (n bytes), or NULL. */
static const char *nearest_option(const sbo_cmd *c, const char *name, size_t n) {
  char word[80];
  const char *names[SBO_MAX_OPTS];
  size_t k = 0;
  const sbo_opt *o;
  if (n >= sizeof word) return NULL;
  memcpy(word, name, n);
  word[n] = '\0';
  for (int i = 0; (o = nth(c, i)) && k < SBO_MAX_OPTS; i++) names[k++] = o->name;
  return sbu_nearest(word, names, k);
}

int sbo_next(sbo_parser *p, const char **val) {
  *val = NULL;
  if (!p->longopts_) {
    p->status = sbo_fail(p->cmd->name, p->json, SBO_EXIT_FAILURE, "out of memory");
    return SBO_STOP;
  }
  int c = getopt_long(p->end, p->argv, p->shortopts_, p->longopts_, NULL);
  if (c == -1) {
    p->pos = p->argv + optind;
    p->n_pos = p->end - optind;
    p->dashdash = p->end < p->argc;
    p->rest = p->argv + (p->dashdash ? p->end + 1 : p->argc);
    p->n_rest = p->dashdash ? p->argc - p->end - 1 : 0;
    return SBO_END;
  }
  const char *bad = optind > 0 && optind <= p->end ? p->argv[optind - 1] : "?";
  if (c == ':') {
    const sbo_opt *o = by_key(p->cmd, optopt);
    if (o && optopt >= 128) p->status = sbo_usage_error(p, "option '--%s' needs a value (%s)", o->name, o->arg);
    else p->status = sbo_usage_error(p, "option '%s' needs a value", bad);
    return SBO_STOP;
  }
  if (c == '?') {
    const sbo_opt *o = optopt ? by_key(p->cmd, optopt) : NULL;
    if (o && !o->arg && strncmp(bad, "--", 2) == 0) p->status = sbo_usage_error(p, "option '--%s' takes no value", o->name);
    else if (optopt && optopt < 128) p->status = sbo_usage_error(p, "unknown option '-%c'", optopt);
    else {
      const char *eq = strchr(bad, '=');
      int len = eq ? (int)(eq - bad) : (int)strlen(bad);
      const char *near = strncmp(bad, "--", 2) == 0 ? nearest_option(p->cmd, bad + 2, (size_t)len - 2) : NULL;
      if (near) p->status = sbo_usage_error(p, "unknown option '%.*s': did you mean --%s?", len, bad, near);
      else p->status = sbo_usage_error(p, "unknown option '%.*s'", len, bad);
    }
    return SBO_STOP;
  }
  if (c == 'h') {
    sbo_usage(p->cmd, stdout);
    p->status = SBO_EXIT_OK;
    return SBO_STOP;
  }
  *val = optarg;
  return c;
}

void sbo_usage(const sbo_cmd *c, FILE *f) {
  const char *syn = c->synopsis ? c->synopsis : "[options]";
  fprintf(f, "usage: ");
  for (bool first = true; *syn; first = false) {
    size_t n = strcspn(syn, "\n");
    fprintf(f, "%s%s %.*s\n", first ? "" : "       ", c->name, (int)n, syn);
    syn += n + (syn[n] == '\n');
  }
  if (c->about) fprintf(f, "%s\n", c->about);
  fprintf(f, "\noptions:\n");
  const sbo_opt *o;
  for (int i = 0; (o = nth(c, i)); i++) {
    if (!o->help) continue;
    char head[96];
    int n = o->key > 0 && o->key < 128 ? snprintf(head, sizeof head, "-%c, --%s", o->key, o->name)
                                       : snprintf(head, sizeof head, "    --%s", o->name);
    if (o->arg && n > 0 && (size_t)n < sizeof head) snprintf(head + n, sizeof head - (size_t)n, " %s", o->arg);
    if (strlen(head) <= 26) fprintf(f, "  %-26s %s\n", head, o->help);
    else fprintf(f, "  %s\n  %-26s %s\n", head, "", o->help);
  }
  if (c->footer) fprintf(f, "\n%s", c->footer);
}

__attribute__((format(printf, 5, 0))) static int vfail(const char *name, bool json, int status, const char *hint, const char *fmt, va_list ap) {
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (json) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "error", json_object_new_string(msg));
    json_object_object_add(o, "exit", json_object_new_int(status));
    printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    fflush(stdout);
  } else {
    fprintf(stderr, "%s: %s%s\n", name, msg, hint ? hint : "");
  }
  return status;
}

int sbo_usage_error(const sbo_parser *p, const char *fmt, ...) {
  char hint[256];
  snprintf(hint, sizeof hint, " (see %s --help)", p->cmd->name);
  va_list ap;
  va_start(ap, fmt);
  int rc = vfail(p->cmd->name, p->json, SBO_EXIT_USAGE, hint, fmt, ap);
  va_end(ap);
  return rc;
}

int sbo_no_args(const sbo_parser *p) {
  if (p->n_pos) return sbo_usage_error(p, "unexpected argument '%s'", p->pos[0]);
  if (p->dashdash) return sbo_usage_error(p, "unexpected '--'");
  return 0;
}

int sbo_bad_value(const sbo_parser *p, int key, const char *val) {
  const sbo_opt *o = by_key(p->cmd, key);
  return sbo_usage_error(p, "bad value '%s' for --%s", val ? val : "", o ? o->name : "?");
}

int sbo_opt_bad_value(const sbo_parser *p, const sbo_opt *o, const char *val) {
  return sbo_usage_error(p, "bad value '%s' for --%s", val ? val : "", o->name);
}

int sbo_check_choice(const sbo_parser *p, int key, const char *val, const char *const *choices) {
  size_t n = 0;
  char all[512] = "";
  for (; choices[n]; n++) {
    if (val && !strcmp(val, choices[n])) return 0;
    snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", n ? ", " : "", choices[n]);
  }
  const sbo_opt *o = by_key(p->cmd, key);
  const char *near = val ? sbu_nearest(val, choices, n) : NULL;
  if (near)
    return sbo_usage_error(p, "bad value '%s' for --%s: did you mean %s? (one of: %s)", val, o ? o->name : "?", near, all);
  return sbo_usage_error(p, "bad value '%s' for --%s (one of: %s)", val ? val : "", o ? o->name : "?", all);
}

int sbo_fail(const char *name, bool json, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = vfail(name, json, status, NULL, fmt, ap);
  va_end(ap);
  return rc;
}

int sbo_parse_long(const char *s, long min, long max, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < min || v > max) return -1;
  *out = v;
  return 0;
}

int sbo_parse_double(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v > 0) || !isfinite(v)) return -1;
  *out = v;
  return 0;
}
