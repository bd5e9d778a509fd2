/* extract_output, step by step as SURGE's regexes behave (code points). */
#include "eval_extract.h"

#include <stdlib.h>
#include <string.h>

static int at(const uint32_t *t, size_t n, size_t i, const char *lit) {
  for (size_t k = 0; lit[k]; k++)
    if (i + k >= n || t[i + k] != (unsigned char)lit[k]) return 0;
  return 1;
}

/* re.sub(r"\*\*.*?\*\*\s*", "", t): '.' stops at '\n'; \s* eats newlines too. */
static void strip_bold(const uint32_t *t, size_t n, sbe_ustr *out) {
  size_t i = 0;
  while (i < n) {
    if (at(t, n, i, "**")) {
      size_t j = i + 2;
      while (j < n && t[j] != '\n' && !at(t, n, j, "**")) j++;
      if (at(t, n, j, "**")) {
        i = j + 2;
        while (i < n && sbe_u_isspace(t[i])) i++;
        continue;
      }
    }
    sbe_ustr_push(out, t[i++]);
  }
}

static void append_stripped(sbe_ustr *out, const uint32_t *t, size_t n) {
  size_t b, e;
  sbe_u_strip(t, n, &b, &e);
  sbe_ustr_append(out, t + b, e - b);
}

/* re.search(r"```(?:\w+)?\n(.*?)\n```", t, re.DOTALL): first match. */
static int code_block(const uint32_t *t, size_t n, sbe_ustr *out) {
  for (size_t i = 0; i + 3 <= n; i++) {
    if (!at(t, n, i, "```")) continue;
    size_t k = i + 3;
    while (k < n && sbe_u_isword(t[k])) k++;
    if (k >= n || t[k] != '\n') continue;
    size_t p = k + 1, j = sbe_u_find(t, n, p, "\n```");
    if (j == (size_t)-1) return 0; /* no later start can close either */
    append_stripped(out, t + p, j - p);
    return 1;
  }
  return 0;
}

/* re.search(r"`([^`]+)`", t): first match. */
static int inline_code(const uint32_t *t, size_t n, sbe_ustr *out) {
  for (size_t i = 0; i < n; i++) {
    if (t[i] != '`') continue;
    size_t j = i + 1;
    while (j < n && t[j] != '`') j++;
    if (j >= n) return 0;
    if (j == i + 1) continue; /* "``": [^`]+ needs one character */
    append_stripped(out, t + i + 1, j - i - 1);
    return 1;
  }
  return 0;
}

int sbe_extract_cp(const uint32_t *cp, size_t n, sbe_ustr *out) {
  size_t b, e;
  sbe_u_strip(cp, n, &b, &e);
  size_t o = sbe_u_find(cp, e, b, "Output:");
  if (o != (size_t)-1) { /* Output:\s*\n*(.*) then strip == the rest, stripped */
    sbe_u_strip(cp + o + 7, e - o - 7, &b, &e);
    b += o + 7;
    e += o + 7;
  }
  sbe_ustr t = {0};
  strip_bold(cp + b, e - b, &t);
  size_t start = out->len;
  int found = code_block(t.cp, t.len, out) || inline_code(t.cp, t.len, out);
  if (!found) {
    size_t cut = sbe_u_find(t.cp, t.len, 0, "\n\n");
    size_t len = cut == (size_t)-1 ? t.len : cut;
    sbe_u_strip(t.cp, len, &b, &e);
    if (at(t.cp, e, b, "**")) { /* remove every "**", then strip again */
      sbe_ustr tmp = {0};
      for (size_t i = b; i < e;) {
        if (at(t.cp, e, i, "**"))
          i += 2;
        else
          sbe_ustr_push(&tmp, t.cp[i++]);
      }
      append_stripped(out, tmp.cp, tmp.len);
      sbe_ustr_free(&tmp);
    } else {
      sbe_ustr_append(out, t.cp + b, e - b);
    }
    found = out->len > start; /* an empty first paragraph is None */
  }
  sbe_ustr_free(&t);
  return found;
}

char *sbe_extract_n(const char *text, size_t n, size_t *out_len) {
  if (!text) return NULL;
  sbe_ustr in = {0}, out = {0};
  sbe_ustr_from_utf8(&in, text, n);
  char *res = NULL;
  if (sbe_extract_cp(in.cp, in.len, &out)) res = sbe_utf8_from_cp(out.cp, out.len, out_len);
  sbe_ustr_free(&in);
  sbe_ustr_free(&out);
  return res;
}

char *sbe_extract(const char *text) { return text ? sbe_extract_n(text, strlen(text), NULL) : NULL; }
