/* A failure of surgebox, not of the program (prefix sbr_failure): an
 * internal_error, a daemon's error answer, a toolchain_missing answer, a
 * host_killed answer (the host's OOM killer chose the job: the machine
 * failed, not the program), a lost connection. Such a response is never data: no reference, verdict or
 * score is written from it; it is counted in a class of its own
 * (SBR_FAILURE_CLASS) and turns the run's exit status into 2 with one line
 * naming how many and the first one. */
#ifndef SURGEBOX_FAILURE_H
#define SURGEBOX_FAILURE_H

#include "result.h"

#include <stdbool.h>
#include <stddef.h>

#define SBR_FAILURE_CLASS "internal_error"

typedef struct {
  size_t count;
  char first[512]; /* the first one's text: "internal_error: move_mount /app: ..." */
} sbr_failures;

/* Is r (the answer, typed: client/result.h; NULL: the connection was lost)
 * a failure of surgebox? An error answer, internal_error, toolchain_missing
 * (not unsupported: dr-matrix records it as the cell's outcome). When it is
 * and why is given, why gets its text ("<status or code>: <message>"). */
bool sbr_failure_of(const sbc_result *r, char *why, size_t why_len);
/* A run that did not finish (timeout, memory_limit, host_killed): never a
 * reference, a score or a time; each is its own class in regen's output. */
bool sbr_unfinished_status(const char *status);
/* The same as sbr_failure_of, but a daemon's refusal of the request itself (bad_request,
 * unknown_field, bad_limits, unknown_toolchain, ...) is the request's
 * answer, not a failure: for batch, whose requests are the user's own. */
bool sbr_failure_of_request(const sbc_result *r, char *why, size_t why_len);
/* Count one failure; the first one's text is kept. */
void sbr_failures_add(sbr_failures *f, const char *why);
/* 0 when none; else prints "<label>: N failure(s) of surgebox (not results
 * of the programs, nothing recorded for them); the first: <text>" on stderr
 * and returns 2. */
int sbr_failures_report(const sbr_failures *f, const char *label);

#endif
