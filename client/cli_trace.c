/* surgebox trace: one Python program (or C/C++, under gdb) traced by the daemon (the "trace"
 * option on a toolchain job, PROTOCOL.md "Traces"), the trace written as
 * recorded (jsonl) or converted. The converters (lines, reval, cwm) are the
 * Python client's (surgebox.trace_convert), run with the python3 on PATH:
 * one implementation per format, the one Trace users and its tests share,
 * rather than a second one in C that could drift from it. By default the
 * program also runs untraced (trace.check) and a traced run whose stdout or
 * exit differ is reported and exits 2: its trace is not of the same run. */
#include "cli.h"
#include "protocol.h"
#include "pyclient.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_TC = 256, O_FORMAT, O_OUT, O_STDIN, O_NO_CHECK, O_TIME, O_JSON };
/* the trace option's limits: stored into the one field of trace_into */
typedef struct {
  json_object *trace;
} trace_into;
#define LIMIT(NAME, HELP, MIN, MAX) SBC_TRACE_LIMIT(NAME, HELP, MIN, MAX, SBO_AT(trace_into, trace))

static const sbo_opt trace_opts[] = {
    {"toolchain", O_TC, "NAME", "python3, python3.N, or a C/C++ one: gcc, g++, clang, clang++ (traced by gdb); default: gcc for FILE.c, g++ for .cpp/.cc/.cxx, else python3"},
    {"format", O_FORMAT, "F", "jsonl (default: the trace as recorded), lines, reval or cwm"},
    {"out", O_OUT, "FILE", "write the trace there (default: standard output)"},
    {"stdin", O_STDIN, "FILE", "the program's standard input; '-' is ours (default: ours when it is a pipe or a file)"},
    {"no-check", O_NO_CHECK, NULL, "do not run the program untraced too (no stdout/exit comparison)"},
    LIMIT("events", "stop tracing after N events (the tracer's default: 1000000)", 1, __LONG_MAX__),
    LIMIT("bytes", "the trace's byte cap (4096 ... 268435456; default 16777216)", (long)SBP_TRACE_MIN_BYTES, (long)SBP_TRACE_MAX_BYTES),
    LIMIT("value-chars", "characters of a string value shown (default 256)", 1, __LONG_MAX__),
    LIMIT("items", "members of a container value shown, the rest counted (+N items) (default 32)", 1, __LONG_MAX__),
    LIMIT("nest", "container levels of a value shown, deeper ones elided (default 4)", 1, __LONG_MAX__),
    LIMIT("depth", "traced call depth (default 256)", 1, __LONG_MAX__),
    {"time-limit", O_TIME, "S", "wall-clock limit in seconds, each run"},
    {"json", O_JSON, NULL, "print the daemon's answer as JSON instead of the trace"},
    {NULL, 0, NULL, NULL}};

static const sbo_cmd trace_cmd = {
    "surgebox trace",
    "[options] FILE... [-- ARGS...]",
    "Run the first FILE as `python3 FILE ARGS` in /app holding FILEs, under surgebox's tracer, and\n"
    "write its execution trace (PROTOCOL.md, \"Traces\"). The other FILEs are uploaded beside it.\n"
    "With a C or C++ --toolchain the FILEs are compiled at -O0 -g and the program runs under gdb.",
    trace_opts, sbc_daemon_opts,
    "On stderr: one line with the trace's end status, its events and the untraced run's comparison.\n"
    "Exit status: 0 traced (the trace may be truncated), 1 usage error, 2 the job could not run,\n"
    "the trace is tampered, or the traced run's stdout or exit differ from the untraced run's.\n",
    false, NULL};

/* The trace (and the job's text files, for cwm) to the converter's stdin. */
static int convert(const char *format, const char *trace, size_t len, json_object *files, const char *out,
                   char *err, size_t err_len) {
  json_object *doc = json_object_new_object(), *sources = json_object_new_object();
  json_object_object_add(doc, "trace", json_object_new_string_len(trace, (int)len));
  for (size_t i = 0; i < json_object_array_length(files); i++) {
    json_object *f = json_object_array_get_idx(files, i), *path, *content;
    if (!json_object_object_get_ex(f, "path", &path) || !json_object_object_get_ex(f, "content", &content)) continue;
    char app[PATH_MAX];
    snprintf(app, sizeof app, "/app/%s", json_object_get_string(path));
    json_object_object_add(sources, app, json_object_get(content));
  }
  json_object_object_add(doc, "sources", sources);
  const char *text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
  const char *args[] = {"--format", format, out ? "--out" : NULL, out, NULL};
  int rc = sbc_py_module("surgebox.trace_convert", args, text, err, err_len);
  json_object_put(doc);
  if (rc > 0)
    snprintf(err, err_len, "the converter (python3 -m surgebox.trace_convert, from %s) failed", sbc_py_client_dir());
  return rc ? -1 : 0;
}

