/* An exec answer's line without what a caller that keeps the bytes as
 * received never reads (prefix sbc_): in each step, "enforced" becomes {}
 * and the fields sbc_result_parse does not read (the hashes, the split and
 * set-up times, limits, cgroup, uid, warnings, argv...) are left out, and so
 * is the answer's "profile": most of a trivial job's ~5 KB and of json-c's
 * objects, before the parse (batch: client CPU per job, issue 39). */
#ifndef SURGEBOX_CLIENT_ANSWER_TRIM_H
#define SURGEBOX_CLIENT_ANSWER_TRIM_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* line (len bytes, a JSON object) copied to out (room for len bytes) with
 * the value of "enforced" in each object of the top-level "steps" array
 * replaced by {} when it is an object, and the pairs answer_trim.c lists
 * (a step's, the answer's) left out with their commas. The length written, or
 * 0 when line is not of that shape (unbalanced, not an object, nested deeper
 * than 64): parse line itself then. Strings are walked with their escapes, so
 * no byte inside one is taken for structure. */
size_t sbc_answer_trim(const char *line, size_t len, char *out);

/* What a reader of many answers keeps between them: the trimmed copy's
 * buffer and one tokener (no allocation per answer). Zero-initialise. */
typedef struct {
  char *buf;
  size_t cap;
  json_tokener *tok;
} sbc_trimmer;

/* line (len bytes) parsed, trimmed first when trim is set (the line itself
 * when it is not of the trimmable shape, or no memory for the copy); NULL
 * when it is not JSON or no memory for the tokener. */
json_object *sbc_trimmer_parse(sbc_trimmer *t, const char *line, size_t len, bool trim);
void sbc_trimmer_free(sbc_trimmer *t);

#endif
