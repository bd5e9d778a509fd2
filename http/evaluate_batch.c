/* SandboxFusion's POST /common_evaluate_batch (its fork's endpoint that
 * code-RL reward functions call: one completion, many test cases) as ONE
 * native exec job whose run step carries the cases: the build runs once.
 *
 * Request (fields this endpoint does not know are ignored):
 *   id, dataset                     optional; id is given back (default 0)
 *   completion                      the model's text; the code is extracted as SandboxFusion does (extract.c)
 *   config.language                 SandboxFusion's value ("javascript" is "nodejs", as there)
 *   config.compile_timeout, run_timeout   seconds (default 10 each)
 *   config.memory_limit_MB | mem_limit    MiB (default: the daemon's)
 *   config.provided_data.test_cases {type: stdin_stdout | function_call, fn_name, input: [...], output: [...],
 *                                    json_input}, or {type: assert, test, entry_point} (Python)
 *   config.extra.run_all_cases      false (default): stop at the first failure, as SandboxFusion
 *   config.extra.total_timeout      seconds for all the cases (default 300; config.total_timeout also read)
 *   config.extra.special_judge_program, special_judge_language   a checker judges every stdin_stdout case
 * Answer: SandboxFusion's EvalResult {id, accepted, extracted_code,
 * extracted_type, full_code, test_code, tests: [{passed, exec_info (a
 * /run_code answer), test_info}], extra} and "surgebox" (docs/http.md). */
#include "internal.h"

#include "json_seconds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SBH_TEST_INFO_CHARS 1000 /* test_info strings are cut here, as SandboxFusion's truncate_str */
#define SBH_CASE_OUTPUT_BYTES 65536

