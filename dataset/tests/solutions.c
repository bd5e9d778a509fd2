/* S.jsonl: one solution a line, {"id": PROBLEM, "code": TEXT}; as many per
 * problem as were sampled (pass@k's n). Each names a problem of P.jsonl. */
#include "tests_bench.h"
#include "sha256.h"
#include "jsonl.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t find_problem(const sbtb_problems *p, const char *id) {
  for (size_t i = 0; i < p->n; i++)
    if (!strcmp(p->v[i].id, id)) return i;
  return (size_t)-1;
}

/* the program: the problem's hash, then the code */
static void hash_solution(const sbtb_problem *p, sbtb_solution *s) {
  size_t len = 64 + s->code_len;
  char *buf = malloc(len + 1);
  memcpy(buf, p->hash, 64);
  memcpy(buf + 64, s->code, s->code_len);
  sbu_sha256_hex(buf, len, s->hash);
  free(buf);
}

typedef struct {
  const char *path;
  const sbtb_problems *p;
  sbtb_solutions *s;
  size_t alloc;
} solutions_load;

static int solution_line(void *arg, json_object *o, size_t lineno, char *err, size_t err_len) {
  solutions_load *l = arg;
  json_object *id = NULL, *code = NULL;
  const char *why = NULL;
  size_t pi = (size_t)-1;
  if (!o || !json_object_is_type(o, json_type_object)) why = "not a JSON object";
  else if (!json_object_object_get_ex(o, "id", &id) ||
           !(json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int)))
    why = "no \"id\" (a string or an integer: the problem's)";
  else if (!json_object_object_get_ex(o, "code", &code) || !json_object_is_type(code, json_type_string))
    why = "no \"code\" string";
  else if ((pi = find_problem(l->p, json_object_get_string(id))) == (size_t)-1)
    why = "its \"id\" names no problem of the problems file";
  if (why) {
    snprintf(err, err_len, "%s line %zu%s%s%s: %s", l->path, lineno, id ? " (id \"" : "",
             id ? json_object_get_string(id) : "", id ? "\")" : "", why);
    return -1;
  }
  sbtb_solutions *s = l->s;
  if (s->n == l->alloc) s->v = realloc(s->v, (l->alloc = l->alloc ? l->alloc * 2 : 256) * sizeof *s->v);
  sbtb_solution *x = &s->v[s->n++];
  x->line = lineno;
  x->problem = pi;
  x->code_len = (size_t)json_object_get_string_len(code);
  x->code = malloc(x->code_len + 1);
  memcpy(x->code, json_object_get_string(code), x->code_len + 1);
  hash_solution(&l->p->v[pi], x);
  return 0;
}

int sbtb_solutions_load(const char *path, const sbtb_problems *p, sbtb_solutions *s, bool *unreadable, char *err,
                        size_t err_len) {
  memset(s, 0, sizeof *s);
  solutions_load l = {path, p, s, 0};
  int rc = sbr_jsonl_each(path, "solutions", solution_line, &l, unreadable, err, err_len);
  if (rc) sbtb_solutions_free(s);
  return rc;
}

void sbtb_solutions_free(sbtb_solutions *s) {
  for (size_t i = 0; i < s->n; i++) free(s->v[i].code);
  free(s->v);
  memset(s, 0, sizeof *s);
}
