/* common/cliopt.c: the forms every command accepts (issue 13). */
#include "../check.h"
#include "cliopt.h"

#include <stdlib.h>
#include <unistd.h>

enum { O_OUT = 256, O_JSON, O_N };
static const sbo_opt opts[] = {{"out", O_OUT, "FILE", "where"},
                               {"json", O_JSON, NULL, "as JSON"},
                               {"n", O_N, "N", "how many"},
                               {NULL, 0, NULL, NULL}};
static const sbo_cmd cmd = {"surgebox t", "[options] ARG...", "a test", opts, NULL, NULL, false, NULL};
static const sbo_cmd cmd_in_order = {"surgebox-t", "[options] PROGRAM...", "a test", opts, NULL, NULL, true, NULL};

typedef struct {
  const char *out, *n;
  int json, last;
  char *pos[8], *rest[8];
  int n_pos, n_rest, dashdash, status;
} parsed;

/* argv as one string of words separated by spaces */
static parsed parse(const sbo_cmd *c, const char *line) {
  static char buf[512];
  static char *argv[32];
  snprintf(buf, sizeof buf, "%s", line);
  int argc = 0;
  for (char *s = strtok(buf, " "); s && argc < 31; s = strtok(NULL, " ")) argv[argc++] = s;
  argv[argc] = NULL;
  parsed r = {0};
  sbo_parser p;
  sbo_init(&p, c, argc, argv);
  const char *v;
  int k;
  /* errors and --help write to stdout/stderr: keep the test's output readable */
  fflush(stdout);
  while ((k = sbo_next(&p, &v)) > 0) {
    if (k == O_OUT) r.out = v;
    else if (k == O_N) r.n = v;
    else if (k == O_JSON) r.json++;
  }
  r.last = k;
  r.status = p.status;
  if (k == SBO_END) {
    for (int i = 0; i < p.n_pos && i < 8; i++) r.pos[i] = p.pos[i];
    for (int i = 0; i < p.n_rest && i < 8; i++) r.rest[i] = p.rest[i];
    r.n_pos = p.n_pos;
    r.n_rest = p.n_rest;
    r.dashdash = p.dashdash;
  }
  sbo_done(&p);
  return r;
}

int main(void) {
  parsed r = parse(&cmd, "t --out=a.json x");
  CHECK(r.last == SBO_END);
  CHECK_STR(r.out, "a.json");
  CHECK(r.n_pos == 1);
  CHECK_STR(r.pos[0], "x");

  /* options after a positional (permuted), "--opt value" */
  r = parse(&cmd, "t x --out b.json y --json");
  CHECK(r.last == SBO_END);
  CHECK_STR(r.out, "b.json");
  CHECK(r.json == 1);
  CHECK(r.n_pos == 2);
  CHECK_STR(r.pos[0], "x");
  CHECK_STR(r.pos[1], "y");

  /* "--" ends the options; what follows keeps its place, "--json" included */
  r = parse(&cmd, "t a.py --n 3 -- python3 --json -- z");
  CHECK(r.last == SBO_END);
  CHECK_STR(r.n, "3");
  CHECK(r.json == 0);
  CHECK(r.dashdash);
  CHECK(r.n_pos == 1);
  CHECK_STR(r.pos[0], "a.py");
  CHECK(r.n_rest == 4);
  CHECK_STR(r.rest[0], "python3");
  CHECK_STR(r.rest[1], "--json");
  CHECK_STR(r.rest[2], "--");
  /* an option's value may be "--" */
  r = parse(&cmd, "t --out -- x");
  CHECK(r.last == SBO_END);
  CHECK_STR(r.out, "--");
  CHECK(!r.dashdash);

  /* in order: the first positional ends the options */
  r = parse(&cmd_in_order, "t --json prog --out x");
  CHECK(r.last == SBO_END);
  CHECK(r.json == 1);
  CHECK(r.out == NULL);
  CHECK(r.n_pos == 3);
  CHECK_STR(r.pos[1], "--out");

  /* mistakes: exit 1; --help: exit 0 */
  r = parse(&cmd, "t --bogus");
  CHECK(r.last == SBO_STOP && r.status == 1);
  r = parse(&cmd, "t --out");
  CHECK(r.last == SBO_STOP && r.status == 1);
  r = parse(&cmd, "t --json=yes");
  CHECK(r.last == SBO_STOP && r.status == 1);
  r = parse(&cmd, "t x --help");
  CHECK(r.last == SBO_STOP && r.status == 0);
  r = parse(&cmd, "t -h");
  CHECK(r.last == SBO_STOP && r.status == 0);
  /* a unique prefix is the option (getopt_long's rule) */
  r = parse(&cmd, "t --ou=c");
  CHECK_STR(r.out, "c");

  long n = 0;
  double d = 0;
  CHECK(sbo_parse_long("12", 1, 100, &n) == 0 && n == 12);
  CHECK(sbo_parse_long("12x", 1, 100, &n) < 0);
  CHECK(sbo_parse_long("0", 1, 100, &n) < 0);
  CHECK(sbo_parse_double("0.5", &d) == 0 && d == 0.5);
  CHECK(sbo_parse_double("-1", &d) < 0);
  CHECK(sbo_parse_double("inf", &d) < 0);
  return check_exit();
}
