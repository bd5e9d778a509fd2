/* Feeding many exec requests through one daemon connection, a bounded
 * window at a time (the daemon's workers stay busy, its queue is never
 * flooded), with a progress line: shared by regen, dr-matrix and batch.
 *
 * The progress line's ETA: with a cost per request (regen: the plan's
 * expected seconds per item, regen_shard.c), the plan's remaining seconds at
 * the speed measured so far (planned seconds finished, in-flight ones counted
 * half, per second), and before anything finished the plan's seconds over
 * the requests run at once; without costs a rate estimate (remaining /
 * finished per second so far), labelled as one. Without a TTY a plain line is
 * printed every progress_interval seconds, also while nothing finishes. */
#ifndef SURGEBOX_PUMP_H
#define SURGEBOX_PUMP_H
#include "client.h"
#include "clock.h" /* sbu_now_s */
#include "fleet.h"
#include "failure.h"
#include "result.h"

#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
  size_t total;
  size_t window;
  /* request i without "id" (caller's reference passed over), NULL to skip it */
  json_object *(*make)(size_t i, void *ctx);
  /* the answer to request i, typed (parsed once, on arrival: client/result.h;
   * an unreadable one is an error result), and as the daemon sent it (batch
   * writes it verbatim); both borrowed. Return true when it counts as a
   * failure of the machinery. */
  bool (*done)(size_t i, const sbc_result *r, json_object *resp, void *ctx);
  /* instead of done when set: the same, and the answer's line as the daemon
   * sent it (without its newline; borrowed), or NULL when it did not come as
   * one line of its own (a fleet's answers) */
  bool (*done_line)(size_t i, const sbc_result *r, json_object *resp, const char *line, size_t len, void *ctx);
  /* parse each answer without what sbc_result never reads
   * (client/answer_trim.h): for a done_line that writes the line as received
   * and reads none of it; resp is then that smaller object (a fleet's HTTP
   * answers are parsed whole) */
  bool trim;
  /* optional: the pump waited SBR_PUMP_IDLE_MS after an answer and no other
   * came (also before it returns): batch writes out the lines it holds */
  void (*idle)(void *ctx);
  /* called every few seconds and after the last response (checkpoints) */
  void (*checkpoint)(void *ctx);
  void *ctx;
  const char *label;
  volatile sig_atomic_t *interrupted;
  /* when set: write every request (with its "id") to it as JSON Lines and
   * run nothing (bench/ replays them without a sandbox) */
  FILE *dump;
  /* when set: every response that is a failure of surgebox (failure.h),
   * and a lost connection, counted there (done is still called: it must
   * record nothing from such a response) */
  sbr_failures *failures;
  /* what counts there (NULL: sbr_failure_of; batch: sbr_failure_of_request) */
  bool (*failure_of)(const sbc_result *r, char *why, size_t why_len);
  /* seconds between plain progress lines when stderr is not a TTY (0: 10 s) */
  double progress_interval;
  /* optional: request i's expected seconds on one core (the ETA's plan) */
  double (*cost)(size_t i, void *ctx);
  /* how many requests run at once (0: the driver's --jobs) */
  double parallel;
  /* when set: the requests go to this fleet of daemons (client/fleet.h),
   * not to the connection; its answers say "daemon" and "attempts" */
  sbc_fleet *fleet;
} sbr_pump;

/* how long the pump waits, after an answer, before it calls idle */
#define SBR_PUMP_IDLE_MS 100

/* SIGINT and SIGTERM set *flag (one flag per process: the last call wins). */
void sbr_catch_interrupts(volatile sig_atomic_t *flag);

/* 0 when every request was answered (or dumped), -1 if the daemon went away
 * (a fleet: a fatal error, said) or the run was interrupted. c: NULL with
 * p->fleet. */
int sbr_pump_run(sbc_conn *c, const sbr_pump *p);
#endif
