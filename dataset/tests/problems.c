/* P.jsonl: one problem a line, in any of three layouts, made into the
 * cases the protocol takes (PROTOCOL.md "Test cases"):
 *   tests         [{stdin, args, expected, compare, limits}, ...] as given
 *                 (function calls: "fn_name" beside, args a JSON array of
 *                 arguments, expected any JSON value)
 *   input_output  APPS / TACO: {"inputs": [...], "outputs": [...],
 *                 "fn_name"?}, an object or a JSON string of one
 *   test_cases    SandboxFusion's provided_data: {"type": "stdin_stdout" |
 *                 "function_call", "input": [...], "output": [...],
 *                 "fn_name"?}, an object or a JSON string of one
 *   public_test_cases, private_test_cases   LiveCodeBench: lists (or JSON
 *                 text of lists) of {input, output, testtype: "stdin" |
 *                 "functional"}, "metadata".func_name for functional ones
 *   test (+ entry_point), test_list (+ test_setup_code, test_imports)
 *                 assert tests as HumanEval and MBPP ship them (Python):
 *                 the test code runs after the solution, one case that
 *                 passes when the program exits 0
 * docs/verify.md says how each field becomes a case. */
#include "tests_bench.h"
#include "cleanup.h"
#include "sha256.h"
#include "jsonl.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *language, *toolchain, *source;
} lang;

/* a problem's "language" -> the job's toolchain and file name (the names
 * code-RL data and SandboxFusion use, and the toolchains' own) */
static const lang langs[] = {
    {"python", "python3", "main.py"},  {"python3", "python3", "main.py"}, {"c", "gcc", "main.c"},
    {"gcc", "gcc", "main.c"},          {"cpp", "g++", "main.cpp"},        {"c++", "g++", "main.cpp"},
    {"g++", "g++", "main.cpp"},        {"java", "java", "Main.java"},     {"rust", "rustc", "main.rs"},
    {"javascript", "node", "main.js"}, {"js", "node", "main.js"},         {"nodejs", "node", "main.js"},
    {"go", "go", "main.go"},           {"bash", "bash", "main.sh"},
};

static const lang *find_lang(const char *name) {
  for (size_t i = 0; i < sizeof langs / sizeof langs[0]; i++)
    if (!strcmp(langs[i].language, name)) return &langs[i];
  return NULL;
}

static json_object *str(const char *s) { return json_object_new_string(s); }

/* a JSON string holding an object, or the object itself (new reference) */
static json_object *object_or_json_string(json_object *v) {
  if (json_object_is_type(v, json_type_object)) return json_object_get(v);
  if (!json_object_is_type(v, json_type_string)) return NULL;
  json_object *o = json_tokener_parse(json_object_get_string(v));
  if (o && !json_object_is_type(o, json_type_object)) json_object_put(o), o = NULL;
  return o;
}

/* stdin text: a string, or a list of lines (TACO) joined by "\n" */
static json_object *text_of(json_object *v) {
  if (json_object_is_type(v, json_type_string)) return json_object_get(v);
  if (!json_object_is_type(v, json_type_array)) return NULL;
  size_t n = json_object_array_length(v), len = 0;
  for (size_t i = 0; i < n; i++) {
    json_object *e = json_object_array_get_idx(v, i);
    if (!json_object_is_type(e, json_type_string)) return NULL;
    len += (size_t)json_object_get_string_len(e) + 1;
  }
  SBU_AUTOFREE char *buf = malloc(len + 1);
  if (!buf) return NULL;
  char *w = buf;
  for (size_t i = 0; i < n; i++) {
    json_object *e = json_object_array_get_idx(v, i);
    size_t l = (size_t)json_object_get_string_len(e);
    memcpy(w, json_object_get_string(e), l);
    w += l;
    if (i + 1 < n) *w++ = '\n';
  }
  return json_object_new_string_len(buf, (int)(w - buf));
}

/* a function call's arguments: an array as given; a string: one JSON value
 * per line (LiveCodeBench's functional inputs), or one JSON array */
