/* surgebox wire protocol (see proto/PROTOCOL.md for the document clients use).
 *
 * JSON Lines over a Unix stream socket: one request object per line, one
 * response object per line, each response carrying its request's "id".
 * Many requests may be in flight on one connection; responses come back in
 * any order.
 *
 * This library only speaks the protocol: it splits a byte stream into lines
 * (sbp_linesplit_*), turns a request line into a typed, validated C struct
 * (sbp_request_parse) or into the error response to send back, and builds
 * responses (sbp_response_new, sbp_error_response, sbp_exec_response_*,
 * sbp_encode_line). It never touches sockets or sandboxes.
 *
 * Ownership: functions returning json_object* hand the caller one reference
 * (json_object_put it). Functions taking an id json_object* take their own
 * reference and never steal the caller's. Strings and arrays inside an
 * sbp_request belong to it and go away with sbp_request_free().
 */
#ifndef SURGEBOX_PROTOCOL_H
#define SURGEBOX_PROTOCOL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "base64.h" /* content_b64, stdin_b64 (common/) */

/* ---- error codes (stable words; the "code" of an error response) ------- */
#define SBP_E_BAD_JSON          "bad_json"          /* line is not JSON; id is null */
#define SBP_E_BAD_REQUEST       "bad_request"       /* missing or ill-typed field */
#define SBP_E_UNKNOWN_TYPE      "unknown_type"      /* "type" is not a known request type */
#define SBP_E_UNKNOWN_FIELD     "unknown_field"     /* a field this request type does not have */
#define SBP_E_BAD_PATH          "bad_path"          /* file path empty/absolute/../NUL/too long/duplicate */
#define SBP_E_TOO_MANY_FILES    "too_many_files"    /* more files than the daemon accepts */
#define SBP_E_TOO_LARGE         "too_large"         /* request line longer than the cap */
#define SBP_E_BAD_BASE64        "bad_base64"        /* content_b64 / stdin_b64 is not RFC 4648 base64 */
#define SBP_E_BAD_LIMITS        "bad_limits"        /* a limit is not a positive, sane number */
#define SBP_E_BUSY              "busy"              /* daemon is at capacity; retry later */
#define SBP_E_UNKNOWN_TOOLCHAIN "unknown_toolchain" /* "toolchain" names no installed toolchain */
#define SBP_E_NOT_FOUND         "not_found"         /* cancel target is not a running exec */
#define SBP_E_UNAUTHORIZED      "unauthorized"      /* peer may not use the daemon / this request */
#define SBP_E_INTERNAL          "internal"          /* the daemon failed (out of memory, bug, ...) */

/* Every code above, NULL-terminated, in the order they are listed. */
extern const char *const sbp_error_codes[];
bool sbp_error_code_known(const char *code);

/* ---- overall exec statuses (the "status" of an exec response) ----------- */
#define SBP_STATUS_OK             "ok"
#define SBP_STATUS_COMPILE_ERROR  "compile_error"
#define SBP_STATUS_RUNTIME_ERROR  "runtime_error"
#define SBP_STATUS_SIGNALED       "signaled"
#define SBP_STATUS_TIMEOUT        "timeout"
#define SBP_STATUS_MEMORY_LIMIT   "memory_limit"
#define SBP_STATUS_OUTPUT_LIMIT   "output_limit"
#define SBP_STATUS_HOST_KILLED    "host_killed"
#define SBP_STATUS_INTERNAL_ERROR "internal_error"
#define SBP_STATUS_CANCELLED      "cancelled"
#define SBP_STATUS_CASES_FAILED   "cases_failed"   /* a step with cases: not every case accepted */
/* Decided before any step ran (toolchain form): */
#define SBP_STATUS_TOOLCHAIN_MISSING "toolchain_missing" /* declared, not installed here */
#define SBP_STATUS_UNSUPPORTED    "unsupported"          /* an option value this toolchain rejects */

/* ---- exit codes of the command-line client ----------------------------- */
#define SBP_EXIT_RAN     0 /* the job ran, whatever the program did */
#define SBP_EXIT_USAGE   1 /* bad command line / unreadable input */
#define SBP_EXIT_FAILURE 2 /* daemon or sandbox failure, error response */

