/* One command-line parser for every surgebox command (prefix sbo_).
 *
 * A command declares its options as a table with help text; sbo_next walks
 * argv with glibc's getopt_long (options anywhere before "--", "--opt=value"
 * and "--opt value"), answers --help/-h with the generated usage on stdout,
 * and reports a mistake as one line on stderr (or, under --json, as
 * {"error": ..., "exit": 1} on stdout).
 *
 * Exit statuses, the same for every command (README's "EXIT STATUS"):
 * 0 success, 1 usage error, 2 daemon or sandbox failure. */
#ifndef SURGEBOX_CLIOPT_H
#define SURGEBOX_CLIOPT_H

#include <stdbool.h>
#include <stdio.h>

enum { SBO_EXIT_OK = 0, SBO_EXIT_USAGE = 1, SBO_EXIT_FAILURE = 2 };

#include <stddef.h>

/* Where a declared option's value goes (sbo_parse stores it into the
 * command's options struct, at .at, checked by its kind). SBO_KEY, the
 * default, declares nothing: the key is the command's own code's. */
typedef enum {
  SBO_KEY = 0, /* handed to the command's callback (sbo_parse) or returned (sbo_next) */
  SBO_SKIP,    /* accepted, nothing stored (a dispatcher's --benchmark) */
  SBO_STR,     /* const char *: the value as given */
  SBO_PATH,    /* const char *: a value that is not empty */
  SBO_INT,     /* int or long (by .size): an integer from .min to .max */
  SBO_DOUBLE,  /* double: a finite number above 0 (at most .max when it is set) */
  SBO_NONNEG,  /* double: a finite number from 0 (at most .max when it is set) */
  SBO_FLAG,    /* bool: true (no value) */
  SBO_CLEAR,   /* bool: false (no value; a --no-X) */
  SBO_LIST,    /* const char *[.max] at .at, its count (int or size_t, by .size) at .count_at: appended */
  SBO_WORD,    /* bool: true for .words[0], false for .words[1]; no other word */
  SBO_CALL,    /* .call(p, o, value, opts): the odd ones; -1 from it: "bad value" said for it */
} sbo_kind;

struct sbo_parser;
struct sbo_opt;
/* An SBO_CALL option: 0, the exit status of a mistake it reported, or -1
 * for a bad value it leaves to its caller to say (p may be NULL: sbo_check). */
typedef int (*sbo_call_fn)(const struct sbo_parser *p, const struct sbo_opt *o, const char *val, void *opts);

typedef struct sbo_opt {
  const char *name; /* long name without "--"; NULL ends the table */
  int key;          /* what sbo_next returns: a letter (also the short option -X) or >= 256;
                     * 0 in a declared row that nothing names by its key: one is made (SBO_AUTO_KEY + place) */
  const char *arg;  /* the value's placeholder ("FILE"), NULL for a flag */
  const char *help; /* one line; NULL hides the option from the usage */
  /* the declaration (sbo_parse): a row may stop after help (SBO_KEY) */
  sbo_kind kind;
  size_t at, count_at; /* offsets into the options struct (SBO_AT, SBO_LIST_AT) */
  unsigned char size;  /* sizeof the field (SBO_INT) or of the count (SBO_LIST) */
  long min, max;       /* SBO_INT's range; SBO_LIST's capacity */
  sbo_call_fn call;    /* SBO_CALL */
  const char *const *words; /* SBO_WORD: {yes, no} */
} sbo_opt;

/* The field F of options struct T: .at and .size of a declared row,
 * e.g. {"out", O_OUT, "FILE", "help", SBO_STR, SBO_AT(my_opts, out)}. */
#define SBO_AT(T, F) .at = offsetof(T, F), .size = sizeof(((T *)0)->F)
/* An array ARR of const char * in T and its count N (SBO_LIST). */
#define SBO_LIST_AT(T, ARR, N)                                                                                         \
  .at = offsetof(T, ARR), .count_at = offsetof(T, N), .size = sizeof(((T *)0)->N),                                     \
  .max = (long)(sizeof(((T *)0)->ARR) / sizeof(((T *)0)->ARR[0]))