static json_object *args_of(json_object *v) {
  if (json_object_is_type(v, json_type_array)) return json_object_get(v);
  if (!json_object_is_type(v, json_type_string)) return NULL;
  SBU_AUTOPUT json_object *args = json_object_new_array();
  const char *s = json_object_get_string(v);
  while (*s) {
    const char *nl = strchr(s, '\n');
    size_t l = nl ? (size_t)(nl - s) : strlen(s);
    if (strspn(s, " \t\r") < l) {
      SBU_AUTOFREE char *line = strndup(s, l);
      if (!line) return NULL;
      enum json_tokener_error e;
      json_object *a = json_tokener_parse_verbose(line, &e);
      if (e != json_tokener_success) return NULL;
      json_object_array_add(args, a);
    }
    s += l + (nl != NULL);
  }
  return sbu_take_ptr(&args);
}

/* an expected function value given as JSON text: the value */
static json_object *value_of_text(json_object *v, bool *ok) {
  *ok = true;
  if (!json_object_is_type(v, json_type_string)) return json_object_get(v);
  enum json_tokener_error e;
  json_object *o = json_tokener_parse_verbose(json_object_get_string(v), &e);
  if (e != json_tokener_success) *ok = false;
  return o;
}

static json_object *new_case(void) { return json_object_new_object(); }

/* parallel inputs and outputs -> cases; apps: APPS's rule that a
 * function's expected value is written wrapped in a one-element list */
static const char *from_lists(json_object *in, json_object *out, bool fn, bool apps, bool text_outputs,
                              json_object *cases) {
  if (!json_object_is_type(in, json_type_array) || !json_object_is_type(out, json_type_array))
    return "the inputs and the outputs must be lists";
  if (json_object_array_length(in) != json_object_array_length(out)) return "as many inputs as outputs, please";
  if (!json_object_array_length(in)) return "no test cases";
  for (size_t i = 0; i < json_object_array_length(in); i++) {
    json_object *a = json_object_array_get_idx(in, i), *b = json_object_array_get_idx(out, i), *c = new_case();
    json_object_array_add(cases, c);
    if (fn) {
      json_object *args = args_of(a), *want;
      if (!args) return "a function call's input is a list of arguments, or JSON text of one argument a line";
      json_object_object_add(c, "args", args);
      bool ok = true;
      if (apps) {
        want = json_object_get(b);
        if (json_object_is_type(b, json_type_array) && json_object_array_length(b) == 1)
          json_object_put(want), want = json_object_get(json_object_array_get_idx(b, 0));
      } else {
        want = text_outputs ? value_of_text(b, &ok) : json_object_get(b);
      }
      if (!ok) return "a function call's output is not JSON text";
      json_object_object_add(c, "expected", want ? want : NULL);
    } else {
      SBU_AUTOPUT json_object *stdin_ = text_of(a), *want = text_of(b);
      if (!stdin_ || !want) return "a standard-input case's input and output are strings (or lists of lines)";
      json_object_object_add(c, "stdin", sbu_take_ptr(&stdin_));
      json_object_object_add(c, "expected", sbu_take_ptr(&want));
    }
  }
  return NULL;
}

static const char *fn_name_of(json_object *o, char **fn) {
  json_object *v;
  if (!json_object_object_get_ex(o, "fn_name", &v) || json_object_is_type(v, json_type_null)) return NULL;
  if (!json_object_is_type(v, json_type_string) || !json_object_get_string_len(v)) return "\"fn_name\" is not a name";
  *fn = strdup(json_object_get_string(v));
  return NULL;
}

static const char *adapt_input_output(json_object *v, char **fn, json_object *cases) {
  SBU_AUTOPUT json_object *io = object_or_json_string(v);
  json_object *in = NULL, *out = NULL;
  if (!io) return "\"input_output\" is not an object or JSON text of one";
  const char *why = fn_name_of(io, fn);
  json_object_object_get_ex(io, "inputs", &in);
  json_object_object_get_ex(io, "outputs", &out);
  if (!why) why = from_lists(in, out, *fn != NULL, true, false, cases);
  return why;
}