/* ---- caps ---------------------------------------------------------------- */
#define SBP_DEFAULT_MAX_LINE  ((size_t)64 << 20) /* 64 MiB per request line */
#define SBP_DEFAULT_MAX_FILES ((size_t)1000)
#define SBP_DEFAULT_MAX_STEPS ((size_t)32)
#define SBP_MAX_PATH          4096   /* bytes in a file path */
#define SBP_MAX_NAME          255    /* bytes in one path component */
#define SBP_MAX_ID_LEN        256    /* bytes in a string id */
#define SBP_MAX_ID_INT        ((int64_t)9007199254740991) /* 2^53-1: integer ids are in +-this */
#define SBP_MAX_STEP_NAME     64
#define SBP_MAX_OUTPUTS       32     /* files a step (or a toolchain job) may ask back */
#define SBP_DEFAULT_OUTPUTS_BYTES ((uint64_t)16 << 20) /* their bytes together, unless the request says */
#define SBP_LIMIT_MAX_OUTPUTS_BYTES ((uint64_t)1 << 30) /* outputs_max_bytes above: bad_limits */
/* Limits above these are "absurd" (bad_limits). The daemon may cap lower. */
#define SBP_LIMIT_MAX_TIME_S       86400.0             /* one day */
#define SBP_LIMIT_MAX_MEMORY_MIB   ((uint64_t)1 << 20) /* 1 TiB */
#define SBP_LIMIT_MAX_PIDS         ((uint64_t)4194304) /* PID_MAX_LIMIT */
#define SBP_LIMIT_MAX_OUTPUT_BYTES ((uint64_t)1 << 40) /* 1 TiB */

/* What the parser accepts; the daemon's configuration may change them. */
typedef struct {
  size_t max_line_bytes; /* longest request line (also capped at INT_MAX-1) */
  size_t max_files;      /* files per exec */
  size_t max_steps;      /* steps per exec */
} sbp_limits;

void sbp_limits_default(sbp_limits *l);

/* ---- line splitter ------------------------------------------------------- *
 * Feed bytes as they arrive; complete lines come out through a callback, in
 * order, without the trailing "\n". Lines holding only spaces, tabs and "\r"
 * are skipped (keep-alives). A line longer than max_line bytes is reported
 * once, as SBP_LINE_TOO_LARGE, as soon as it grows past the cap; its bytes are
 * thrown away up to and including the next "\n", and lines after it are
 * delivered as usual. At most max_line bytes are ever buffered. */
typedef enum {
  SBP_LINE_OK = 1,        /* line, len: one complete line (not NUL-terminated) */
  SBP_LINE_TOO_LARGE = 2, /* line == NULL, len: bytes of it seen so far (> cap) */
} sbp_line_event;

/* Return 0 to go on; anything else stops sbp_linesplit_feed, which returns it
 * and drops the rest of that chunk (use it when closing the connection).
 * `line` is valid only during the call. */
typedef int (*sbp_line_fn)(void *ctx, sbp_line_event ev, const char *line, size_t len);

typedef struct {
  char *buf;        /* the unfinished line */
  size_t len, cap;
  size_t max_line;
  bool discarding;  /* inside an oversize line: drop bytes until "\n" */
} sbp_linesplit;

/* max_line 0 means SBP_DEFAULT_MAX_LINE. */
void sbp_linesplit_init(sbp_linesplit *ls, size_t max_line);
void sbp_linesplit_free(sbp_linesplit *ls);
/* 0, the callback's non-zero return, or -ENOMEM (the pending line is lost). */
int sbp_linesplit_feed(sbp_linesplit *ls, const void *data, size_t len, sbp_line_fn fn, void *ctx);
/* At end of stream: deliver a last line that had no "\n" (if not blank and not
 * oversize) and reset. Returns 0 or the callback's return. */
int sbp_linesplit_finish(sbp_linesplit *ls, sbp_line_fn fn, void *ctx);
/* Bytes of the unfinished line held right now. */
size_t sbp_linesplit_buffered(const sbp_linesplit *ls);
/* The error response for SBP_LINE_TOO_LARGE: too_large, id null. */
json_object *sbp_too_large_response(size_t max_line);

/* ---- paths --------------------------------------------------------------- *
 * A file path must be relative, non-empty, at most SBP_MAX_PATH bytes, free of
 * NUL bytes and ".." components, with components of at most SBP_MAX_NAME bytes
 * and no trailing "/". "." and empty components ("a//b", "./a") are dropped:
 * *out gets the normalised path (malloc'd). Returns 0, -1 (with *why set to a
 * static explanation, *out NULL) or -2 on allocation failure. */
