/* common/cliopt_decl.c: declared options stored where their rows say, each
 * kind's checks and its one-line error (issue 40). Expected values by hand. */
#include "../check.h"
#include "cliopt.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  const char *out, *data;
  int repeat;
  long max_bytes;
  double limit, grace, wait;
  bool warm, mimic, on;
  const char *verify[2];
  size_t n_verify;
  const char *files[3];
  int n_files;
  int mode_calls;
  const char *mode;
} opts;

/* SBO_CALL: only "a" or "b", counted */
static int set_mode(const sbo_parser *p, const sbo_opt *o, const char *val, void *arg) {
  opts *x = arg;
  if (strcmp(val, "a") && strcmp(val, "b")) return sbo_usage_error(p, "--%s takes a or b", o->name);
  x->mode = val;
  x->mode_calls++;
  return 0;
}

/* SBO_CALL: "x" only; -1 leaves the words to the parser */
static int pick(const sbo_parser *p, const sbo_opt *o, const char *val, void *arg) {
  (void)p, (void)o, (void)arg;
  return strcmp(val, "x") ? -1 : 0;
}

enum { O_OUT = 256, O_DATA, O_REPEAT, O_BYTES, O_LIMIT, O_WARM, O_NO_MIMIC, O_VERIFY, O_FILE, O_MODE, O_BENCH, O_OWN };
static const sbo_opt table[] = {
    {"out", O_OUT, "FILE", "where", SBO_STR, SBO_AT(opts, out)},
    {"data", O_DATA, "DIR", "the data", SBO_PATH, SBO_AT(opts, data)},
    {"repeat", O_REPEAT, "K", "times", SBO_INT, SBO_AT(opts, repeat), .min = 1, .max = 1000},
    {"max-bytes", O_BYTES, "N", "bytes", SBO_INT, SBO_AT(opts, max_bytes), .min = 16, .max = 1L << 40},
    {"time-limit", 0, "S", "seconds", SBO_DOUBLE, SBO_AT(opts, limit)},
    {"warm", 0, NULL, "warm", SBO_FLAG, SBO_AT(opts, warm)},
    {"no-mimic", O_NO_MIMIC, NULL, "no mimic", SBO_CLEAR, SBO_AT(opts, mimic)},
    {"verify", O_VERIFY, "FILE", "repeatable", SBO_LIST, SBO_LIST_AT(opts, verify, n_verify)},
    {"file", 0, "F", "repeatable", SBO_LIST, SBO_LIST_AT(opts, files, n_files)},
    {"mode", O_MODE, "a|b", "a mode", SBO_CALL, .call = set_mode},
    {"grace", 0, "S", "from 0", SBO_NONNEG, SBO_AT(opts, grace), .max = 100},
    {"wait", 0, "S", "above 0, at most 9", SBO_DOUBLE, SBO_AT(opts, wait), .max = 9},
    {"pick", 0, "x", "x only", SBO_CALL, .call = pick},
    {"switch", 0, "on|off", "a word", SBO_WORD, SBO_AT(opts, on), .words = (const char *const[]){"on", "off"}},
    {"big", 0, "N", "from 2, no bound", SBO_INT, SBO_AT(opts, max_bytes), .min = 2, .max = LONG_MAX},
    {"benchmark", O_BENCH, "x", NULL, SBO_SKIP},
    {"own", O_OWN, "V", "the command's own code's"},
    {NULL, 0, NULL, NULL}};
static const sbo_cmd cmd = {"surgebox t", "[options]", "a test", table, NULL, NULL, false, NULL};
/* the same table in surgeboxd's terse words */
static const sbo_cmd terse = {"surgebox t", "[options]", "a test", table, NULL, NULL, false, NULL, .terse = true};
static const sbo_cmd *use = &cmd;

typedef struct {
  opts o;
  int rc;
  char err[512]; /* what was said on stderr */
  const char *own; /* the SBO_KEY option, through the callback */
  int keys;        /* callback calls */
} parsed;

static int on_key(sbo_parser *p, void *arg, int key, const char *val) {
  parsed *r = arg;
  r->keys++;
  if (key == O_OWN) r->own = val;
  return 0;
}

