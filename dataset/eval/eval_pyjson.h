/* Python's json.loads and the bits of Python object semantics SURGE's FL
 * scoring depends on (truthiness, ==). Internal to the evaluator.
 * Values are json-c objects; JSON null is the NULL pointer. */
#ifndef SURGEBOX_EVAL_PYJSON_H
#define SURGEBOX_EVAL_PYJSON_H
#include <json-c/json.h>
#include <stddef.h>

/* Parses like json.loads (strict: no trailing commas, no control characters
 * in strings; NaN, Infinity and -Infinity accepted; lone surrogates kept).
 * Integers beyond int64 become doubles. Returns 0 and sets *out (release
 * with json_object_put), or -1 on a JSONDecodeError. */
int sbe_pyjson_loads(const char *text, size_t n, json_object **out);

int sbe_py_truthy(json_object *v);           /* bool(v) */
int sbe_py_equal(json_object *a, json_object *b); /* a == b */
int sbe_py_hashable(json_object *v);         /* not a list or dict */
#endif