static const char *adapt_test_cases(json_object *v, char **fn, json_object *cases) {
  SBU_AUTOPUT json_object *tc = object_or_json_string(v);
  json_object *type = NULL, *in = NULL, *out = NULL;
  if (!tc) return "\"test_cases\" is not an object or JSON text of one";
  const char *why = fn_name_of(tc, fn), *t = NULL;
  if (json_object_object_get_ex(tc, "type", &type)) t = json_object_get_string(type);
  if (!why && (!t || (strcmp(t, "stdin_stdout") && strcmp(t, "function_call"))))
    why = "\"test_cases\".\"type\" is \"stdin_stdout\" or \"function_call\"";
  if (!why && !strcmp(t, "function_call") && !*fn) why = "a \"function_call\" test_cases needs \"fn_name\"";
  if (!why && !strcmp(t, "stdin_stdout")) free(*fn), *fn = NULL; /* SandboxFusion's "fn_name": null beside stdin */
  json_object_object_get_ex(tc, "input", &in);
  json_object_object_get_ex(tc, "output", &out);
  if (!why) why = from_lists(in, out, *fn != NULL, false, true, cases);
  return why;
}

/* LiveCodeBench: a list of {input, output, testtype} (or its JSON text).
 * Its release compresses private_test_cases (base64 of zlib of a pickle):
 * refused, a pickle is never read here. */
static const char *adapt_lcb_list(json_object *v, json_object *meta, char **fn, json_object *cases) {
  SBU_AUTOPUT json_object *list = json_object_get(v);
  if (json_object_is_type(v, json_type_string)) {
    const char *s = json_object_get_string(v);
    s += strspn(s, " \t\r\n");
    if (*s != '[')
      return "a LiveCodeBench test list is not JSON (its release compresses private_test_cases: decode it to a "
             "JSON list first, docs/verify.md shows how)";
    json_object_put(list);
    list = json_tokener_parse(s);
  }
  if (!json_object_is_type(list, json_type_array)) return "a LiveCodeBench test list is not a list";
  const char *why = NULL;
  for (size_t i = 0; !why && i < json_object_array_length(list); i++) {
    json_object *t = json_object_array_get_idx(list, i), *in = NULL, *out = NULL, *type = NULL;
    if (!json_object_is_type(t, json_type_object) || !json_object_object_get_ex(t, "input", &in) ||
        !json_object_object_get_ex(t, "output", &out) || !json_object_object_get_ex(t, "testtype", &type)) {
      why = "a LiveCodeBench test is {input, output, testtype}";
      break;
    }
    const char *tt = json_object_get_string(type);
    bool functional = !strcmp(tt, "functional");
    if (!functional && strcmp(tt, "stdin") != 0) {
      why = "a LiveCodeBench testtype is \"stdin\" or \"functional\"";
      break;
    }
    if (functional && !*fn) {
      SBU_AUTOPUT json_object *m = meta ? object_or_json_string(meta) : NULL;
      json_object *name = NULL;
      if (m && json_object_object_get_ex(m, "func_name", &name) && json_object_is_type(name, json_type_string) &&
          json_object_get_string_len(name))
        *fn = strdup(json_object_get_string(name));
      if (!*fn) {
        why = "a functional LiveCodeBench test needs \"metadata\".\"func_name\"";
        break;
      }
    }
    if (functional != (*fn != NULL)) {
      why = "a problem's LiveCodeBench tests are all stdin or all functional";
      break;
    }
    SBU_AUTOPUT json_object *ins = json_object_new_array(), *outs = json_object_new_array(),
                            *tmp = json_object_new_array();
    json_object_array_add(ins, json_object_get(in));
    json_object_array_add(outs, json_object_get(out));
    why = from_lists(ins, outs, functional, false, true, tmp);
    if (!why) json_object_array_add(cases, json_object_get(json_object_array_get_idx(tmp, 0)));
  }
  return why;
}

static const char *adapt_lcb(json_object *o, char **fn, json_object *cases) {
  json_object *meta = NULL, *v;
  json_object_object_get_ex(o, "metadata", &meta);
  static const char *const keys[] = {"public_test_cases", "private_test_cases"};
  for (size_t k = 0; k < 2; k++) {
    if (!json_object_object_get_ex(o, keys[k], &v) || json_object_is_type(v, json_type_null)) continue;
    const char *why = adapt_lcb_list(v, meta, fn, cases);
    if (why) return why;
  }
  return json_object_array_length(cases) ? NULL : "no test cases";
}

/* *t grows by a, then b (NULL: nothing); false: no memory, *t as it was */
static bool append(char **t, const char *a, const char *b) {
  size_t lt = strlen(*t), la = strlen(a), lb = b ? strlen(b) : 0;
  char *r = realloc(*t, lt + la + lb + 1);
  if (!r) return false;
  memcpy(r + lt, a, la), memcpy(r + lt + la, b ? b : "", lb + 1);
  *t = r;
  return true;
}