int sbp_path_normalize(const char *path, size_t len, char **out, const char **why);

/* ---- requests ------------------------------------------------------------ */
typedef enum {
  SBP_REQ_EXEC = 1,
  SBP_REQ_CANCEL,
  SBP_REQ_TOOLCHAINS,
  SBP_REQ_STATUS,
  SBP_REQ_PING,
  SBP_REQ_METRICS, /* the counters as OpenMetrics text */
} sbp_request_type;

const char *sbp_request_type_name(sbp_request_type t); /* "exec", ...; "?" if unknown */
int sbp_request_type_parse(const char *s, sbp_request_type *out); /* 0 or -1 */

/* Per-step limits as the client asked; unset ones are left to the daemon. */
typedef struct {
  bool has_time_s, has_cpu_time_s, has_memory_mib, has_pids, has_output_bytes;
  double time_s;         /* wall clock, seconds, in (0, SBP_LIMIT_MAX_TIME_S] */
  double cpu_time_s;     /* seconds, in (0, SBP_LIMIT_MAX_TIME_S] */
  uint64_t memory_mib;   /* in [1, SBP_LIMIT_MAX_MEMORY_MIB] */
  uint64_t pids;         /* in [1, SBP_LIMIT_MAX_PIDS] */
  uint64_t output_bytes; /* per stream, in [1, SBP_LIMIT_MAX_OUTPUT_BYTES] */
} sbp_step_limits;

/* The one reader of a "limits" object (a request's step, a toolchain file's
 * "compile" or "run"): only the five keys above, each a positive number
 * within the SBP_LIMIT_MAX_* caps. v NULL: nothing set. field names the
 * object in err ("steps[0].limits"). How overrides combine with the
 * defaults is sbt_limits_resolve (toolchains/toolchain.h). */
typedef enum {
  SBP_LIMITS_OK = 0,
  SBP_LIMITS_NOT_OBJECT = -1,    /* bad_request */
  SBP_LIMITS_UNKNOWN_FIELD = -2, /* unknown_field */
  SBP_LIMITS_BAD_VALUE = -3,     /* bad_limits */
} sbp_limits_read_result;
sbp_limits_read_result sbp_limits_read(json_object *v, const char *field, sbp_step_limits *out, char *err, size_t n);

/* "trace": a traced run (PROTOCOL.md, "Traces"). The tracer's limits in
 * the order sbp_trace_key names them (events, bytes, value_chars, items,
 * nest, depth, snapshot_every); unset ones are the tracer's defaults, bytes
 * the daemon's trace cap. */
#define SBP_TRACE_NKEYS 7
#define SBP_TRACE_BYTES 1
#define SBP_TRACE_MIN_BYTES ((uint64_t)4096)       /* the tracer's own floor */
#define SBP_TRACE_MAX_BYTES ((uint64_t)256 << 20)  /* the supervisor's cap at most */
#define SBP_TRACE_MAX_COUNT ((uint64_t)1 << 40)
typedef struct {
  bool on;
  bool check; /* "check": true: the step also runs untraced first, stdout and exit compared */
  bool has[SBP_TRACE_NKEYS];
  uint64_t value[SBP_TRACE_NKEYS];
} sbp_trace;
const char *sbp_trace_key(int k); /* "events", ...; NULL past the last */

typedef struct {
  char *path;          /* normalised (see sbp_path_normalize), unique in the job */
  unsigned char *data; /* decoded content; data[len] == 0 as a convenience */
  size_t len;
  unsigned mode;       /* permission bits (<= 0777); 0644 unless has_mode */
  bool has_mode;
} sbp_file;

/* "cases" (issue 38): test cases run against one step's program, each in a
 * sandbox of its own. Compare modes as judge/judge.h names them; proto keeps
 * only the name's index so that it needs no judge. */
#define SBP_MAX_CASES       ((size_t)10000)
#define SBP_MAX_CASES_BYTES ((uint64_t)64 << 20) /* stdin + expected + files of all cases together */
#define SBP_MAX_CASE_FILES  ((size_t)32)
typedef enum { SBP_CMP_EXACT, SBP_CMP_LINES, SBP_CMP_TOKENS, SBP_CMP_NUMBERS, SBP_CMP_CHECKER } sbp_compare_mode;
/* "checker": a special judge (daemon/checker.c), built once per step from
 * its toolchain and files, run per case in a sandbox of its own as
 * CHECKER input output answer. */
