/* A fleet of daemons behind one client (issue 39), for the commands that
 * run many jobs (batch, verify, regen: beneath the pump, dataset/pump.c).
 * The guarantees are the Python client's (clients/python/surgebox/fleet.py):
 *   - a job goes to the daemon with the fewest of this client's jobs
 *     outstanding (ties in turn);
 *   - a daemon that stops answering (a refused or broken connection, a
 *     probe unanswered within probe_timeout: a SIGSTOPped daemon) is taken
 *     out, its jobs in flight run again elsewhere, and it is probed back in
 *     every probe_interval;
 *   - only failures of the infrastructure are retried (a lost connection,
 *     HTTP 502/503/504, a daemon's "busy" or "cancelled"), with jittered
 *     exponential back-off, at most `attempts` sends; a job no daemon ran
 *     ends as an error answer (code "fleet_unavailable"), never a verdict;
 *   - an answer that arrived is delivered once: a job's connection to a
 *     daemon taken out is closed before the job is sent elsewhere, so a late
 *     answer from it cannot come;
 *   - a job unanswered by its deadline (sent + its limits: time_s, else
 *     30 s, + 1 s per step and case, x 2 with a toolchain's compile; + 2 x its
 *     daemon's p99 queue time as the latest probe read it (status, or
 *     /metrics over HTTP) + answer_margin) takes its daemon out as hung: a
 *     busy daemon's measured queue lengthens the deadline, so a healthy one
 *     is never taken for hung;
 *   - a job sent again avoids the daemon it last went to while another is up;
 *   - a token a daemon refuses (HTTP 401/403) is a fatal error at once;
 *   - every answer says which daemon ran it ("daemon") and after how many
 *     sends ("attempts").
 * Unix-socket endpoints carry many requests on one connection (JSON Lines,
 * as the pump does with one daemon); HTTP ones one POST /v1/jobs at a time
 * per connection, kept alive in a pool per daemon (as many connections as
 * its jobs in flight, at most 64 idle; http_transport.h). Single-threaded:
 * one poll over all. */
#ifndef SURGEBOX_FLEET_H
#define SURGEBOX_FLEET_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct sbc_fleet sbc_fleet;

typedef struct {
  double probe_interval_s; /* 0: 1 s */
  double probe_timeout_s;  /* 0: 3 s */
  double answer_margin_s;  /* 0: 60 s; the job's deadline, below */
  int attempts;            /* 0: 4 */
  double wait_s;           /* how long a job waits while no daemon is up; 0: 60 s */
  const char *label;       /* prefixes the lines said on stderr ("batch") */
} sbc_fleet_opts;

/* spec: the endpoint list (endpoints.h). Every daemon is probed once; none
 * answering is an error. NULL with err set (one line, the next step). */
sbc_fleet *sbc_fleet_open(const char *spec, const sbc_fleet_opts *o, char *err, size_t err_len);
size_t sbc_fleet_size(const sbc_fleet *f);
/* on: Unix-socket answers are parsed without their steps' "enforced" and
 * "limits" (client/answer_trim.h), for a caller that writes the lines
 * (sbc_fleet_next_line) and reads neither; off by default. */
void sbc_fleet_trim(sbc_fleet *f, bool on);
/* req: an exec request with a string "id" unique among those outstanding;
 * the fleet takes it over. 0 or -1 (out of memory). */
int sbc_fleet_submit(sbc_fleet *f, json_object *req);
/* Waits up to timeout_ms: 1 with *resp the next answer (owned by the
 * caller: its "id" the request's, "daemon" and "attempts" added), 0 none
 * yet, -1 a fatal error (err set: a refused token). */
int sbc_fleet_next(sbc_fleet *f, int timeout_ms, json_object **resp, char *err, size_t err_len);
/* The same, and *line (owned by the caller, *len bytes, no newline): the
 * answer's line as its daemon sent it with "daemon" and "attempts" spliced
 * in, byte for byte what *resp prints as (batch writes it); NULL when that
 * could not be had without printing (an HTTP daemon's answer, one the fleet
 * made). */
int sbc_fleet_next_line(sbc_fleet *f, int timeout_ms, json_object **resp, char **line, size_t *len, char *err,
                        size_t err_len);
/* One request that is not an exec (toolchains) to the first Unix-socket
 * daemon that answers: its answer (owned), or NULL with err set. */
json_object *sbc_fleet_ask(sbc_fleet *f, json_object *req, char *err, size_t err_len);
/* One line per daemon: answered, taken out. */
void sbc_fleet_say(const sbc_fleet *f, FILE *out);
void sbc_fleet_close(sbc_fleet *f);

#endif