static bool python_name(const char *s) {
  if (!*s || strlen(s) > 128 || (*s >= '0' && *s <= '9')) return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return false;
  return true;
}

/* HumanEval ("test" defining check(candidate), "entry_point") or MBPP
 * ("test_list" of assert lines, "test_setup_code", "test_imports"): the
 * code run after the solution's, and one case, passed when it exits 0. */
static const char *adapt_asserts(json_object *o, char **tail, json_object *cases) {
  static const char no_memory[] = "out of memory";
  json_object *v, *x;
  SBU_AUTOFREE char *t = strdup("\n");
  if (!t) return no_memory;
  if (json_object_object_get_ex(o, "test", &v)) {
    if (!json_object_is_type(v, json_type_string)) return "\"test\" is not a string (Python test code)";
    if (!append(&t, json_object_get_string(v), NULL)) return no_memory;
    if (json_object_object_get_ex(o, "entry_point", &x) && !json_object_is_type(x, json_type_null)) {
      if (!json_object_is_type(x, json_type_string) || !python_name(json_object_get_string(x)))
        return "\"entry_point\" is not a Python name";
      char call[160];
      snprintf(call, sizeof call, "\ncheck(%s)\n", json_object_get_string(x));
      if (!append(&t, call, NULL)) return no_memory;
    }
  } else {
    json_object *lists[2] = {NULL, NULL};
    json_object_object_get_ex(o, "test_imports", &lists[0]);
    json_object_object_get_ex(o, "test_list", &lists[1]);
    if (json_object_object_get_ex(o, "test_setup_code", &x) && json_object_is_type(x, json_type_string))
      if (!append(&t, json_object_get_string(x), "\n")) return no_memory;
    if (!json_object_is_type(lists[1], json_type_array) || !json_object_array_length(lists[1]))
      return "\"test_list\" is not a non-empty list of assert lines";
    for (int l = 0; l < 2; l++)
      for (size_t i = 0; lists[l] && i < json_object_array_length(lists[l]); i++) {
        json_object *e = json_object_array_get_idx(lists[l], i);
        if (!json_object_is_type(e, json_type_string))
          return "\"test_list\" and \"test_imports\" hold strings (lines of Python)";
        if (!append(&t, json_object_get_string(e), "\n")) return no_memory;
      }
  }
  *tail = sbu_take_ptr(&t);
  json_object_array_add(cases, json_object_new_object());
  return NULL;
}

static const char *const case_keys[] = {"stdin", "args", "expected", "compare", "limits", NULL};

static const char *adapt_tests(json_object *v, bool fn, json_object *cases) {
  if (!json_object_is_type(v, json_type_array) || !json_object_array_length(v)) return "\"tests\" is not a non-empty list";
  for (size_t i = 0; i < json_object_array_length(v); i++) {
    json_object *t = json_object_array_get_idx(v, i), *c = new_case();
    json_object_array_add(cases, c);
    if (!json_object_is_type(t, json_type_object)) return "a test is not an object";
    json_object_object_foreach(t, k, val) {
      size_t j = 0;
      while (case_keys[j] && strcmp(case_keys[j], k)) j++;
      if (!case_keys[j]) return "a test has a field other than stdin, args, expected, compare, limits";
      if (!strcmp(k, "stdin") && (fn || !json_object_is_type(val, json_type_string)))
        return fn ? "a function-call test has args, not stdin" : "a test's \"stdin\" is not a string";
      if (!strcmp(k, "args") && !json_object_is_type(val, json_type_array)) return "a test's \"args\" is not a list";
      for (size_t a = 0; !fn && !strcmp(k, "args") && a < json_object_array_length(val); a++)
        if (!json_object_is_type(json_object_array_get_idx(val, a), json_type_string))
          return "a standard-input test's \"args\" are strings (the program's arguments)";
      if (!strcmp(k, "expected") && !fn && !json_object_is_type(val, json_type_string))
        return "a standard-input test's \"expected\" is not a string";
      json_object_object_add(c, k, json_object_get(val));
    }
    if (fn && !json_object_object_get_ex(c, "expected", NULL)) return "a function-call test has no \"expected\"";
  }
  return NULL;
}