#define SBP_MAX_CHECKER_FILES ((size_t)32)
typedef struct {
  char *toolchain;           /* NULL: the step has no checker */
  json_object *options;      /* the toolchain's options (owned reference), or NULL */
  sbp_file *files;           /* its sources, in its own /app */
  size_t n_files;
  sbp_step_limits limits;    /* its run's, over the toolchain's */
  bool first_line;           /* "verdict": "first_line": its first stdout line, not its exit status */
  bool sandboxfusion_io;     /* "io": "sandboxfusion": its cwd's stdin.txt, stdout.txt (the expected), answer.txt
                                (the program's output), no arguments; default "testlib" */
} sbp_checker;
typedef struct {
  unsigned char *stdin_data; /* NULL unless has_stdin */
  size_t stdin_len;
  bool has_stdin;
  char **args;               /* appended to the step's argv; NULL-terminated, never NULL */
  size_t n_args;
  sbp_file *files;           /* written into the case's own /app over the built one */
  size_t n_files;
  unsigned char *expected;   /* NULL unless has_expected (then the case only checks the run's end) */
  size_t expected_len;
  bool has_expected;
  sbp_compare_mode compare;  /* default lines */
  double abs_tol, rel_tol;   /* numbers; default 1e-6 each */
  bool ignore_case;          /* lines, tokens, numbers: ASCII letters folded; default false */
  sbp_step_limits limits;    /* over the step's */
  /* function-call cases (sbp_cases.fn_name): "args" is a JSON array of the
   * function's arguments, "expected" any JSON value */
  char *fn_call;             /* {"fn": NAME, "args": [...]}: the harness's stdin */
  size_t fn_call_len;
  json_object *expected_value; /* owned reference */
} sbp_case;
typedef struct {
  sbp_case *v;               /* NULL: the step has no cases */
  size_t n;
  bool stop_first_failure;   /* "stop": "first_failure"; default "never" */
  double budget_s;           /* "budget_s": wall seconds for all cases; 0: none */
  uint64_t case_output_bytes;/* stdout/stderr bytes shown per case (default 4096) */
  char *fn_name;             /* "fn_name": function-call cases (a Python step); NULL: stdin cases */
  sbp_checker checker;       /* "checker": the special judge of compare "checker" */
} sbp_cases;
#define SBP_DEFAULT_CASE_OUTPUT_BYTES ((uint64_t)4096)
#define SBP_MAX_CASE_OUTPUT_BYTES ((uint64_t)1 << 20)

typedef struct {
  char *name;                /* [A-Za-z0-9_.-]{1,64}; "step<N>" (1-based) when absent */
  char **argv;               /* NULL-terminated, argc >= 1, every string non-empty */
  size_t argc;
  char **env;                /* NULL-terminated "K=V"; NULL when "env" was absent */
  size_t n_env;
  unsigned char *stdin_data; /* NULL unless has_stdin; stdin_data[stdin_len] == 0 */
  size_t stdin_len;
  bool has_stdin;
  bool merge_output;         /* stderr into stdout */
  bool cache;                /* a deterministic step (a compile) the daemon may serve from its cache */
  bool output_base64;        /* "output_encoding": "base64": raw output always in *_b64 */
  sbp_step_limits limits;
  char **outputs;            /* files to return after the step: normalised paths, unique; NULL-terminated, */
  size_t n_outputs;          /* NULL when absent */
  sbp_trace trace;           /* "trace": the step runs under its toolchain's tracer */
  sbp_cases cases;           /* "cases": the step runs once per case */
} sbp_step;

/* An exec job takes one of two forms: explicit steps (n_steps >= 1,
 * toolchain == NULL) or a toolchain (toolchain != NULL, n_steps == 0) that the
 * daemon expands into steps, with the options object, program args and stdin
 * carried as given. */
