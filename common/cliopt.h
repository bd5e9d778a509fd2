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

typedef struct {
  const char *name; /* long name without "--"; NULL ends the table */
  int key;          /* what sbo_next returns: a letter (also the short option -X) or >= 256 */
  const char *arg;  /* the value's placeholder ("FILE"), NULL for a flag */
  const char *help; /* one line; NULL hides the option from the usage */
} sbo_opt;

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
} sbo_cmd;

#define SBO_MAX_OPTS 64

typedef struct {
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
/* A value that must be one of choices (NULL-terminated): 0 when it is, else
 * "bad value 'V' for --NAME: did you mean X? (one of: A, B, C)" as a usage error. */
int sbo_check_choice(const sbo_parser *p, int key, const char *val, const char *const *choices);
/* Report an error with exit status `status` as "NAME: message" on stderr or,
 * when json, {"error": message, "exit": status} on stdout; returns status. */
int sbo_fail(const char *name, bool json, int status, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Strict numbers for option values: 0 or -1. */
int sbo_parse_long(const char *s, long min, long max, long *out);
int sbo_parse_double(const char *s, double *out); /* > 0 and finite */

#endif
