/* The one monotonic clock (CLOCK_MONOTONIC): durations, deadlines, rates.
 * Prefix sbu_. Safe anywhere, including the sandbox child (no allocation). */
#ifndef SURGEBOX_CLOCK_H
#define SURGEBOX_CLOCK_H

#include <stdint.h>

uint64_t sbu_now_ns(void); /* nanoseconds */
double sbu_now_s(void);    /* seconds */

#endif
