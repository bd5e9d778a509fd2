/* Durations and given numbers as JSON numbers; a duration printed to the resolution it was measured at
 * (PROTOCOL.md, "Numbers"): 0.001234, never 1.8330000000000001e-06.
 * Prefix sbu_. */
#ifndef SURGEBOX_JSON_SECONDS_H
#define SURGEBOX_JSON_SECONDS_H

#include <json-c/json.h>

/* The digits after the point that a clock of this resolution (seconds, e.g.
 * 1e-6 or 0.01) can vouch for: 6 for microseconds, 2 for 10 ms ticks. */
int sbu_resolution_digits(double resolution_s);

/* s rounded to `digits` decimals (0-9), as a number whose JSON text is that
 * rounding (json_object_new_double_s: the value and its text agree). */
json_object *sbu_json_seconds_at(double s, int digits);

/* Microseconds: the monotonic clock's and rusage's resolution as we report it. */
json_object *sbu_json_seconds(double s);

/* A number as it was given (a limit): the shortest text that reads back as
 * the same double, 0.3 and not json-c's 0.29999999999999999; 30 is "30.0". */
json_object *sbu_json_number(double v);

#endif