typedef struct {
  sbp_file *files;
  size_t n_files;
  sbp_step *steps;
  size_t n_steps;
  char *toolchain;           /* toolchain form */
  json_object *options;      /* toolchain form: owned reference; NULL when absent */
  char **args;               /* toolchain form: NULL-terminated, never NULL there */
  size_t n_args;
  char **compile_args;       /* toolchain form: appended to the compile step's argv; NULL when absent */
  size_t n_compile_args;
  unsigned char *stdin_data; /* toolchain form: as sbp_step's */
  size_t stdin_len;
  bool has_stdin;
  sbp_step_limits limits;    /* toolchain form: limits for the expanded steps */
  sbp_step_limits compile_limits; /* toolchain form: over the toolchain's own, for its compile step only */
  char *profile;             /* optional in both forms; NULL when absent */
  char **outputs;            /* toolchain form: files to return after the run step (as sbp_step's) */
  size_t n_outputs;
  uint64_t outputs_max_bytes; /* both forms: the outputs' bytes together; 0 when absent (the daemon's default) */
  bool output_base64;        /* "output_encoding": "base64" for every step */
  sbp_trace trace;           /* toolchain form: the run step traced */
  bool warm;                 /* "warm": true: Python steps (toolchain form: the run step) start from a warm zygote */
  sbp_cases cases;           /* toolchain form: the run step's cases */
} sbp_exec;

typedef struct {
  json_object *id;           /* owned reference to the client's id (string or integer) */
  char *id_key;              /* the id as text: the string itself, or the integer in decimal */
  sbp_request_type type;
  sbp_exec exec;             /* SBP_REQ_EXEC */
  json_object *cancel_target;     /* SBP_REQ_CANCEL: owned reference, string or integer */
  char *cancel_target_key;        /* same text form as id_key */
} sbp_request;

/* Parse and validate one request line (without its "\n"; trailing "\r" and
 * spaces are fine). lim NULL means sbp_limits_default. On success returns 0,
 * *out is the request (free with sbp_request_free) and *err_response NULL.
 * On failure returns -1, *out is NULL and *err_response is the error response
 * to send (caller owns it; NULL only if even that could not be allocated). */
int sbp_request_parse(const char *line, size_t len, const sbp_limits *lim, sbp_request **out,
                      json_object **err_response);
void sbp_request_free(sbp_request *req);

/* ---- responses ----------------------------------------------------------- */
/* {"id": id, "type": type}. id NULL gives "id": null. NULL on ENOMEM. */
json_object *sbp_response_new(json_object *id, const char *type);

/* {"id": id, "type": "error", "error": {"code": code, "message": ...}}. */
json_object *sbp_error_response(json_object *id, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
json_object *sbp_error_responsev(json_object *id, const char *code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* The error code of an error response, NULL if resp is not one. */
const char *sbp_response_error_code(json_object *resp);

/* Exec responses: {"id", "type": "exec", "status", "steps": [...]}.
 * add_step takes ownership of `result` (a sandbox result document, which has
 * a "status" field), sets its "name" and appends it (result is released even
 * on failure). finish sets "status" from the steps with
 * sbp_exec_overall_status. All return 0 or -1 (ENOMEM / not an exec response). */
json_object *sbp_exec_response_new(json_object *id);
int sbp_exec_response_add_step(json_object *resp, const char *name, json_object *result);
int sbp_exec_response_set_status(json_object *resp, const char *status);
int sbp_exec_response_finish(json_object *resp);

/* Overall status of steps that ran, in order: the first step whose status is
 * not "ok" decides: "compile_error" if it is named "compile" (unless its
 * status is internal_error, which stays internal_error), else its own status.
 * "ok" when all are ok (or there are none). The result points into `steps`
 * or is a static string. */
const char *sbp_exec_overall_status(json_object *steps);

/* One wire line: compact JSON (JSON_C_TO_STRING_PLAIN | NOSLASHESCAPE) plus
 * "\n", malloc'd and NUL-terminated; *len (may be NULL) counts the "\n" but
 * not the NUL. NULL on ENOMEM or a NULL object. */
char *sbp_encode_line(json_object *obj, size_t *len);

/* A JSON syntax error for people: "at column C (in the field "limits.time_s"):
 * what was expected" (json_error.c), from json-c's error and the byte where
 * its tokener stopped in the n bytes of s. */
void sbp_json_error_words(const char *s, size_t n, enum json_tokener_error e, size_t at, char *buf, size_t len);
/* A JSON file read whole, or NULL with why in err, for people and on one
 * line: "no such file", "a directory, not a file", "empty, not JSON", "not
 * valid JSON at line L, column C (in the field "x"): what was expected"
 * (json-c's own words never shown). */
json_object *sbp_json_file(const char *path, char *err, size_t len);

#endif
