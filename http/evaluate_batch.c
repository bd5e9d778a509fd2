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

/* The cases into the native request's "cases"; ctx's "test_info" gets each
 * case as SandboxFusion shows it. 0, or an answer was sent. */
static int read_cases(sbh_conn *c, json_object *tc, bool fn, bool judge, json_object *cases, json_object *infos) {
  json_object *in = get(tc, "input"), *out = get(tc, "output"), *fn_name = get(tc, "fn_name");
  if (!in || !json_object_is_type(in, json_type_array) || !out || !json_object_is_type(out, json_type_array)) {
    sbh_send_error(c, 422, "config.provided_data.test_cases needs \"input\" and \"output\" lists");
    return -1;
  }
  size_t n = json_object_array_length(in);
  if (n != json_object_array_length(out)) {
    sbh_send_error(c, 422, "config.provided_data.test_cases: %zu inputs but %zu outputs", n,
                   json_object_array_length(out));
    return -1;
  }
  if (n == 0) {
    sbh_send_error(c, 422, "config.provided_data.test_cases has no case (an empty list would be \"accepted\")");
    return -1;
  }
  bool json_input = truthy(get(tc, "json_input"));
  for (size_t i = 0; i < n; i++) {
    json_object *x = json_object_array_get_idx(in, i), *y = json_object_array_get_idx(out, i);
    json_object *k = json_object_new_object(), *info = json_object_new_object();
    json_object_array_add(cases, k);
    json_object_array_add(infos, info);
    if (!fn) {
      if (!json_object_is_type(x, json_type_string) || !json_object_is_type(y, json_type_string)) {
        sbh_send_error(c, 422, "stdin_stdout case %zu: input and output must be strings", i);
        return -1;
      }
      json_object_object_add(k, "stdin", json_object_get(x));
      json_object_object_add(k, "expected", json_object_get(y));
      json_object_object_add(k, "compare", judge ? json_object_new_string("checker") : compare());
      json_object *ii = json_object_new_object(), *oo = json_object_new_object();
      json_object_object_add(ii, "stdin", cut_string(json_object_get_string(x), (size_t)json_object_get_string_len(x)));
      json_object_object_add(oo, "stdout", cut_string(json_object_get_string(y), (size_t)json_object_get_string_len(y)));
      json_object_object_add(info, "input", ii);
      json_object_object_add(info, "output", oo);
      continue;
    }
    json_object *args = NULL, *expected = NULL;
    if (json_object_is_type(x, json_type_string) && json_input) {
      /* SandboxFusion: one JSON value per line of input, the output one JSON value */
      args = json_object_new_array();
      const char *s = json_object_get_string(x);
      size_t len = (size_t)json_object_get_string_len(x);
      for (size_t p = 0; p <= len;) {
        const char *nl = memchr(s + p, '\n', len - p);
        size_t e = nl ? (size_t)(nl - s) : len;
        json_tokener *tok = json_tokener_new();
        json_object *v = tok ? json_tokener_parse_ex(tok, s + p, (int)(e - p)) : NULL;
        bool ok = tok && json_tokener_get_error(tok) == json_tokener_success;
        if (!ok && tok && json_tokener_get_error(tok) == json_tokener_continue) /* a number at the end */
          v = json_tokener_parse_ex(tok, "", 1), ok = json_tokener_get_error(tok) == json_tokener_success;
        if (tok) json_tokener_free(tok);
        if (!ok) {
          if (v) json_object_put(v);
          json_object_put(args);
          sbh_send_error(c, 422, "function_call case %zu: json_input line is not JSON", i);
          return -1;
        }
        json_object_array_add(args, v);
        p = e + 1;
      }
      const char *ys = json_object_is_type(y, json_type_string) ? json_object_get_string(y) : NULL;
      expected = ys ? json_tokener_parse(ys) : NULL;
      if (!expected && !(ys && !strcmp(ys, "null"))) {
        json_object_put(args);
        sbh_send_error(c, 422, "function_call case %zu: with json_input the output must be JSON text", i);
        return -1;
      }
    } else {
      if (!json_object_is_type(x, json_type_array)) {
        sbh_send_error(c, 422, "function_call case %zu: input must be the list of the function's arguments", i);
        return -1;
      }
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
    json_object_object_add(info, "fn_name", json_object_get(fn_name));
    json_object_object_add(info, "input", json_object_get(x));
    json_object_object_add(info, "output", json_object_get(y));
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

void sbh_evaluate_batch(sbh_conn *c, json_object *body) {
  sbh_server *s = c->srv;
  json_object *completion = get(body, "completion"), *config = get(body, "config");
  if (!completion || !json_object_is_type(completion, json_type_string)) {
    sbh_send_error(c, 422, "completion is required (a string: the model's answer with its code)");
    return;
  }
  if (!config || !json_object_is_type(config, json_type_object)) {
    sbh_send_error(c, 422, "config is required (an object with language and provided_data.test_cases)");
    return;
  }
  const char *lang = get_str(config, "language");
  if (!lang) {
    sbh_send_error(c, 400, "config.language field must exist (a string, e.g. \"python\")");
    return;
  }
  if (!strcmp(lang, "javascript")) lang = "nodejs"; /* as SandboxFusion's endpoint */
  if (!is_null(get(config, "custom_extract_logic"))) {
    sbh_send_error(c, 400, "config.custom_extract_logic is not served (it runs client code outside a sandbox)");
    return;
  }
  json_object *extra = get(config, "extra");
  if (extra && !json_object_is_type(extra, json_type_object)) {
    sbh_send_error(c, 422, "config.extra must be an object");
    return;
  }
  json_object *pd = get(config, "provided_data"), *tc = get(pd, "test_cases");
  if (!tc || !json_object_is_type(tc, json_type_object)) {
    sbh_send_error(c, 422, "config.provided_data.test_cases is required (an object {type, fn_name, input, output})");
    return;
  }
  const char *type = get_str(tc, "type");
  json_object *fn_name = get(tc, "fn_name");
  if (!type) type = !is_null(fn_name) ? "function_call" : "stdin_stdout"; /* SandboxFusion's guess */
  bool fn = !strcmp(type, "function_call"), asserts = !strcmp(type, "assert");
  if (!fn && !asserts && strcmp(type, "stdin_stdout") != 0) {
    sbh_send_error(c, 400, "test_cases type %.40s is not served here: stdin_stdout, function_call or assert", type);
    return;
  }
  if (asserts && strcmp(lang, "python") != 0 && strcmp(lang, "python3") != 0) {
    sbh_send_error(c, 400, "assert test_cases are served for python only (%.40s: send stdin_stdout)", lang);
    return;
  }
  if (asserts && !is_null(get(extra, "special_judge_program"))) {
    sbh_send_error(c, 400, "config.extra.special_judge_program judges stdin_stdout cases, not assert");
    return;
  }
  if (fn && (!fn_name || !json_object_is_type(fn_name, json_type_string))) {
    sbh_send_error(c, 422, "a function_call test_cases needs fn_name (a string)");
    return;
  }
  if (fn && strcmp(lang, "python") != 0) {
    sbh_send_error(c, 400, "function_call cases are served for python only (%.40s: send stdin_stdout)", lang);
    return;
  }
  double ct = 10, rt = 10, total = 300;
  if (seconds(c, get(config, "compile_timeout"), "config.compile_timeout", &ct) < 0 ||
      seconds(c, get(config, "run_timeout"), "config.run_timeout", &rt) < 0 ||
      seconds(c, get(config, "total_timeout"), "config.total_timeout", &total) < 0 ||
      seconds(c, get(extra, "total_timeout"), "config.extra.total_timeout", &total) < 0)
    return;
  json_object *mem = get(config, "memory_limit_MB");
  if (is_null(mem)) mem = get(config, "mem_limit");
  if (!is_null(mem) && !json_object_is_type(mem, json_type_int)) {
    sbh_send_error(c, 422, "config.memory_limit_MB must be an integer (MiB; -1: the daemon's default)");
    return;
  }
  const sbh_language *L = sbh_language_find(&s->langs, lang);
  if (!L || L->missing) {
    if (L) sbh_send_error(c, 400, "language %.64s cannot run here: %s", lang, L->missing);
    else sbh_send_error(c, 400, "language %.64s is not served here (%s lists the values)", lang, s->langs.path);
    return;
  }
  const char *etype = "empty";
  char *code = sbh_extract_code(json_object_get_string(completion), (size_t)json_object_get_string_len(completion),
                                lang, &etype);
  if (!code) {
    sbh_send_error(c, 500, "out of memory");
    return;
  }
  json_object *checker = NULL;
  if (!is_null(get(extra, "special_judge_program")) && !(checker = special_judge(c, extra, fn))) {
    free(code);
    return;
  }
  char *full = NULL; /* an assert test's whole program */
  if (asserts && !(full = assert_program(c, tc, code))) {
    free(code);
    return;
  }
  json_object *cases = json_object_new_array(), *infos = json_object_new_array();
  if (asserts) { /* one case: the program's end; SandboxFusion's test_info is null */
    json_object_array_add(cases, json_object_new_object());
    json_object_array_add(infos, NULL);
  } else if (read_cases(c, tc, fn, checker != NULL, cases, infos) < 0) {
    free(code);
    json_object_put(cases);
    json_object_put(infos);
    if (checker) json_object_put(checker);
    return;
  }
  /* the native toolchain request, built as /run_code builds it */
  json_object *rc = json_object_new_object();
  json_object_object_add(rc, "code", json_object_new_string(full ? full : code));
  json_object_object_add(rc, "language", json_object_new_string(lang));
  json_object_object_add(rc, "compile_timeout", sbu_json_number(ct));
  json_object_object_add(rc, "run_timeout", sbu_json_number(rt));
  if (!is_null(mem)) json_object_object_add(rc, "memory_limit_MB", json_object_get(mem));
  json_object *native = NULL, *ctx = NULL;
  double budget = 0;
  int r = sbh_run_code_request(c, rc, &native, &ctx, &budget);
  json_object_put(rc);
  if (r != 0) {
    free(code);
    free(full);
    json_object_put(cases);
    json_object_put(infos);
    if (checker) json_object_put(checker);
    return;
  }
  bool run_all = truthy(get(extra, "run_all_cases"));
  json_object_object_add(native, "cases", cases);
  json_object_object_add(native, "stop", json_object_new_string(run_all ? "never" : "first_failure"));
  json_object_object_add(native, "budget_s", sbu_json_number(total));
  json_object_object_add(native, "case_output_bytes", json_object_new_int64(SBH_CASE_OUTPUT_BYTES));
  if (fn) json_object_object_add(native, "fn_name", json_object_get(fn_name));
  if (checker) json_object_object_add(native, "checker", checker);
  json_object_object_del(native, "outputs_max_bytes");
  json_object_object_add(ctx, "id", json_object_get(get(body, "id")));
  json_object_object_add(ctx, "code", json_object_new_string(code));
  json_object_object_add(ctx, "extracted_type", json_object_new_string(etype));
  json_object_object_add(ctx, "run_all_cases", json_object_new_boolean(run_all));
  json_object_object_add(ctx, "test_info", infos);
  json_object_object_add(ctx, "function_call", json_object_new_boolean(fn));
  if (full) json_object_object_add(ctx, "full_code", json_object_new_string(full));
  free(code);
  free(full);
  sbh_req_submit(c, SBH_KIND_EVAL_BATCH, native, ctx, NULL, budget);
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

json_object *sbh_evaluate_batch_answer(const sbh_server *s, json_object *native, json_object *ctx, int *http_status) {
  *http_status = 200;
  json_object *sb = json_object_new_object();
  json_object_object_add(sb, "language", json_object_get(get(ctx, "language")));
  if (!native) return all_sandbox_error(s, ctx, "the daemon is shutting down", sb);
  const char *code;
  char refused[SBH_ERR_MAX];
  json_object *refusal = sbh_refusal(native, &code, refused, sizeof refused);
  if (refusal) { /* the daemon refused the request */
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
  if (nstatus && (!strcmp(nstatus, "toolchain_missing") || !strcmp(nstatus, "unsupported") ||
                  !strcmp(nstatus, "cancelled"))) {
    const char *e = get_str(native, "error");
    char m[SBH_ERR_MAX];
    snprintf(m, sizeof m, "%s: %s", nstatus, e ? e : "");
    return all_sandbox_error(s, ctx, m, sb);
  }
  /* the steps: compile (if any) and the run step with the cases */
  json_object *steps = get(native, "steps"), *compile = NULL, *run = NULL, *recs = json_object_new_array();
  for (size_t i = 0; steps && i < json_object_array_length(steps); i++) {
    json_object *st = json_object_array_get_idx(steps, i);
    const char *name = get_str(st, "name");
    if (name && !strcmp(name, "compile")) compile = st;
    else if (get(st, "cases")) run = st;
    json_object *rec = json_object_new_object();
    json_object_object_foreach(st, key, val) {
      if (!strcmp(key, "cases") || !strcmp(key, "stdout") || !strcmp(key, "stderr")) continue;
      json_object_object_add(rec, key, json_object_get(val));
    }
    json_object_array_add(recs, rec);
  }
  json_object_object_add(sb, "steps", recs);
  const char *cerr = NULL;
  json_object *compile_result = compile ? sbh_command_result(compile, &cerr) : NULL;
  json_object *infos = get(ctx, "test_info"), *tests = json_object_new_array(), *crecs = json_object_new_array();
  size_t n = json_object_array_length(infos);
  bool run_all = truthy(get(ctx, "run_all_cases")), accepted = true;
  json_object *kcases = run ? get(run, "cases") : NULL;
  if (!kcases) {
    /* no run: the build failed (compile_error), or an earlier step did */
    json_object *nr = get(native, "cases_not_run");
    json_object *nr0 = nr && json_object_array_length(nr) ? json_object_array_get_idx(nr, 0) : NULL;
    if (nr0) {
      json_object_object_add(sb, "case_counts", json_object_get(get(nr0, "case_counts")));
      json_object_object_add(sb, "verdict", json_object_get(get(nr0, "verdict")));
    }
    bool build_failed = compile_result && !cerr;
    const char *msg = cerr ? cerr : build_failed ? NULL : get_str(native, "error") ? get_str(native, "error") : "no case ran";
    size_t shown = run_all ? n : 1;
    for (size_t i = 0; i < shown; i++) {
      json_object *e = exec_info(s, compile_result, NULL, !build_failed, msg);
      json_object_array_add(tests, test(e, false, json_object_array_get_idx(infos, i)));
    }
    if (compile_result) json_object_put(compile_result);
    json_object_object_add(sb, "cases", crecs);
    return eval_result(ctx, false, tests, sb);
  }
  json_object_object_add(sb, "case_counts", json_object_get(get(run, "case_counts")));
  json_object_object_add(sb, "first_failure", json_object_get(get(run, "first_failure")));
  json_object *ff = get(run, "first_failure");
  long first_failure = ff && json_object_is_type(ff, json_type_int) ? (long)json_object_get_int64(ff) : -1;
  for (size_t i = 0; i < json_object_array_length(kcases) && i < n; i++) {
    json_object *k = json_object_array_get_idx(kcases, i);
    const char *v = get_str(k, "verdict");
    json_object_array_add(crecs, case_record(k));
    if (v && !strcmp(v, "skipped")) {
      /* after the first failure SandboxFusion lists no more; past total_timeout it lists a SandboxError */
      if (!run_all && first_failure >= 0 && (long)i > first_failure) continue;
      accepted = false;
      json_object *e = exec_info(s, NULL, NULL, true, "Total Timeout");
      json_object_array_add(tests, test(e, false, NULL));
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
  if (compile_result) json_object_put(compile_result);
  json_object_object_add(sb, "cases", crecs);
  json_object *a = eval_result(ctx, accepted && json_object_array_length(tests) > 0, tests, sb);
  size_t len = 0;
  json_object_to_json_string_length(a, JSON_C_TO_STRING_PLAIN, &len);
  if (len > s->opt.limits.max_answer_bytes) { /* bounded, never cut silently */
    ((sbh_server *)s)->counters[SBH_C_ANSWER_TOO_LARGE]++;
    json_object_put(a);
    json_object *sb2 = json_object_new_object();
    json_object_object_add(sb2, "answer_bytes", json_object_new_int64((int64_t)len));
    return all_sandbox_error(s, ctx, "the answer is larger than the front's max_answer_bytes (--http-max-answer-bytes)",
                             sb2);
  }
  return a;
}