typedef struct {
  const char *name;     /* "surgebox regen": prefixes every message */
  const char *synopsis; /* what follows the name in "usage:"; lines separated by '\n' */
  const char *about;    /* what the command does (may be several lines) */
  const sbo_opt *opts;
  const sbo_opt *more;  /* a second table (options several commands share), or NULL */
  const char *footer;   /* printed after the options, or NULL */
  bool in_order;        /* stop at the first positional (a command word follows) */
  /* option groups several commands share, declared once each (the daemon's
   * --socket/--no-autostart/--profile, --shard/--shards, ...): NULL-terminated */
  const sbo_opt *const *groups;
  bool terse; /* a declared bad value is said as "bad value 'V' for --NAME" alone (surgeboxd's words) */
} sbo_cmd;

#define SBO_MAX_OPTS 64
#define SBO_AUTO_KEY 0x10000

typedef struct sbo_parser {
  const sbo_cmd *cmd;
  int argc;    /* given */
  char **argv; /* argv[0] is the command word */
  int end;     /* argv[end] is the first "--" that ends the options, or argc */
  bool json;   /* --json was given: errors go to stdout as JSON */
  int status;  /* after SBO_STOP: the exit status (0 after --help) */
  /* after SBO_END: the positionals (permuted to the front) and what follows "--" */
  char **pos, **rest;
  int n_pos, n_rest;
  bool dashdash; /* a "--" was given */
  int opt_count_;
  char shortopts_[2 * SBO_MAX_OPTS + 4];
  void *longopts_;
} sbo_parser;

#define SBO_END 0
#define SBO_STOP (-1)

void sbo_init(sbo_parser *p, const sbo_cmd *cmd, int argc, char **argv);
/* The next option's key with its value in *val (NULL for a flag); SBO_END
 * once the options are done (see pos/rest); SBO_STOP after --help or a
 * mistake was reported: return p->status. */
int sbo_next(sbo_parser *p, const char **val);
void sbo_done(sbo_parser *p);

/* The generated usage. */
void sbo_usage(const sbo_cmd *cmd, FILE *f);

/* Report a mistake (one line, pointing at --help) and return SBO_EXIT_USAGE. */
int sbo_usage_error(const sbo_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* After SBO_END for a command that takes no positionals: 0, or a usage error
 * naming the first one. */
int sbo_no_args(const sbo_parser *p);
/* "bad value 'V' for --NAME" as a usage error. */
int sbo_bad_value(const sbo_parser *p, int key, const char *val);
int sbo_opt_bad_value(const sbo_parser *p, const sbo_opt *o, const char *val);
/* A value that must be one of choices (NULL-terminated): 0 when it is, else
 * "bad value 'V' for --NAME: did you mean X? (one of: A, B, C)" as a usage error. */
int sbo_check_choice(const sbo_parser *p, int key, const char *val, const char *const *choices);
/* Report an error with exit status `status` as "NAME: message" on stderr or,
 * when json, {"error": message, "exit": status} on stdout; returns status. */
int sbo_fail(const char *name, bool json, int status, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The option whose key is key (the command's tables, --help), or NULL. */
const sbo_opt *sbo_opt_of(const sbo_cmd *cmd, int key);

/* ---- declared options (cliopt_decl.c) ---- */
/* A key sbo_parse hands back: 0, or the exit status of a mistake it reported through p. */
typedef int (*sbo_key_fn)(sbo_parser *p, void *arg, int key, const char *val);
/* The parse loop, written once: sbo_init, then each option of the command's
 * own tables (opts, more) stored where it declares into opts (sbo_store),
 * and each SBO_KEY one (the shared groups') handed to key_fn(p, arg, ...)
 * (NULL: ignored). 0 once the options ended (p->pos, p->rest are set),
 * -1 after --help, else the exit status of a mistake. The caller checks
 * the positionals and its own rules, then calls sbo_done. */
int sbo_parse(sbo_parser *p, const sbo_cmd *cmd, int argc, char **argv, void *opts, sbo_key_fn key_fn, void *arg);
/* One declared option's value into opts: 0, or a usage error said through
 * p ("bad value 'x' for --repeat: an integer from 1 to 1000 (see ... --help)"). */
int sbo_store(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts);

/* The same without a word said (p may be NULL; a config file's keys):
 * 0, or -1 for a bad value or a full list. */
int sbo_check(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts);

/* Strict numbers for option values: 0 or -1. */
int sbo_parse_long(const char *s, long min, long max, long *out);
int sbo_parse_double(const char *s, double *out); /* > 0 and finite */

#endif
