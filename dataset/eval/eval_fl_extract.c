/* SURGE's extract_code() (fl.py), which its published fl_eval never calls:
 * available as --fl-extract. */
#include <stdlib.h>
#include <string.h>

#include "eval_metrics.h"
#include "eval_unicode.h"

static int at(const uint32_t *t, size_t n, size_t i, const char *lit) {
  for (size_t k = 0; lit[k]; k++)
    if (i + k >= n || t[i + k] != (unsigned char)lit[k]) return 0;
  return 1;
}

/* re.search(r'```(?:json\n)?(.*?)```', s, re.DOTALL): bounds of the group. */
static int fence(const uint32_t *t, size_t n, size_t *b, size_t *e) {
  for (size_t i = 0; i + 3 <= n; i++) {
    if (!at(t, n, i, "```")) continue;
    size_t p = i + 3;
    if (at(t, n, p, "json\n")) p += 5;
    size_t j = sbe_u_find(t, n, p, "```");
    if (j == (size_t)-1) continue;
    *b = p;
    *e = j;
    return 1;
  }
  return 0;
}

char *sbe_fl_extract_code(const char *content) {
  if (!content) return NULL;
  sbe_ustr u = {0}, o = {0};
  sbe_ustr_from_utf8(&u, content, strlen(content));
  size_t b = 0, e = u.len, sb, se;
  fence(u.cp, u.len, &b, &e);
  sbe_u_strip(u.cp + b, e - b, &sb, &se);
  const uint32_t *s = u.cp + b + sb;
  size_t n = se - sb;
  for (size_t i = 0; i < n;) {
    if (s[i] == ',') { /* re.sub(r',\s*([\]}])', r'\1', s) */
      size_t k = i + 1;
      while (k < n && sbe_u_isspace(s[k])) k++;
      if (k < n && (s[k] == ']' || s[k] == '}')) {
        sbe_ustr_push(&o, s[k]);
        i = k + 1;
        continue;
      }
    }
    sbe_ustr_push(&o, s[i++]);
  }
  /* .replace('\\"', '"') then .replace('\\\\', '\\') */
  sbe_ustr q = {0}, r = {0};
  for (size_t i = 0; i < o.len;) {
    if (at(o.cp, o.len, i, "\\\"")) sbe_ustr_push(&q, '"'), i += 2;
    else sbe_ustr_push(&q, o.cp[i++]);
  }
  for (size_t i = 0; i < q.len;) {
    if (at(q.cp, q.len, i, "\\\\")) sbe_ustr_push(&r, '\\'), i += 2;
    else sbe_ustr_push(&r, q.cp[i++]);
  }
  char *res = sbe_utf8_from_cp(r.cp, r.len, NULL);
  sbe_ustr_free(&u);
  sbe_ustr_free(&o);
  sbe_ustr_free(&q);
  sbe_ustr_free(&r);
  return res;
}