/* argv as words separated by spaces ("''" is an empty word) */
static parsed parse(const char *line) {
  static char buf[512];
  static char *argv[32];
  snprintf(buf, sizeof buf, "%s", line);
  int argc = 0;
  for (char *s = strtok(buf, " "); s && argc < 31; s = strtok(NULL, " ")) argv[argc++] = strcmp(s, "''") ? s : s + 2;
  argv[argc] = NULL;
  parsed r = {.o = {.mimic = true, .repeat = 1}};
  fflush(stderr);
  FILE *cap = tmpfile();
  int saved = dup(2);
  dup2(fileno(cap), 2);
  sbo_parser p;
  r.rc = sbo_parse(&p, use, argc, argv, &r.o, on_key, &r);
  sbo_done(&p);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(cap);
  size_t n = fread(r.err, 1, sizeof r.err - 1, cap);
  r.err[n] = '\0';
  fclose(cap);
  return r;
}

int main(void) {
  /* every kind where its row says */
  parsed r = parse("t --out o.json --data d --repeat 7 --max-bytes 8589934592 --time-limit 2.5 --warm --no-mimic "
                   "--verify v1 --file a --verify=v2 --file b --mode b --benchmark x --own z");
  CHECK(r.rc == 0);
  CHECK_STR(r.err, "");
  CHECK_STR(r.o.out, "o.json");
  CHECK_STR(r.o.data, "d");
  CHECK(r.o.repeat == 7);
  CHECK(r.o.max_bytes == 8589934592L);
  CHECK(r.o.limit == 2.5);
  CHECK(r.o.warm && !r.o.mimic);
  CHECK(r.o.n_verify == 2);
  CHECK_STR(r.o.verify[0], "v1");
  CHECK_STR(r.o.verify[1], "v2");
  CHECK(r.o.n_files == 2);
  CHECK_STR(r.o.files[0], "a");
  CHECK_STR(r.o.files[1], "b");
  CHECK(r.o.mode_calls == 1);
  CHECK_STR(r.o.mode, "b");
  CHECK_STR(r.own, "z"); /* SBO_KEY: the callback's */
  CHECK(r.keys == 1);     /* and only it: --benchmark (SBO_SKIP) stored nothing, reached no callback */

  /* nothing given: the defaults stand */
  r = parse("t");
  CHECK(r.rc == 0 && r.o.repeat == 1 && r.o.mimic && !r.o.warm && r.o.out == NULL && r.o.n_verify == 0);

  /* an integer out of its range, or not one: one line naming the option, the range and --help */
  r = parse("t --repeat 0");
  CHECK(r.rc == 1);
  CHECK_STR(r.err, "surgebox t: bad value '0' for --repeat: give an integer from 1 to 1000 (see surgebox t --help)\n");
  r = parse("t --repeat=1001");
  CHECK(r.rc == 1 && r.o.repeat == 1);
  r = parse("t --repeat 3x");
  CHECK_STR(r.err, "surgebox t: bad value '3x' for --repeat: give an integer from 1 to 1000 (see surgebox t --help)\n");
  r = parse("t --max-bytes 15");
  CHECK(r.rc == 1 && r.o.max_bytes == 0);
  /* a double: finite, above 0 */
  r = parse("t --time-limit -1");
  CHECK_STR(r.err, "surgebox t: bad value '-1' for --time-limit: give a number above 0 (see surgebox t --help)\n");
  r = parse("t --time-limit inf");
  CHECK(r.rc == 1 && r.o.limit == 0);
  /* a path: not empty; a string may be */
  r = parse("t --data ''");
  CHECK_STR(r.err, "surgebox t: bad value '' for --data: give a path, not an empty word (see surgebox t --help)\n");
  CHECK(r.rc == 1 && r.o.data == NULL);
  r = parse("t --out ''");
  CHECK(r.rc == 0 && r.o.out && !*r.o.out);
  /* a missing value: the parser's own line */
  r = parse("t --repeat");
  CHECK(r.rc == 1);
  CHECK_STR(r.err, "surgebox t: option '--repeat' needs a value (K) (see surgebox t --help)\n");
  /* a list past its capacity */
  r = parse("t --verify a --verify b --verify c");
  CHECK(r.rc == 1 && r.o.n_verify == 2);
  CHECK_STR(r.err, "surgebox t: --verify given more than 2 times (see surgebox t --help)\n");
  /* a callback's own mistake stops the parse */
  r = parse("t --mode c --own z");
  CHECK(r.rc == 1 && r.own == NULL);
  CHECK_STR(r.err, "surgebox t: --mode takes a or b (see surgebox t --help)\n");
  /* a flag takes no value; rows without a key (0: made from their place) are named in errors all the same */
  r = parse("t --warm=yes");
  CHECK(r.rc == 1 && !r.o.warm);
  CHECK_STR(r.err, "surgebox t: option '--warm' takes no value (see surgebox t --help)\n");
  r = parse("t --file");
  CHECK_STR(r.err, "surgebox t: option '--file' needs a value (F) (see surgebox t --help)\n");
  r = parse("t --tim=3");
  CHECK(r.rc == 0 && r.o.limit == 3);
  /* the first mistake ends the parse: what follows is not stored */
  r = parse("t --repeat 0 --out late");
  CHECK(r.rc == 1 && r.o.out == NULL);
  /* SBO_NONNEG: 0 is taken, below is not; .max bounds both double kinds */
  r = parse("t --grace 0");
  CHECK(r.rc == 0 && r.o.grace == 0);
  r = parse("t --grace 100 --wait 9");
  CHECK(r.rc == 0 && r.o.grace == 100 && r.o.wait == 9);
  r = parse("t --grace -0.5");
  CHECK_STR(r.err, "surgebox t: bad value '-0.5' for --grace: give a number from 0 to 100 (see surgebox t --help)\n");
  r = parse("t --grace 101");
  CHECK(r.rc == 1 && r.o.grace == 0);
  r = parse("t --wait 0");
  CHECK_STR(r.err, "surgebox t: bad value '0' for --wait: give a number above 0, at most 9 (see surgebox t --help)\n");
  r = parse("t --wait 9.5");
  CHECK(r.rc == 1 && r.o.wait == 0);
  /* a callback's -1: the parser says "bad value" for it */
  r = parse("t --pick y");
  CHECK(r.rc == 1);
  CHECK_STR(r.err, "surgebox t: bad value 'y' for --pick (see surgebox t --help)\n");
  CHECK(parse("t --pick x").rc == 0);
  /* SBO_WORD: the first word true, the second false, no third */
  r = parse("t --switch on");
  CHECK(r.rc == 0 && r.o.on);
  r = parse("t --switch on --switch off");
  CHECK(r.rc == 0 && !r.o.on);
  r = parse("t --switch maybe");
  CHECK_STR(r.err, "surgebox t: bad value 'maybe' for --switch: give on or off (see surgebox t --help)\n");
  CHECK(r.rc == 1 && !r.o.on);
  /* an integer without an upper bound says so */
  r = parse("t --big 1");
  CHECK_STR(r.err, "surgebox t: bad value '1' for --big: give an integer of at least 2 (see surgebox t --help)\n");
  /* a terse command: the same mistakes without what was wanted */
  use = &terse;
  r = parse("t --repeat 0");
  CHECK_STR(r.err, "surgebox t: bad value '0' for --repeat (see surgebox t --help)\n");
  r = parse("t --verify a --verify b --verify c");
  CHECK_STR(r.err, "surgebox t: --verify given more than 2 times (see surgebox t --help)\n");
  use = &cmd;
  /* sbo_check: the same checks, nothing said (a config file's keys) */
  opts o = {0};
  const sbo_opt *rep = &table[2], *verify = &table[7];
  CHECK(sbo_check(NULL, rep, "5", &o) == 0 && o.repeat == 5);
  CHECK(sbo_check(NULL, rep, "0", &o) == -1 && o.repeat == 5);
  CHECK(sbo_check(NULL, verify, "a", &o) == 0 && sbo_check(NULL, verify, "b", &o) == 0);
  CHECK(sbo_check(NULL, verify, "c", &o) == -1 && o.n_verify == 2);
  CHECK(sbo_check(NULL, &table[12], "y", &o) == -1); /* pick */
  /* --help: -1, the usage on stdout */
  fflush(stdout);
  r = parse("t --help");
  CHECK(r.rc == -1);
  return check_exit();
}