static json_object *get(json_object *o, const char *k) {
  json_object *v = NULL;
  return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static const char *get_str(json_object *o, const char *k) {
  json_object *v = get(o, k);
  return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static bool is_null(json_object *v) { return !v || json_object_is_type(v, json_type_null); }

static bool truthy(json_object *v) {
  if (is_null(v)) return false;
  if (json_object_is_type(v, json_type_boolean)) return json_object_get_boolean(v);
  if (json_object_is_type(v, json_type_int)) return json_object_get_int64(v) != 0;
  return false;
}

/* A string cut at a UTF-8 boundary near max bytes, "..." marking the cut. */
static json_object *cut_string(const char *s, size_t n) {
  if (n <= SBH_TEST_INFO_CHARS) return json_object_new_string_len(s, (int)n);
  size_t k = SBH_TEST_INFO_CHARS;
  while (k && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
  char *b = malloc(k + 4);
  if (!b) return NULL;
  memcpy(b, s, k);
  memcpy(b + k, "...", 4);
  json_object *o = json_object_new_string(b);
  free(b);
  return o;
}

/* SandboxFusion's stdout rule, as near as the judge's modes come: numbers
 * equal within a relative 1e-5 (its float_equal), other tokens with letter
 * case ignored (its lower_cmp, on by default) (docs/http.md says where the
 * two differ). */
static json_object *compare(void) {
  json_object *c = json_object_new_object();
  json_object_object_add(c, "mode", json_object_new_string("numbers"));
  json_object_object_add(c, "abs_tol", json_object_new_double(0));
  json_object_object_add(c, "rel_tol", sbu_json_number(1e-5));
  json_object_object_add(c, "ignore_case", json_object_new_boolean(1));
  return c;
}

/* A stdin_stdout case into k, as SandboxFusion shows it into info. 0, or an answer was sent. */
static int stdin_case(sbh_conn *c, size_t i, json_object *x, json_object *y, bool judge, json_object *k,
                      json_object *info) {
  if (!json_object_is_type(x, json_type_string) || !json_object_is_type(y, json_type_string))
    return sbh_send_error(c, 422, "stdin_stdout case %zu: input and output must be strings", i), -1;
  json_object_object_add(k, "stdin", json_object_get(x));
  json_object_object_add(k, "expected", json_object_get(y));
  json_object_object_add(k, "compare", judge ? json_object_new_string("checker") : compare());
  json_object *ii = json_object_new_object(), *oo = json_object_new_object();
  json_object_object_add(ii, "stdin", cut_string(json_object_get_string(x), (size_t)json_object_get_string_len(x)));
  json_object_object_add(oo, "stdout", cut_string(json_object_get_string(y), (size_t)json_object_get_string_len(y)));
  json_object_object_add(info, "input", ii);
  json_object_object_add(info, "output", oo);
  return 0;
}

/* One JSON value (a number may end the text), or NULL. */
static json_object *json_value(const char *s, size_t len, bool *ok) {
  json_tokener *tok = json_tokener_new();
  json_object *v = tok ? json_tokener_parse_ex(tok, s, (int)len) : NULL;
  *ok = tok && json_tokener_get_error(tok) == json_tokener_success;
  if (!*ok && tok && json_tokener_get_error(tok) == json_tokener_continue) /* a number at the end */
    v = json_tokener_parse_ex(tok, "", 1), *ok = json_tokener_get_error(tok) == json_tokener_success;
  if (tok) json_tokener_free(tok);
  return v;
}

/* SandboxFusion's json_input: one JSON value per line of x (the arguments),
 * the output y one JSON value. 0, or an answer was sent. */
static int json_input_case(sbh_conn *c, size_t i, json_object *x, json_object *y, json_object **args,
                           json_object **expected) {
  *args = json_object_new_array();
  const char *s = json_object_get_string(x);
  size_t len = (size_t)json_object_get_string_len(x);
  for (size_t p = 0; p <= len;) {
    const char *nl = memchr(s + p, '\n', len - p);
    size_t e = nl ? (size_t)(nl - s) : len;
    bool ok;
    json_object *v = json_value(s + p, e - p, &ok);
    if (!ok) {
      if (v) json_object_put(v);
      json_object_put(*args);
      return sbh_send_error(c, 422, "function_call case %zu: json_input line is not JSON", i), -1;
    }
    json_object_array_add(*args, v);
    p = e + 1;
  }
  const char *ys = json_object_is_type(y, json_type_string) ? json_object_get_string(y) : NULL;
  *expected = ys ? json_tokener_parse(ys) : NULL;
  if (!*expected && !(ys && !strcmp(ys, "null"))) {
    json_object_put(*args);
    return sbh_send_error(c, 422, "function_call case %zu: with json_input the output must be JSON text", i), -1;
  }
  return 0;
}

/* A function_call case into k, as SandboxFusion shows it into info. 0, or an answer was sent. */
static int fn_case(sbh_conn *c, size_t i, json_object *x, json_object *y, json_object *tc, json_object *k,
                   json_object *info) {
  json_object *args = NULL, *expected = NULL;
  if (json_object_is_type(x, json_type_string) && truthy(get(tc, "json_input"))) {
    if (json_input_case(c, i, x, y, &args, &expected) < 0) return -1;
  } else {
    if (!json_object_is_type(x, json_type_array))
      return sbh_send_error(c, 422, "function_call case %zu: input must be the list of the function's arguments", i),
             -1;
    args = json_object_get(x);
    /* SandboxFusion asserts fn(*input) == output[0]: the output is a one-element list */
    if (json_object_is_type(y, json_type_array) && json_object_array_length(y) >= 1)
      expected = json_object_get(json_object_array_get_idx(y, 0));
    else
      expected = json_object_get(y);
  }
  json_object_object_add(k, "args", args);
  json_object_object_add(k, "expected", expected);
  json_object_object_add(info, "type", json_object_new_string("function_call"));
  json_object_object_add(info, "fn_name", json_object_get(get(tc, "fn_name")));
  json_object_object_add(info, "input", json_object_get(x));
  json_object_object_add(info, "output", json_object_get(y));
  return 0;
}

/* The cases into the native request's "cases"; ctx's "test_info" gets each
 * case as SandboxFusion shows it. 0, or an answer was sent. */
static int read_cases(sbh_conn *c, json_object *tc, bool fn, bool judge, json_object *cases, json_object *infos) {
  json_object *in = get(tc, "input"), *out = get(tc, "output");
  if (!in || !json_object_is_type(in, json_type_array) || !out || !json_object_is_type(out, json_type_array))
    return sbh_send_error(c, 422, "config.provided_data.test_cases needs \"input\" and \"output\" lists"), -1;
  size_t n = json_object_array_length(in);
  if (n != json_object_array_length(out))
    return sbh_send_error(c, 422, "config.provided_data.test_cases: %zu inputs but %zu outputs", n,
                          json_object_array_length(out)),
           -1;
  if (n == 0)
    return sbh_send_error(c, 422, "config.provided_data.test_cases has no case (an empty list would be \"accepted\")"),
           -1;
  for (size_t i = 0; i < n; i++) {
    json_object *x = json_object_array_get_idx(in, i), *y = json_object_array_get_idx(out, i);
    json_object *k = json_object_new_object(), *info = json_object_new_object();
    json_object_array_add(cases, k);
    json_object_array_add(infos, info);
    if ((fn ? fn_case(c, i, x, y, tc, k, info) : stdin_case(c, i, x, y, judge, k, info)) < 0) return -1;
  }
  return 0;
}

/* SandboxFusion's special judge (config.extra.special_judge_program, in
 * special_judge_language, python by default) as the native checker: its
 * toolchain and source name are the languages map's (never a path the
 * client names), its files SandboxFusion's (stdin.txt, stdout.txt: the
 * expected, answer.txt: the program's output; exit 0 accepts), its run
 * 10 s as there. NULL with an answer sent. */
static json_object *special_judge(sbh_conn *c, json_object *extra, bool fn) {
  json_object *prog = get(extra, "special_judge_program");
  if (!json_object_is_type(prog, json_type_string) || json_object_get_string_len(prog) == 0) {
    sbh_send_error(c, 422, "config.extra.special_judge_program must be the checker's source text");
    return NULL;
  }
  if (fn) {
    sbh_send_error(c, 400, "config.extra.special_judge_program judges stdin_stdout cases, not function_call");
    return NULL;
  }
  json_object *lv = get(extra, "special_judge_language");
  const char *lang = is_null(lv) ? "python" : json_object_is_type(lv, json_type_string) ? json_object_get_string(lv)
                                                                                         : NULL;
  if (!lang) {
    sbh_send_error(c, 422, "config.extra.special_judge_language must be a language name (default \"python\")");
    return NULL;
  }
  const sbh_language *L = sbh_language_find(&c->srv->langs, lang);
  if (!L || L->missing || L->profile) {
    if (!L) sbh_send_error(c, 400, "special_judge_language %.64s is not served here (%s lists the values)", lang,
                           c->srv->langs.path);
    else if (L->missing) sbh_send_error(c, 400, "special_judge_language %.64s cannot run here: %s", lang, L->missing);
    else sbh_send_error(c, 400, "special_judge_language %.64s runs in a profile; a checker runs on the host's "
                        "toolchains: pick another language", lang);
    return NULL;
  }
  json_object *chk = json_object_new_object(), *files = json_object_new_array(), *src = json_object_new_object();
  json_object_object_add(src, "path", json_object_new_string(L->source));
  json_object_object_add(src, "content", json_object_get(prog));
  json_object_array_add(files, src);
  if (L->files) {
    json_object_object_foreach(L->files, path, content) {
      if (!strcmp(path, L->source)) continue;
      json_object *f = json_object_new_object();
      json_object_object_add(f, "path", json_object_new_string(path));
      json_object_object_add(f, "content", json_object_get(content));
      json_object_array_add(files, f);
    }
  }
  json_object *lim = json_object_new_object();
  json_object_object_add(lim, "time_s", sbu_json_number(10));
  json_object_object_add(lim, "cpu_time_s", sbu_json_number(10));
  json_object_object_add(chk, "toolchain", json_object_new_string(L->toolchain));
  json_object_object_add(chk, "files", files);
  if (L->options) json_object_object_add(chk, "options", json_object_get(L->options));
  json_object_object_add(chk, "limits", lim);
  json_object_object_add(chk, "io", json_object_new_string("sandboxfusion"));
  return chk;
}

/* The standard-library imports SandboxFusion puts before a Python assert
 * test's code (its numpy lines left out: not every host has numpy). */
static const char assert_preamble[] =
    "import math\nimport re\nimport sys\nimport copy\nimport datetime\nimport itertools\nimport collections\n"
    "import heapq\nimport statistics\nimport functools\nimport hashlib\nimport string\nfrom typing import *\n"
    "from collections import *\n";

static bool python_name(const char *s) {
  if (!*s || strlen(s) > 128 || (*s >= '0' && *s <= '9')) return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return false;
  return true;
}

/* An assert test (HumanEval's {test, entry_point}; MBPP's asserts as test
 * alone): the program is the preamble, the code, the test and, with an
 * entry_point, check(entry_point), run once; it passes when it exits 0.
 * The full program (malloc'd), or NULL with an answer sent. */
static char *assert_program(sbh_conn *c, json_object *tc, const char *code) {
  const char *test = get_str(tc, "test");
  json_object *ep = get(tc, "entry_point");
  if (!test) {
    sbh_send_error(c, 422, "an assert test_cases needs \"test\" (the Python test code run after the solution)");
    return NULL;
  }
  const char *name = is_null(ep) ? NULL : json_object_is_type(ep, json_type_string) ? json_object_get_string(ep) : "";
  if (name && !python_name(name)) {
    sbh_send_error(c, 422, "an assert test_cases' entry_point must be a Python name (the function check() is given)");
    return NULL;
  }
  size_t n = sizeof assert_preamble + strlen(code) + strlen(test) + (name ? strlen(name) : 0) + 16;
  char *full = malloc(n);
  if (!full) {
    sbh_send_error(c, 500, "out of memory");
    return NULL;
  }
  snprintf(full, n, "%s%s\n%s\n%s%s%s", assert_preamble, code, test, name ? "check(" : "", name ? name : "",
           name ? ")\n" : "");
  return full;
}

/* A number of seconds from the config, > 0; -1 with an answer sent. */
static int seconds(sbh_conn *c, json_object *v, const char *name, double *out) {
  if (is_null(v)) return 0;
  if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double)) {
    sbh_send_error(c, 422, "%s must be a number of seconds", name);
    return -1;
  }
  double d = json_object_get_double(v);
  if (!isfinite(d) || d <= 0 || d > 86400) {
    sbh_send_error(c, 422, "%s must be more than 0 and at most 86400 seconds", name);
    return -1;
  }
  *out = d;
  return 0;
}

/* What a batch asks, read from its config. */
typedef struct {
  json_object *completion, *config, *extra, *tc, *fn_name, *mem;
  const char *lang;
  bool fn, asserts;
  double ct, rt, total;
  const sbh_language *L;
} batch;

/* The completion, the language and the test cases' kind. 0, or an answer was sent. */
static int read_kind(sbh_conn *c, json_object *body, batch *b) {
  b->completion = get(body, "completion");
  b->config = get(body, "config");
  if (!b->completion || !json_object_is_type(b->completion, json_type_string))
    return sbh_send_error(c, 422, "completion is required (a string: the model's answer with its code)"), -1;
  if (!b->config || !json_object_is_type(b->config, json_type_object))
    return sbh_send_error(c, 422, "config is required (an object with language and provided_data.test_cases)"), -1;
  b->lang = get_str(b->config, "language");
  if (!b->lang) return sbh_send_error(c, 400, "config.language field must exist (a string, e.g. \"python\")"), -1;
  if (!strcmp(b->lang, "javascript")) b->lang = "nodejs"; /* as SandboxFusion's endpoint */
  if (!is_null(get(b->config, "custom_extract_logic")))
    return sbh_send_error(c, 400, "config.custom_extract_logic is not served (it runs client code outside a sandbox)"),
           -1;
  b->extra = get(b->config, "extra");
  if (b->extra && !json_object_is_type(b->extra, json_type_object))
    return sbh_send_error(c, 422, "config.extra must be an object"), -1;
  b->tc = get(get(b->config, "provided_data"), "test_cases");
  if (!b->tc || !json_object_is_type(b->tc, json_type_object))
    return sbh_send_error(c, 422,
                          "config.provided_data.test_cases is required (an object {type, fn_name, input, output})"),
           -1;
  const char *type = get_str(b->tc, "type");
  b->fn_name = get(b->tc, "fn_name");
  if (!type) type = !is_null(b->fn_name) ? "function_call" : "stdin_stdout"; /* SandboxFusion's guess */
  b->fn = !strcmp(type, "function_call");
  b->asserts = !strcmp(type, "assert");
  if (!b->fn && !b->asserts && strcmp(type, "stdin_stdout") != 0)
    return sbh_send_error(c, 400, "test_cases type %.40s is not served here: stdin_stdout, function_call or assert",
                          type),
           -1;
  return 0;
}

/* What the kind allows, the timeouts, the memory and the language's entry. 0, or an answer was sent. */
static int read_rest(sbh_conn *c, batch *b) {
  const char *lang = b->lang;
  if (b->asserts && strcmp(lang, "python") != 0 && strcmp(lang, "python3") != 0)
    return sbh_send_error(c, 400, "assert test_cases are served for python only (%.40s: send stdin_stdout)", lang), -1;
  if (b->asserts && !is_null(get(b->extra, "special_judge_program")))
    return sbh_send_error(c, 400, "config.extra.special_judge_program judges stdin_stdout cases, not assert"), -1;
  if (b->fn && (!b->fn_name || !json_object_is_type(b->fn_name, json_type_string)))
    return sbh_send_error(c, 422, "a function_call test_cases needs fn_name (a string)"), -1;
  if (b->fn && strcmp(lang, "python") != 0)
    return sbh_send_error(c, 400, "function_call cases are served for python only (%.40s: send stdin_stdout)", lang),
           -1;
  b->ct = 10, b->rt = 10, b->total = 300;
  if (seconds(c, get(b->config, "compile_timeout"), "config.compile_timeout", &b->ct) < 0 ||
      seconds(c, get(b->config, "run_timeout"), "config.run_timeout", &b->rt) < 0 ||
      seconds(c, get(b->config, "total_timeout"), "config.total_timeout", &b->total) < 0 ||
      seconds(c, get(b->extra, "total_timeout"), "config.extra.total_timeout", &b->total) < 0)
    return -1;
  b->mem = get(b->config, "memory_limit_MB");
  if (is_null(b->mem)) b->mem = get(b->config, "mem_limit");
  if (!is_null(b->mem) && !json_object_is_type(b->mem, json_type_int))
    return sbh_send_error(c, 422, "config.memory_limit_MB must be an integer (MiB; -1: the daemon's default)"), -1;
  b->L = sbh_language_find(&c->srv->langs, lang);
  if (!b->L) return sbh_send_error(c, 400, "language %.64s is not served here (%s lists the values)", lang,
                                   c->srv->langs.path), -1;
  if (b->L->missing) return sbh_send_error(c, 400, "language %.64s cannot run here: %s", lang, b->L->missing), -1;
  return 0;
}

/* The native toolchain request for the program, built as /run_code builds
 * it; 0, or an answer was sent. */
static int program_request(sbh_conn *c, const batch *b, const char *program, json_object **native, json_object **ctx,
                           double *budget) {
  json_object *rc = json_object_new_object();
  json_object_object_add(rc, "code", json_object_new_string(program));
  json_object_object_add(rc, "language", json_object_new_string(b->lang));
  json_object_object_add(rc, "compile_timeout", sbu_json_number(b->ct));
  json_object_object_add(rc, "run_timeout", sbu_json_number(b->rt));
  if (!is_null(b->mem)) json_object_object_add(rc, "memory_limit_MB", json_object_get(b->mem));
  int r = sbh_run_code_request(c, rc, native, ctx, budget);
  json_object_put(rc);
  return r;
}

/* The cases and how to run them into native; what the answer needs into ctx. */
static void add_cases(const batch *b, json_object *body, json_object *native, json_object *ctx, json_object *cases,
                      json_object *checker) {
  bool run_all = truthy(get(b->extra, "run_all_cases"));
  json_object_object_add(native, "cases", cases);
  json_object_object_add(native, "stop", json_object_new_string(run_all ? "never" : "first_failure"));
  json_object_object_add(native, "budget_s", sbu_json_number(b->total));
  json_object_object_add(native, "case_output_bytes", json_object_new_int64(SBH_CASE_OUTPUT_BYTES));
  if (b->fn) json_object_object_add(native, "fn_name", json_object_get(b->fn_name));
  if (checker) json_object_object_add(native, "checker", checker);
  json_object_object_del(native, "outputs_max_bytes");
  json_object_object_add(ctx, "id", json_object_get(get(body, "id")));
  json_object_object_add(ctx, "run_all_cases", json_object_new_boolean(run_all));
  json_object_object_add(ctx, "function_call", json_object_new_boolean(b->fn));
}

/* The cases (an assert test: one, the program's end; SandboxFusion's
 * test_info is null), the checker, the native request. 0, or an answer was sent. */
static int batch_request(sbh_conn *c, const batch *b, json_object *body, const char *code, const char *full,
                         json_object **native, json_object **ctx, double *budget) {
  json_object *checker = NULL;
  if (!is_null(get(b->extra, "special_judge_program")) && !(checker = special_judge(c, b->extra, b->fn))) return -1;
  json_object *cases = json_object_new_array(), *infos = json_object_new_array();
  if (b->asserts) {
    json_object_array_add(cases, json_object_new_object());
    json_object_array_add(infos, NULL);
  }
  if ((!b->asserts && read_cases(c, b->tc, b->fn, checker != NULL, cases, infos) < 0) ||
      program_request(c, b, full ? full : code, native, ctx, budget) != 0) {
    json_object_put(cases);
    json_object_put(infos);
    if (checker) json_object_put(checker);
    return -1;
  }
  add_cases(b, body, *native, *ctx, cases, checker);
  json_object_object_add(*ctx, "test_info", infos);
  return 0;
}

void sbh_evaluate_batch(sbh_conn *c, json_object *body) {
  batch b = {0};
  if (read_kind(c, body, &b) < 0 || read_rest(c, &b) < 0) return;
  const char *etype = "empty";
  char *code = sbh_extract_code(json_object_get_string(b.completion),
                                (size_t)json_object_get_string_len(b.completion), b.lang, &etype);
  if (!code) {
    sbh_send_error(c, 500, "out of memory");
    return;
  }
  char *full = NULL; /* an assert test's whole program */
  json_object *native = NULL, *ctx = NULL;
  double budget = 0;
  if ((b.asserts && !(full = assert_program(c, b.tc, code))) ||
      batch_request(c, &b, body, code, full, &native, &ctx, &budget) < 0) {
    free(code);
    free(full);
    return;
  }
  json_object_object_add(ctx, "code", json_object_new_string(code));
  json_object_object_add(ctx, "extracted_type", json_object_new_string(etype));
  if (full) json_object_object_add(ctx, "full_code", json_object_new_string(full));
  free(code);
  free(full);
  sbh_req_submit(c, native, sbh_evaluate_batch_answer, ctx, budget);
  json_object_put(native);
}

/* ---- the answer ---- */

/* One case's run_result (a CommandRunResult) from its native document, and
 * whether it is an Error. The verdict table is in docs/http.md. */
static json_object *case_run_result(json_object *k, bool *error) {
  const char *v = get_str(k, "verdict");
  json_object *ec = get(k, "exit_code");
  int sig = sbh_signal_number(get_str(k, "signal"));
  const char *status = "Finished";
  json_object *rc = NULL;
  *error = false;
  if (!v || !strcmp(v, "internal_error") || !strcmp(v, "judge_error")) {
    status = "Error";
    *error = true;
  } else if (!strcmp(v, "time_limit")) {
    status = "TimeLimitExceeded";
  } else if (ec && json_object_is_type(ec, json_type_int) && json_object_get_int64(ec) != 0) {
    rc = json_object_new_int64(json_object_get_int64(ec));
  } else if (!strcmp(v, "signaled") || !strcmp(v, "memory_limit") || !strcmp(v, "output_limit")) {
    rc = json_object_new_int64(sig ? -sig : -9); /* never 0: the run failed */
  } else {
    rc = json_object_new_int64(ec && json_object_is_type(ec, json_type_int) ? json_object_get_int64(ec) : 0);
  }
  return sbh_run_result(status, rc, k);
}

/* exec_info: a /run_code answer for one case. */
static json_object *exec_info(const sbh_server *s, json_object *compile, json_object *run, bool error,
                              const char *message) {
  json_object *a = sbh_run_code_answer_new(s);
  bool failed = false;
  json_object *rc;
  if (compile) {
    rc = get(compile, "return_code");
    failed |= !strcmp(get_str(compile, "status"), "TimeLimitExceeded") || (rc && json_object_get_int64(rc) != 0);
    error |= !strcmp(get_str(compile, "status"), "Error");
    json_object_object_add(a, "compile_result", json_object_get(compile));
  }
  if (run) {
    rc = get(run, "return_code");
    failed |= !strcmp(get_str(run, "status"), "TimeLimitExceeded") || (rc && json_object_get_int64(rc) != 0);
    json_object_object_add(a, "run_result", run);
  }
  json_object_object_add(a, "status", json_object_new_string(error ? "SandboxError" : failed ? "Failed" : "Success"));
  json_object_object_add(a, "message", json_object_new_string(message ? message : ""));
  return a;
}

static json_object *test(json_object *exec, bool passed, json_object *info) {
  json_object *t = json_object_new_object();
  json_object_object_add(t, "passed", json_object_new_boolean(passed));
  json_object_object_add(t, "exec_info", exec);
  json_object_object_add(t, "test_info", json_object_get(info));
  return t;
}

/* surgebox's record of a case: the native document less its output (in exec_info). */
static json_object *case_record(json_object *k) {
  json_object *r = json_object_new_object();
  json_object_object_foreach(k, key, val) {
    if (!strcmp(key, "stdout") || !strcmp(key, "stderr")) continue;
    json_object_object_add(r, key, json_object_get(val));
  }
  return r;
}

static json_object *eval_result(json_object *ctx, bool accepted, json_object *tests, json_object *sb) {
  json_object *a = json_object_new_object();
  json_object *id = get(ctx, "id");
  json_object_object_add(a, "id", id ? json_object_get(id) : json_object_new_int(0));
  json_object_object_add(a, "accepted", json_object_new_boolean(accepted));
  json_object_object_add(a, "extracted_code", json_object_get(get(ctx, "code")));
  json_object_object_add(a, "full_code", json_object_get(get(ctx, "full_code")));
  json_object_object_add(a, "test_code", NULL);
  json_object_object_add(a, "tests", tests);
  json_object_object_add(a, "extracted_type", json_object_get(get(ctx, "extracted_type")));
  json_object_object_add(a, "extra", NULL);
  json_object_object_add(a, "surgebox", sb);
  return a;
}

/* Every test one SandboxError (the daemon went away, a toolchain missing). */
static json_object *all_sandbox_error(const sbh_server *s, json_object *ctx, const char *message, json_object *sb) {
  json_object *tests = json_object_new_array(), *infos = get(ctx, "test_info");
  size_t n = json_object_array_length(infos), shown = truthy(get(ctx, "run_all_cases")) ? n : 1;
  for (size_t i = 0; i < shown && i < n; i++) {
    json_object *e = exec_info(s, NULL, NULL, true, message);
    json_object_array_add(tests, test(e, false, json_object_array_get_idx(infos, i)));
  }
  return eval_result(ctx, false, tests, sb);
}

/* The daemon refused the request, or its job did not run: the answer
 * (a 503/400 detail, or every test a SandboxError); NULL when it ran. */
static json_object *not_run_answer(const sbh_server *s, json_object *native, json_object *ctx, json_object *sb,
                                   int *http_status) {
  const char *code;
  char refused[SBH_ERR_MAX];
  json_object *refusal = sbh_refusal(native, &code, refused, sizeof refused);
  if (refusal) {
    if (code && strcmp(code, "internal") != 0 && strcmp(code, "unknown_toolchain") != 0) {
      *http_status = !strcmp(code, "busy") ? 503 : 400; /* never a verdict */
      return sbh_detail_answer(refused, sb);
    }
    json_object_object_add(sb, "error", json_object_get(refusal));
    return all_sandbox_error(s, ctx, refused, sb);
  }
  const char *nstatus = get_str(native, "status");
  json_object_object_add(sb, "status", json_object_new_string(nstatus ? nstatus : "?"));
  static const char *const keep[] = {"queue_time_s", "toolchain", NULL};
  for (size_t i = 0; keep[i]; i++)
    if (get(native, keep[i])) json_object_object_add(sb, keep[i], json_object_get(get(native, keep[i])));
  char m[SBH_ERR_MAX];
  return sbh_not_run(native, m, sizeof m) ? all_sandbox_error(s, ctx, m, sb) : NULL;
}

/* Each step's record (less its cases and output) into sb; the compile step
 * and the run step with the cases found. */
static void step_records(json_object *native, json_object *sb, json_object **compile, json_object **run) {
  json_object *steps = get(native, "steps"), *recs = json_object_new_array();
  for (size_t i = 0; steps && i < json_object_array_length(steps); i++) {
    json_object *st = json_object_array_get_idx(steps, i);
    const char *name = get_str(st, "name");
    if (name && !strcmp(name, "compile")) *compile = st;
    else if (get(st, "cases")) *run = st;
    json_object *rec = json_object_new_object();
    json_object_object_foreach(st, key, val) {
      if (!strcmp(key, "cases") || !strcmp(key, "stdout") || !strcmp(key, "stderr")) continue;
      json_object_object_add(rec, key, json_object_get(val));
    }
    json_object_array_add(recs, rec);
  }
  json_object_object_add(sb, "steps", recs);
}

/* No case ran: the build failed (compile_error), or an earlier step did. */
static json_object *no_case_answer(const sbh_server *s, json_object *native, json_object *ctx, json_object *sb,
                                   json_object *compile_result, const char *cerr) {
  json_object *nr = get(native, "cases_not_run");
  json_object *nr0 = nr && json_object_array_length(nr) ? json_object_array_get_idx(nr, 0) : NULL;
  if (nr0) {
    json_object_object_add(sb, "case_counts", json_object_get(get(nr0, "case_counts")));
    json_object_object_add(sb, "verdict", json_object_get(get(nr0, "verdict")));
  }
  bool build_failed = compile_result && !cerr;
  const char *msg = cerr ? cerr : build_failed ? NULL : get_str(native, "error") ? get_str(native, "error") : "no case ran";
  json_object *infos = get(ctx, "test_info"), *tests = json_object_new_array();
  size_t shown = truthy(get(ctx, "run_all_cases")) ? json_object_array_length(infos) : 1;
  for (size_t i = 0; i < shown; i++) {
    json_object *e = exec_info(s, compile_result, NULL, !build_failed, msg);
    json_object_array_add(tests, test(e, false, json_object_array_get_idx(infos, i)));
  }
  json_object_object_add(sb, "cases", json_object_new_array());
  return eval_result(ctx, false, tests, sb);
}

/* Each case's test (exec_info and test_info) into tests, its record into
 * crecs; whether every one shown passed. */
static bool case_tests(const sbh_server *s, json_object *ctx, json_object *run, json_object *compile_result,
                       json_object *tests, json_object *crecs) {
  json_object *infos = get(ctx, "test_info"), *kcases = get(run, "cases"), *ff = get(run, "first_failure");
  size_t n = json_object_array_length(infos);
  bool run_all = truthy(get(ctx, "run_all_cases")), accepted = true;
  long first_failure = ff && json_object_is_type(ff, json_type_int) ? (long)json_object_get_int64(ff) : -1;
  for (size_t i = 0; i < json_object_array_length(kcases) && i < n; i++) {
    json_object *k = json_object_array_get_idx(kcases, i);
    const char *v = get_str(k, "verdict");
    json_object_array_add(crecs, case_record(k));
    if (v && !strcmp(v, "skipped")) {
      /* after the first failure SandboxFusion lists no more; past total_timeout it lists a SandboxError */
      if (!run_all && first_failure >= 0 && (long)i > first_failure) continue;
      accepted = false;
      json_object_array_add(tests, test(exec_info(s, NULL, NULL, true, "Total Timeout"), false, NULL));
      continue;
    }
    bool error = false;
    json_object *rr = case_run_result(k, &error);
    bool passed = v && !strcmp(v, "accepted");
    accepted &= passed;
    const char *msg = error ? (get_str(k, "error") ? get_str(k, "error") : get_str(k, "why") ? get_str(k, "why") : v)
                            : NULL;
    json_object *e = exec_info(s, compile_result, rr, error, msg);
    json_object_array_add(tests, test(e, passed, json_object_array_get_idx(infos, i)));
  }
  return accepted;
}

json_object *sbh_evaluate_batch_answer(const sbh_server *s, json_object *native, json_object *ctx, int *http_status) {
  *http_status = 200;
  json_object *sb = json_object_new_object();
  json_object_object_add(sb, "language", json_object_get(get(ctx, "language")));
  if (!native) return all_sandbox_error(s, ctx, "the daemon is shutting down", sb);
  json_object *a = not_run_answer(s, native, ctx, sb, http_status);
  if (a) return a;
  json_object *compile = NULL, *run = NULL;
  step_records(native, sb, &compile, &run);
  const char *cerr = NULL;
  json_object *compile_result = compile ? sbh_command_result(compile, &cerr) : NULL;
  if (!run || !get(run, "cases")) {
    a = no_case_answer(s, native, ctx, sb, compile_result, cerr);
  } else {
    json_object_object_add(sb, "case_counts", json_object_get(get(run, "case_counts")));
    json_object_object_add(sb, "first_failure", json_object_get(get(run, "first_failure")));
    json_object *tests = json_object_new_array(), *crecs = json_object_new_array();
    bool accepted = case_tests(s, ctx, run, compile_result, tests, crecs);
    json_object_object_add(sb, "cases", crecs);
    a = eval_result(ctx, accepted && json_object_array_length(tests) > 0, tests, sb);
    a = sbh_answer_bounded(s, a, ctx, all_sandbox_error);
  }
  if (compile_result) json_object_put(compile_result);
  return a;
}