/* one line -> *p, or the reason it is not a problem */
static const char *problem_of(json_object *o, const char *language_default, sbtb_problem *p) {
  json_object *id, *v;
  if (!json_object_is_type(o, json_type_object)) return "not a JSON object";
  if (!json_object_object_get_ex(o, "id", &id)) /* HumanEval/MBPP's and LiveCodeBench's names for it */
    if (!json_object_object_get_ex(o, "task_id", &id)) json_object_object_get_ex(o, "question_id", &id);
  if (!id || !(json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int)))
    return "no \"id\" (a string or an integer; task_id and question_id are read too)";
  p->id = strdup(json_object_get_string(id));
  const char *language = language_default;
  if (json_object_object_get_ex(o, "language", &v)) {
    if (!json_object_is_type(v, json_type_string)) return "\"language\" is not a string";
    language = json_object_get_string(v);
  }
  if (!language) return "no \"language\" (python, c, cpp, java, rust, javascript, go, bash; or give --language)";
  const lang *l = find_lang(language);
  if (!l) return "an unknown \"language\" (python, c, cpp, java, rust, javascript, go, bash)";
  p->language = strdup(language);
  p->toolchain = l->toolchain;
  p->source = l->source;
  if (json_object_object_get_ex(o, "toolchain", &v)) { /* a version of the family: "g++-12", "python3.11" */
    if (!json_object_is_type(v, json_type_string)) return "\"toolchain\" is not a string";
    p->toolchain = json_object_get_string(v); /* points into the line, copied below */
  }
  const char *why = NULL;
  bool lcb = json_object_object_get_ex(o, "public_test_cases", NULL) ||
             json_object_object_get_ex(o, "private_test_cases", NULL);
  int layouts = json_object_object_get_ex(o, "tests", NULL) + json_object_object_get_ex(o, "input_output", NULL) +
                json_object_object_get_ex(o, "test_cases", NULL) + lcb + json_object_object_get_ex(o, "test", NULL) +
                json_object_object_get_ex(o, "test_list", NULL);
  if (layouts != 1)
    return "one of \"tests\", \"input_output\", \"test_cases\", \"public_test_cases\"/\"private_test_cases\", "
           "\"test\", \"test_list\", please";
  p->cases = json_object_new_array();
  if (json_object_object_get_ex(o, "input_output", &v)) why = adapt_input_output(v, &p->fn_name, p->cases);
  else if (json_object_object_get_ex(o, "test_cases", &v)) why = adapt_test_cases(v, &p->fn_name, p->cases);
  else if (lcb) why = adapt_lcb(o, &p->fn_name, p->cases);
  else if (json_object_object_get_ex(o, "test", NULL) || json_object_object_get_ex(o, "test_list", NULL))
    why = adapt_asserts(o, &p->assert_tail, p->cases);
  else if (!(why = fn_name_of(o, &p->fn_name))) why = adapt_tests(json_object_object_get(o, "tests"), p->fn_name, p->cases);
  if (why) return why;
  if (json_object_array_length(p->cases) > 10000) return "more than 10,000 tests (the protocol's cap on one job)";
  if (p->fn_name && strcmp(l->toolchain, "python3")) return "function-call tests (fn_name) are for Python problems";
  if (p->assert_tail && strcmp(l->toolchain, "python3")) return "assert tests (test, test_list) are for Python problems";
  if (json_object_object_get_ex(o, "compare", &v)) /* the problem's judge, for cases without their own */
    for (size_t i = 0; i < json_object_array_length(p->cases); i++) {
      json_object *c = json_object_array_get_idx(p->cases, i);
      if (!json_object_object_get_ex(c, "compare", NULL)) json_object_object_add(c, "compare", json_object_get(v));
    }
  return NULL;
}

static void hash_problem(sbtb_problem *p) {
  SBU_AUTOPUT json_object *h = json_object_new_object();
  json_object_object_add(h, "toolchain", str(p->toolchain));
  json_object_object_add(h, "source", str(p->source));
  if (p->fn_name) json_object_object_add(h, "fn_name", str(p->fn_name));
  if (p->assert_tail) json_object_object_add(h, "assert_tail", str(p->assert_tail));
  json_object_object_add(h, "cases", json_object_get(p->cases));
  const char *s = json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN);
  sbu_sha256_hex(s, strlen(s), p->hash);
}

