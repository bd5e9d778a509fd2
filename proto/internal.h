/* Private to proto/: cleanup helpers and the parser's shared pieces. */
#ifndef SURGEBOX_PROTO_INTERNAL_H
#define SURGEBOX_PROTO_INTERNAL_H

#include <stdlib.h>

#include "cleanup.h"
#include "protocol.h"

/* ---- scope-bound cleanup ------------------------------------------------
 * A variable declared SBU_AUTOFREE / SBU_AUTOPUT (common/cleanup.h) or
 * SBP_AUTOTOK / SBP_AUTOREQ is released when it goes out of scope, so every
 * early return is leak-free. Hand the value out with sbu_take_ptr(&var),
 * which nulls the variable. */
static inline void sbp_tokener_freep_(struct json_tokener **t) {
  if (*t) json_tokener_free(*t);
}
static inline void sbp_reqp_(sbp_request **r) { sbp_request_free(*r); }
#define SBP_AUTOTOK __attribute__((cleanup(sbp_tokener_freep_)))
#define SBP_AUTOREQ __attribute__((cleanup(sbp_reqp_)))

/* ---- parser context -------------------------------------------------------- */
typedef struct {
  const sbp_limits *lim;
  json_object *id;   /* the validated id (borrowed), NULL until known */
  json_object **err; /* where the error response goes */
} sbp_pctx;

/* Fill *c->err with an error response and return -1. */
int sbp_fail(sbp_pctx *c, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int sbp_fail_oom(sbp_pctx *c);
/* trace_opt.c: a "trace" value (where: "steps[0]" or ""). */
int sbp_parse_trace(sbp_pctx *c, json_object *v, const char *where, sbp_trace *out);

/* Copy at most ~60 bytes of untrusted text for a message, cut at a UTF-8
 * boundary, "..." appended when cut. */
#define SBP_CLIP_MAX 72
const char *sbp_clip(const char *s, size_t len, char out[SBP_CLIP_MAX]);

/* The first key of obj not in allowed (NULL-terminated), or NULL. */
const char *sbp_unknown_field(json_object *obj, const char *const *allowed);
/* ": did you mean \"X\"?" for an unknown key near one of allowed, else "". */
void sbp_field_hint(const char *key, const char *const *allowed, char *buf, size_t len);
/* Reject members of obj not in the NULL-terminated `allowed` list
 * (unknown_field naming the first one). `where` prefixes the message. */
int sbp_check_fields(sbp_pctx *c, json_object *obj, const char *where, const char *const *allowed);

/* String value checks. On success *out is a malloc'd NUL-terminated copy
 * (when out != NULL) and *len its length. Errors are bad_request naming
 * `where`. */
int sbp_get_string(sbp_pctx *c, json_object *v, const char *where, bool allow_empty, bool allow_nul,
                   char **out, size_t *len);

/* "stdin" / "stdin_b64" pair in obj (either may be absent, not both). */
int sbp_get_stdin(sbp_pctx *c, json_object *obj, const char *where, unsigned char **data, size_t *len,
                  bool *has);

/* "limits" object (v may be NULL: nothing set). */
int sbp_parse_step_limits(sbp_pctx *c, json_object *v, const char *where, sbp_step_limits *out);

/* A string id or a safe integer. *key is malloc'd text. */
int sbp_parse_id_value(sbp_pctx *c, json_object *v, const char *field, char **key);

/* The body of an exec request (root already checked for unknown fields). */
int sbp_parse_exec(sbp_pctx *c, json_object *root, sbp_exec *ex);
void sbp_exec_clear(sbp_exec *ex);
/* exec.c's readers, shared with cases.c (where names the value in errors). */
int sbp_parse_file(sbp_pctx *c, json_object *v, const char *where, sbp_file *f);
int sbp_check_unique_paths(sbp_pctx *c, const sbp_file *files, size_t n);
int sbp_parse_strv(sbp_pctx *c, json_object *v, const char *where, bool allow_empty_strings, char ***out,
                   size_t *n_out);
/* cases.c: "cases", "stop", "budget_s", "case_output_bytes" of obj (a step, or
 * the toolchain form's root; where "steps[0]" or ""). */
int sbp_parse_cases(sbp_pctx *c, json_object *obj, const char *where, sbp_cases *out);
void sbp_cases_clear(sbp_cases *cs);

/* Free a NULL-terminated string vector. */
void sbp_strv_free(char **v);

#endif
