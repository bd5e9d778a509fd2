/* sbc_answer_trim: a walk of the line's structure, strings skipped whole. */
#include "answer_trim.h"

#include <stdbool.h>
#include <string.h>

enum { MAX_DEPTH = 64 };

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* s[i] is '"': the index after the closing quote, or 0 */
static size_t string_end(const char *s, size_t n, size_t i) {
  for (i++; i < n; i++) {
    if (s[i] == '\\') i++;
    else if (s[i] == '"') return i + 1;
  }
  return 0;
}

/* s[i] is '{': the index after its matching '}', or 0 (brackets that do not match) */
static size_t object_end(const char *s, size_t n, size_t i) {
  char kind[MAX_DEPTH];
  int depth = 0;
  while (i < n) {
    char c = s[i];
    if (c == '"') {
      if (!(i = string_end(s, n, i))) return 0;
      continue;
    }
    if (c == '{' || c == '[') {
      if (depth == MAX_DEPTH) return 0;
      kind[depth++] = c;
    } else if (c == '}' || c == ']') {
      if (!depth || kind[--depth] != (c == '}' ? '{' : '[')) return 0;
      if (!depth) return i + 1;
    }
    i++;
  }
  return 0;
}

static bool key_is(const char *k, size_t len, const char *name) { return len == strlen(name) && !memcmp(k, name, len); }

size_t sbc_answer_trim(const char *s, size_t n, char *out) {
  char kind[MAX_DEPTH];
  int depth = 0, steps_depth = -1; /* steps_depth: 2 while inside the top-level "steps" array */
  bool steps_key = false;          /* the top level's latest key is "steps" */
  size_t o = 0, i = 0;
  while (i < n && is_space(s[i])) out[o++] = s[i++];
  if (i == n || s[i] != '{') return 0;
  while (i < n) {
    char c = s[i];
    if (c == '"') {
      size_t e = string_end(s, n, i), j;
      if (!e) return 0;
      const char *key = s + i + 1; /* its text, if it is a key */
      size_t klen = e - i - 2;
      memcpy(out + o, s + i, e - i);
      o += e - i;
      for (j = e; j < n && is_space(s[j]); j++) out[o++] = s[j];
      i = j;
      if (!depth || kind[depth - 1] != '{' || j == n || s[j] != ':') continue; /* a value, not a key */
      if (depth == 1) steps_key = key_is(key, klen, "steps");
      if (depth != steps_depth + 1 || steps_depth < 0 || !(key_is(key, klen, "enforced") || key_is(key, klen, "limits")))
        continue;
      out[o++] = ':'; /* a step's "enforced" or "limits": an object's value becomes {} */
      for (i = j + 1; i < n && is_space(s[i]); i++) out[o++] = s[i];
      if (i < n && s[i] == '{') {
        size_t ve = object_end(s, n, i);
        if (!ve) return 0;
        out[o++] = '{';
        out[o++] = '}';
        i = ve;
      }
      continue;
    }
    if (c == '{' || c == '[') {
      if (depth == MAX_DEPTH) return 0;
      kind[depth++] = c;
      if (c == '[' && depth == 2 && steps_key) steps_depth = 2;
    } else if (c == '}' || c == ']') {
      if (!depth || kind[depth - 1] != (c == '}' ? '{' : '[')) return 0;
      if (depth == steps_depth) steps_depth = -1;
      depth--;
    }
    out[o++] = c;
    i++;
  }
  return depth == 0 ? o : 0;
}