static int write_all(const char *out, const char *data, size_t len, char *err, size_t err_len) {
  FILE *f = out ? fopen(out, "w") : stdout;
  if (!f) {
    snprintf(err, err_len, "cannot write %s: %s", out, strerror(errno));
    return -1;
  }
  bool ok = fwrite(data, 1, len, f) == len;
  ok = (out ? fclose(f) : fflush(f)) == 0 && ok;
  if (!ok) snprintf(err, err_len, "cannot write %s: %s", out ? out : "standard output", strerror(errno));
  return ok ? 0 : -1;
}

static const char *str_of(json_object *o, const char *key) {
  json_object *v;
  return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                          : NULL;
}

static bool bool_of(json_object *o, const char *key) {
  json_object *v;
  return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

/* The traced step's trace written out, and the one-line summary. */
static int report(const char *name, json_object *resp, json_object *files, const char *format, const char *out) {
  char err[PATH_MAX + 256] = "";
  json_object *steps = NULL, *step;
  json_object_object_get_ex(resp, "steps", &steps);
  size_t n = steps ? json_object_array_length(steps) : 0;
  step = n ? json_object_array_get_idx(steps, n - 1) : NULL;
  const char *status = str_of(resp, "status"), *trace = step ? str_of(step, "trace") : NULL;
  const char *tstatus = step ? str_of(step, "trace_status") : NULL;
  if (!step || !tstatus) {
    const char *e = str_of(resp, "error");
    if (!e && step) e = str_of(step, "error");
    return sbo_fail(name, false, SBO_EXIT_FAILURE, "no trace: the job ended %s%s%s", status ? status : "?",
                    e ? ": " : "", e ? e : "");
  }
  if (!trace) /* trace_b64: not UTF-8, so not a trace the tracer wrote */
    return sbo_fail(name, false, SBO_EXIT_FAILURE, "the trace is not UTF-8 text (status %s): see --json", tstatus);
  size_t len = strlen(trace);
  int rc = strcmp(format, "jsonl") == 0 ? write_all(out, trace, len, err, sizeof err)
                                        : convert(format, trace, len, files, out, err, sizeof err);
  if (rc < 0) return sbo_fail(name, false, SBO_EXIT_FAILURE, "%s", err);
  json_object *check = NULL, *ev = NULL, *exit_code = NULL;
  json_object_object_get_ex(step, "trace_check", &check);
  json_object_object_get_ex(step, "exit_code", &exit_code);
  /* the last line is the end record: its event count */
  const char *last = len > 1 ? memrchr(trace, '\n', len - 1) : NULL;
  json_object *end = json_tokener_parse(last ? last + 1 : trace);
  if (end) json_object_object_get_ex(end, "events", &ev);
  bool differs = check && !(bool_of(check, "stdout_equal") && bool_of(check, "exit_equal"));
  fprintf(stderr, "%s: trace %s, %lld events, program %s (exit %s)%s%s%s\n", name, tstatus,
          ev ? (long long)json_object_get_int64(ev) : -1LL, str_of(step, "status"),
          exit_code ? json_object_get_string(exit_code) : "none",
          !check ? "; not compared with an untraced run" : "",
          check && !differs ? "; stdout and exit equal to the untraced run's" : "",
          differs ? (bool_of(check, "stdout_equal") ? "; EXIT DIFFERS from the untraced run's"
                                                    : "; STDOUT DIFFERS from the untraced run's")
                  : "");
  json_object_put(end);
  if (strcmp(tstatus, "tampered") == 0 || differs) return SBO_EXIT_FAILURE;
  return strcmp(status ? status : "", SBP_STATUS_INTERNAL_ERROR) == 0 ? SBO_EXIT_FAILURE : 0;
}

int sbc_trace_limit_opt(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  long n;
  if (sbo_parse_long(val, o->min, o->max, &n) < 0) return sbo_opt_bad_value(p, o, val);
  char key[32];
  snprintf(key, sizeof key, "%s", o->name);
  for (char *c = key; *c; c++) *c = *c == '-' ? '_' : *c;
  json_object *trace;
  memcpy(&trace, (char *)opts + o->at, sizeof trace);
  json_object_object_add(trace, key, json_object_new_int64(n));
  return 0;
}

/* Without --toolchain: gcc for a .c entry, g++ for a C++ one, python3 for
 * .py or no extension; NULL for any other (no tracer knows it: x.rs is not
 * python3's to run). */
static const char *default_toolchain(const char *entry) {
  const char *slash = strrchr(entry, '/'), *dot = strrchr(slash ? slash + 1 : entry, '.');
  if (!dot || dot == (slash ? slash + 1 : entry) || strcmp(dot, ".py") == 0) return "python3";
  if (strcmp(dot, ".c") == 0) return "gcc";
  if (strcmp(dot, ".cpp") == 0 || strcmp(dot, ".cc") == 0 || strcmp(dot, ".cxx") == 0) return "g++";
  return NULL;
}

/* python3.N below 3.7: the tracer cannot run there (it needs 3.7's
 * sys.settrace features and f-strings); say so before anything runs. */
static bool python_too_old(const char *tc) {
  int minor;
  char end;
  return sscanf(tc, "python3.%d%c", &minor, &end) == 1 && minor < 7;
}

int sbc_trace_main(const sbc_ctx *g0, int argc, char **argv) {
  sbc_ctx g = *g0;
  sbo_parser p;
  sbo_init(&p, &trace_cmd, argc, argv);
  const char *tc = NULL, *format = "jsonl", *out = NULL, *stdin_path = NULL;
  bool json = p.json, check = true;
  json_object *topt = json_object_new_object(), *limits = json_object_new_object();
  int k = SBO_END, rc = 0;
  const char *v;
  while (rc == 0 && (k = sbo_next(&p, &v)) > 0) {
    int bad = 0;
    switch (k) {
    case O_TC: tc = v; break;
    case O_FORMAT: {
      static const char *const formats[] = {"jsonl", "lines", "reval", "cwm", NULL};
      format = v;
      rc = sbo_check_choice(&p, k, v, formats);
      break;
    }
    case O_OUT: out = v; break;
    case O_STDIN: stdin_path = v; break;
    case O_NO_CHECK: check = false; break;
    case O_TIME: {
      double s;
      bad = sbo_parse_double(v, &s) < 0;
      if (!bad) json_object_object_add(limits, "time_s", json_object_new_double(s));
      break;
    }
    case O_JSON: json = true; break;
    default: { /* a trace limit (declared), else the daemon group's */
      const sbo_opt *o = sbo_opt_of(&trace_cmd, k);
      trace_into into = {topt};
      if (o && o->kind == SBO_CALL) rc = sbo_store(&p, o, v, &into);
      else sbc_ctx_apply(&g, k, v);
    }
    }
    if (bad) rc = sbo_bad_value(&p, k, v);
  }
  if (rc == 0 && k == SBO_STOP) rc = p.status;
  sbc_files files = {json_object_new_array(), 0};
  char err[PATH_MAX + 256] = "";
  json_object *req = NULL, *resp = NULL;
  if (rc == 0 && k != SBO_STOP) {
    if (p.n_pos == 0) rc = sbo_usage_error(&p, "needs FILE (the program to trace, run as python3 FILE)");
    for (int i = 0, fr; rc == 0 && i < p.n_pos; i++)
      if ((fr = sbc_files_add(&files, p.pos[i], err, sizeof err)) < 0)
        rc = sbo_fail(trace_cmd.name, json, fr == -2 ? SBO_EXIT_FAILURE : SBO_EXIT_USAGE, "%s", err);
    if (rc == 0 && !tc && !(tc = default_toolchain(p.pos[0])))
      rc = sbo_usage_error(&p, "%s: no tracer for this kind of file (traced: .py and files without an extension as "
                               "python3, .c as gcc, .cpp/.cc/.cxx as g++); name one with --toolchain", p.pos[0]);
    if (rc == 0 && python_too_old(tc))
      rc = sbo_usage_error(&p, "--toolchain %s: the tracer needs Python 3.7 or later (python3, or python3.N with N >= 7)", tc);
    if (rc != 0) goto done;
    req = sbc_request_new("exec");
    json_object *args = json_object_new_array();
    for (int i = 0; i < p.n_rest; i++) json_object_array_add(args, json_object_new_string(p.rest[i]));
    json_object_object_add(req, "toolchain", json_object_new_string(tc));
    json_object_object_add(req, "files", json_object_get(files.files));
    json_object_object_add(req, "args", args);
    json_object_object_add(req, "limits", json_object_get(limits));
    if (check) json_object_object_add(topt, "check", json_object_new_boolean(true));
    json_object_object_add(req, "trace", json_object_get(topt));
    if (g.profile) json_object_object_add(req, "profile", json_object_new_string(g.profile));
    if (rc == 0 && sbc_read_job_stdin(stdin_path, req, err, sizeof err) < 0)
      rc = sbo_fail(trace_cmd.name, json, SBO_EXIT_FAILURE, "%s", err); /* an input that cannot be read */
    if (rc == 0) rc = sbc_roundtrip(&g, trace_cmd.name, json, req, &resp);
    if (rc == 0 && json) sbc_print_json(resp);
    else if (rc == 0) rc = report(trace_cmd.name, resp, files.files, format, out);
  }
done:
  fflush(stdout);
  json_object_put(resp);
  json_object_put(req);
  json_object_put(files.files);
  json_object_put(topt);
  json_object_put(limits);
  sbo_done(&p);
  return rc;
}
