/* A daemon's answer to an exec request, typed (prefix sbc_). One parser for
 * every client in C: the status, the error, each step's exact bytes and
 * figures, the toolchain's and profile's identity. Depends on json-c and
 * proto/ (base64) only, so dataset/ and cli/ can both use it. */
#ifndef SURGEBOX_CLIENT_RESULT_H
#define SURGEBOX_CLIENT_RESULT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* One output stream of a step: the exact bytes (decoded from "<s>_b64" when
 * present, else the UTF-8 text as sent), NUL-terminated for convenience
 * (len excludes it; the bytes may hold NULs). */
typedef struct {
  unsigned char *data;
  size_t len;
  /* the text as sent ("<s>"): UTF-8, U+FFFD in place of invalid bytes and
   * NUL (PROTOCOL.md), so it holds no NUL; what a JSON string can carry (SURGE's
   * references are text). "" when absent. */
  char *text;
  size_t text_len;
  bool lossy;     /* "<s>_lossy": the text form had bytes replaced (data is exact only if b64 came) */
  bool exact;     /* data are the bytes the program wrote: b64 present, or text not lossy */
  bool truncated; /* "<s>_truncated": the stream passed output_bytes */
} sbc_stream;

typedef struct {
  char *name;          /* "run", "compile", ...; "" when absent */
  char *status;        /* "ok", "runtime_error", "signaled", "timeout", ..., "internal_error"; "" when absent */
  bool has_exit_code;  /* false when "exit_code" is null (signalled, never started) */
  int exit_code;
  char *signal;        /* "SIGKILL", or NULL */
  char *error;         /* the step's diagnostic ("error"), or NULL */
  sbc_stream out, err; /* stdout, stderr */
  double cpu_time_s, wall_time_s; /* -1 when absent */
  long long max_rss_kb;           /* -1 when absent */
  char *limit_hit;     /* "wall_time", "cpu_time", "memory", "output", "file_size", or NULL */
  bool cached;         /* answered from the compile cache */
  bool pids_limit_hit; /* a fork or thread creation failed at the pids limit */
  char *wall_waiting;  /* the wall limit fired: "the program was asleep (S) in WCHAN" and the like, else NULL */
  json_object *enforced; /* the step's "enforced" object (a reference we hold), or NULL */
} sbc_step;

typedef struct {
  char *id;            /* the response's id as text ("" when null) */
  bool is_error;       /* an error response ("type":"error"): error_code/error_message say why */
  char *status;        /* exec: the job's status ("ok", ..., "internal_error", "cancelled",
                        * "toolchain_missing", "unsupported"); an error response: NULL */
  char *error_code;    /* an error response's code ("bad_request", "busy", ...), else NULL */
  char *error_message; /* an error response's message, or the job's "error" text, else NULL */
  sbc_step *steps;
  size_t n_steps;
  json_object *toolchain; /* the toolchain's identity (a reference we hold), or NULL */
  json_object *profile;   /* the profile's identity, or NULL */
} sbc_result;

/* Parse resp (not consumed) into *r. 0, or -1 with err set when resp is not
 * an exec or error response (r is then empty; sbc_result_free is harmless). */
int sbc_result_parse(json_object *resp, sbc_result *r, char *err, size_t err_len);
/* The code of the error result sbc_result_of makes of an unreadable answer. */
#define SBC_BAD_RESPONSE "bad_response"
/* sbc_result_parse for a caller that must account for every answer: one
 * that cannot be read becomes an error result (is_error, error_code
 * SBC_BAD_RESPONSE, error_message saying why, id as sent), so it counts as
 * failed (sbc_result_failed) and is never taken for a program's outcome. */
void sbc_result_of(json_object *resp, sbc_result *r);
void sbc_result_free(sbc_result *r);

/* The program's step: the one named "run", else the only step; NULL otherwise. */
const sbc_step *sbc_result_program_step(const sbc_result *r);
/* The first step named name, or NULL (no such step ran). */
const sbc_step *sbc_result_step(const sbc_result *r, const char *name);
/* A step named "compile" ran and did not end "ok" (its status, not the
 * job's: a compile step's failure is the program's compile error). */
bool sbc_result_compile_failed(const sbc_result *r);
/* The last step, or NULL. */
const sbc_step *sbc_result_last_step(const sbc_result *r);
/* The last step's status as a shell reports it: its exit code (0-255), 128+N
 * when signal N killed it; -1 when no step ran. */
int sbc_result_shell_status(const sbc_result *r);
/* The job did not run as asked because of surgebox or the machine, not the
 * program: an error response, internal_error, toolchain_missing, unsupported. */
bool sbc_result_failed(const sbc_result *r);
/* The first diagnostic that says why: the error message, else the first
 * step's error whose status is internal_error, else the last step's error;
 * NULL when there is none. */
const char *sbc_result_why(const sbc_result *r);

#endif
