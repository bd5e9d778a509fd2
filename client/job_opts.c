/* The options exec and cases share, declared once (issue 40): a
 * toolchain's options and arguments and the job's limits, each stored into
 * the JSON its request carries (sbc_job_fields, at the start of the
 * command's options struct). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* The JSON value a row's .at names. */
static json_object *field(const sbo_opt *o, void *opts) { return *(json_object **)((char *)opts + o->at); }

/* "K=V" into the object; -1 without '=' or with an empty K. */
int sbc_opt_kv(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)p;
  const char *eq = strchr(val, '=');
  if (!eq || eq == val) return -1;
  char key[256];
  snprintf(key, sizeof key, "%.*s", (int)(eq - val), val);
  json_object_object_add(field(o, opts), key, json_object_new_string(eq + 1));
  return 0;
}

/* --std X, --opt X: the option named as the flag, into the object. */
static int named(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)p;
  json_object_object_add(field(o, opts), o->name, json_object_new_string(val));
  return 0;
}

/* A word appended to the array. */
static int word(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)p;
  json_object_array_add(field(o, opts), json_object_new_string(val));
  return 0;
}

/* A limit into limits: seconds a number above 0, the rest an integer from 1. */
static int limit(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)p;
  static const char *const keys[][2] = {{"time-limit", "time_s"}, {"cpu-limit", "cpu_time_s"}, {"memory-limit", "memory_mib"},
                                        {"pids-limit", "pids"},   {"output-limit", "output_bytes"}};
  size_t i = 0;
  while (i < sizeof keys / sizeof *keys - 1 && strcmp(keys[i][0], o->name)) i++;
  long n;
  double d;
  json_object *v = NULL;
  if (i < 2 && sbo_parse_double(val, &d) == 0) v = json_object_new_double(d);
  else if (i >= 2 && sbo_parse_long(val, 1, __LONG_MAX__, &n) == 0) v = json_object_new_int64(n);
  if (!v) return -1;
  json_object_object_add(field(o, opts), keys[i][1], v);
  return 0;
}

#define AT(F) SBO_AT(sbc_job_fields, F)
const sbo_opt sbc_job_opts[] = {
    {"option", 0, "K=V", "a toolchain option, e.g. std=c++20, edition=2018 (repeatable)", SBO_CALL, AT(options), .call = sbc_opt_kv},
    {"std", 0, "STD", "the same as --option std=STD", SBO_CALL, AT(options), .call = named},
    {"opt", 0, "LEVEL", "the same as --option opt=LEVEL", SBO_CALL, AT(options), .call = named},
    {"arg", 0, "A", "an argument for the program (repeatable; exec: or after --; cases: before each case's own)", SBO_CALL,
     AT(args), .call = word},
    {"compile-arg", 0, "A", "add A to the compile step's arguments, e.g. -Wall, -DN=3 (repeatable)", SBO_CALL, AT(cargs),
     .call = word},
    {"time-limit", 0, "S", "wall-clock limit in seconds (cases: of each case)", SBO_CALL, AT(limits), .call = limit},
    {"cpu-limit", 0, "S", "CPU-time limit in seconds (cases: of each case)", SBO_CALL, AT(limits), .call = limit},
    {"memory-limit", 0, "MIB", "memory limit (cases: of each case)", SBO_CALL, AT(limits), .call = limit},
    {"pids-limit", 0, "N", "processes and threads", SBO_CALL, AT(limits), .call = limit},
    {"output-limit", 0, "BYTES", "per output stream", SBO_CALL, AT(limits), .call = limit},
    {NULL, 0, NULL, NULL}};

void sbc_job_fields_init(sbc_job_fields *j) {
  j->options = json_object_new_object();
  j->args = json_object_new_array();
  j->cargs = json_object_new_array();
  j->limits = json_object_new_object();
}

void sbc_job_fields_free(sbc_job_fields *j) {
  json_object_put(j->options);
  json_object_put(j->args);
  json_object_put(j->cargs);
  json_object_put(j->limits);
}
