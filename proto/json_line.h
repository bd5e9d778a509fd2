/* One JSON Lines line parsed strictly, with why it is not JSON (json_error.c). */
#ifndef SURGEBOX_JSON_LINE_H
#define SURGEBOX_JSON_LINE_H

#include <json-c/json.h>
#include <stddef.h>

/* The n bytes of s as a JSON value, strictly (UTF-8 checked, only white
 * space after it), or NULL with why: "a NUL byte in the line", "the line is
 * too long", "not JSON at column C ...: what was expected", "not JSON: text
 * after the value". */
json_object *sbp_json_line(const char *s, size_t n, char *why, size_t why_len);

#endif
