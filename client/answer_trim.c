/* sbc_answer_trim: a walk of the line's structure, strings skipped whole. */
#include "answer_trim.h"

#include <stdbool.h>
#include <stdlib.h>
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

/* What sbc_result_parse never reads of a step, dropped with its value (json-c
 * makes an object of each value and a table of each object: most of the
 * parse's cost), and of the answer itself. */
static const char *const step_dropped[] = {"stdout_sha256", "stderr_sha256", "user_time_s", "sys_time_s",
                                           "setup_time_s",  "cgroup_peak_kb", "cpu_source",  "limits",
                                           "cgroup",        "uid",            "warnings",    "argv"};
static const char *const top_dropped[] = {"profile"};

static bool listed(const char *k, size_t len, const char *const *names, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (key_is(k, len, names[i])) return true;
  return false;
}

/* s[i] starts a value (after spaces): the index after it, or 0 */
static size_t value_end(const char *s, size_t n, size_t i) {
  while (i < n && is_space(s[i])) i++;
  if (i == n) return 0;
  if (s[i] == '"') return string_end(s, n, i);
  if (s[i] == '{' || s[i] == '[') return object_end(s, n, i);
  size_t start = i;
  while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && !is_space(s[i])) i++;
  return i > start ? i : 0;
}

/* The pair whose key starts at out[o_key] and whose value ends at s[ve]
 * left out: with the comma after it, or the one before it when it is the
 * object's last. The output's new end; *i where the walk goes on. */
static size_t drop_pair(const char *s, size_t n, size_t ve, const char *out, size_t o_key, size_t *i) {
  size_t k = ve;
  while (k < n && is_space(s[k])) k++;
  if (k < n && s[k] == ',') {
    *i = k + 1;
    return o_key;
  }
  *i = k;
  size_t p = o_key;
  while (p > 0 && is_space(out[p - 1])) p--;
  return p > 0 && out[p - 1] == ',' ? p - 1 : o_key;
}

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
      size_t klen = e - i - 2, o_key = o;
      memcpy(out + o, s + i, e - i);
      o += e - i;
      for (j = e; j < n && is_space(s[j]); j++) out[o++] = s[j];
      i = j;
      if (!depth || kind[depth - 1] != '{' || j == n || s[j] != ':') continue; /* a value, not a key */
      if (depth == 1) steps_key = key_is(key, klen, "steps");
      bool in_step = steps_depth >= 0 && depth == steps_depth + 1;
      if ((in_step && listed(key, klen, step_dropped, sizeof step_dropped / sizeof *step_dropped)) ||
          (depth == 1 && listed(key, klen, top_dropped, sizeof top_dropped / sizeof *top_dropped))) {
        size_t ve = value_end(s, n, j + 1);
        if (!ve) return 0;
        o = drop_pair(s, n, ve, out, o_key, &i);
        continue;
      }
      if (!in_step || !key_is(key, klen, "enforced")) continue;
      out[o++] = ':'; /* a step's "enforced": an object's value becomes {} */
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

json_object *sbc_trimmer_parse(sbc_trimmer *t, const char *line, size_t len, bool trim) {
  if (!t->tok && !(t->tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH))) return NULL;
  json_tokener_reset(t->tok);
  if (trim && t->cap < len + 1) {
    char *nb = realloc(t->buf, len + 1);
    if (nb) t->buf = nb, t->cap = len + 1;
  }
  size_t n = trim && t->cap >= len + 1 ? sbc_answer_trim(line, len, t->buf) : 0;
  return n ? json_tokener_parse_ex(t->tok, t->buf, (int)n) : json_tokener_parse_ex(t->tok, line, (int)len);
}

void sbc_trimmer_free(sbc_trimmer *t) {
  free(t->buf);
  if (t->tok) json_tokener_free(t->tok);
  *t = (sbc_trimmer){0};
}