static void problem_free(sbtb_problem *p) {
  free(p->id);
  free(p->language);
  free(p->fn_name);
  free(p->assert_tail);
  free((char *)p->toolchain);
  json_object_put(p->cases);
}

typedef struct {
  const char *path, *language_default;
  sbtb_problems *ps;
  size_t alloc;
} problems_load;

static int problem_line(void *arg, json_object *o, size_t lineno, char *err, size_t err_len) {
  problems_load *l = arg;
  sbtb_problems *ps = l->ps;
  sbtb_problem p = {.line = lineno};
  const char *why = o ? problem_of(o, l->language_default, &p) : "not JSON";
  p.toolchain = strdup(p.toolchain ? p.toolchain : "");
  int rc = 0;
  for (size_t i = 0; !why && i < ps->n; i++)
    if (!strcmp(ps->v[i].id, p.id)) {
      snprintf(err, err_len, "%s line %zu: the id \"%s\" is also on line %zu: one line per problem", l->path, lineno,
               p.id, ps->v[i].line);
      rc = -1;
    }
  if (why) {
    snprintf(err, err_len, "%s line %zu%s%s%s: %s", l->path, lineno, p.id ? " (problem \"" : "", p.id ? p.id : "",
             p.id ? "\")" : "", why);
    rc = -1;
  }
  if (rc) {
    problem_free(&p);
    return rc;
  }
  hash_problem(&p);
  if (ps->n == l->alloc) ps->v = realloc(ps->v, (l->alloc = l->alloc ? l->alloc * 2 : 64) * sizeof *ps->v);
  ps->v[ps->n++] = p;
  return 0;
}

int sbtb_problems_load(const char *path, const char *language_default, sbtb_problems *ps, bool *unreadable,
                       char *err, size_t err_len) {
  memset(ps, 0, sizeof *ps);
  problems_load l = {path, language_default, ps, 0};
  int rc = sbr_jsonl_each(path, "problems", problem_line, &l, unreadable, err, err_len);
  if (rc) sbtb_problems_free(ps);
  return rc;
}

void sbtb_problems_free(sbtb_problems *ps) {
  for (size_t i = 0; i < ps->n; i++) problem_free(&ps->v[i]);
  free(ps->v);
  memset(ps, 0, sizeof *ps);
}

json_object *sbtb_request(const sbtb_problem *p, const char *code, size_t code_len, const char *stop, double time_limit,
                          bool warm) {
  json_object *req = json_object_new_object(), *files = json_object_new_array(), *f = json_object_new_object();
  json_object_object_add(req, "type", str("exec"));
  json_object_object_add(req, "toolchain", str(p->toolchain));
  json_object_object_add(f, "path", str(p->source));
  if (p->assert_tail) { /* the solution, then its tests */
    size_t tl = strlen(p->assert_tail);
    SBU_AUTOFREE char *whole = malloc(code_len + tl + 1);
    if (whole) {
      memcpy(whole, code, code_len);
      memcpy(whole + code_len, p->assert_tail, tl + 1);
    }
    json_object_object_add(f, "content", whole ? json_object_new_string_len(whole, (int)(code_len + tl)) : NULL);
  } else {
    json_object_object_add(f, "content", json_object_new_string_len(code, (int)code_len));
  }
  json_object_array_add(files, f);
  json_object_object_add(req, "files", files);
  json_object *cases = NULL; /* json_object_deep_copy refuses a non-NULL destination */
  if (time_limit > 0 && json_object_deep_copy(p->cases, &cases, NULL) == 0) { /* each case's own limits win */
    for (size_t i = 0; i < json_object_array_length(cases); i++) {
      json_object *c = json_object_array_get_idx(cases, i);
      if (json_object_object_get_ex(c, "limits", NULL)) continue;
      json_object *l = json_object_new_object();
      json_object_object_add(l, "time_s", json_object_new_double(time_limit));
      json_object_object_add(c, "limits", l);
    }
  } else {
    cases = json_object_get(p->cases);
  }
  json_object_object_add(req, "cases", cases);
  json_object_object_add(req, "stop", str(stop));
  if (p->fn_name) json_object_object_add(req, "fn_name", str(p->fn_name));
  if (warm) json_object_object_add(req, "warm", json_object_new_boolean(1));
  return req;
}
