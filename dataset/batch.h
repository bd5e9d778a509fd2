/* surgebox batch: a JSON Lines file of exec requests through the daemon
 * (batch_cli.c). */
#ifndef SURGEBOX_BATCH_H
#define SURGEBOX_BATCH_H
#include "command.h"
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "shard.h"

/* socket_path/autostart/profile: the CLI's global options (batch's own
 * override them; profile goes to requests that name none). */
int sbr_batch_main(const sbc_ctx *ctx, int argc, char **argv);

/* batch --shard (batch_shard.c): mine[i] = item keys[i] is this shard's;
 * writes OUT.shard.json (or refuses another run's: -1). */
int sbr_batch_shard_plan(const sbr_shard *sh, const char *in, const char *out, const char *const *keys, size_t n,
                         bool *mine);

/* batch --brief / --fields (batch_fields.c): what each answer line keeps. */
typedef struct {
  bool brief;           /* steps without `enforced` and `limits` */
  bool fields;          /* --fields given: only the named fields */
  char **top, **step;   /* answer fields; step fields (steps.NAME) */
  size_t n_top, n_step;
} sbr_batch_shape;
/* --fields NAME,steps.NAME,...: 0, or -1 with a message naming the bad item. */
int sbr_batch_shape_fields(sbr_batch_shape *s, const char *fields, char *err, size_t err_len);
/* The answer trimmed in place (an error answer is left whole). */
void sbr_batch_shape_apply(const sbr_batch_shape *s, json_object *answer);
void sbr_batch_shape_free(sbr_batch_shape *s);

/* batch lines with test cases (batch_cases.c): an answer with cases gains
 * "verdicts" and "case_counts" at its top level; the run's totals. */
typedef struct {
  size_t items, cases; /* answers with cases, their cases */
  char **names;        /* verdicts, in the order first seen */
  size_t *counts, n;
} sbr_batch_cases;
void sbr_batch_cases_note(sbr_batch_cases *t, json_object *answer);
void sbr_batch_cases_say(const sbr_batch_cases *t, FILE *f); /* "batch: cases: N in M items: accepted A, ..." */
void sbr_batch_cases_free(sbr_batch_cases *t);

/* batch's answer lines to OUT (batch_out.c): whole lines held in memory and
 * written with one write(2) per many, when 64 KiB are held, when the oldest
 * is 1 s old, when the pump finds no answer coming (its idle call) and
 * before batch ends. A line is written whole or not at all before it counts
 * in OUT (a resumed run drops a partial last line); a client killed with
 * lines held runs those items again when resumed. */
typedef struct {
  FILE *f;
  char *buf;
  size_t len, cap;
  double oldest; /* when the first line held was added */
} sbr_batch_out;
/* One line (the parts joined, a newline added). 0, or -1 with errno (a
 * flush that failed). */
int sbr_batch_out_line(sbr_batch_out *o, const char *const *parts, const size_t *lens, size_t n_parts);
/* Writes what is held. 0, or -1 with errno. */
int sbr_batch_out_flush(sbr_batch_out *o);
void sbr_batch_out_free(sbr_batch_out *o);
#endif
