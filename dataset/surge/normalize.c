/* The documented normalisations of RECIPES.md, each a pure function. They
 * only touch text a toolchain version controls (paths, offsets, option
 * tags, header positions) or whitespace; never numbers or addresses in a
 * program's own output. */
#include "regen.h"
#include "cleanup.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

/* Replace every match of pattern (POSIX ERE) by repl, where "\\1" inserts
 * group 1. */
static char *replace_all(const char *s, const char *pattern, const char *repl) {
  regex_t re;
  if (regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE) != 0) return strdup(s);
  size_t cap = strlen(s) * 2 + 64, len = 0;
  char *out = malloc(cap);
  const char *p = s;
  regmatch_t m[2];
  int flags = 0;
  while (out && regexec(&re, p, 2, m, flags) == 0) {
    size_t need = len + (size_t)m[0].rm_so + strlen(repl) + (size_t)(m[1].rm_eo - m[1].rm_so) + 1;
    if (need > cap) out = realloc(out, cap = need * 2);
    if (!out) break;
    memcpy(out + len, p, (size_t)m[0].rm_so);
    len += (size_t)m[0].rm_so;
    for (const char *r = repl; *r; r++) {
      if (r[0] == '\\' && r[1] == '1' && m[1].rm_so >= 0) {
        memcpy(out + len, p + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so));
        len += (size_t)(m[1].rm_eo - m[1].rm_so);
        r++;
      } else {
        out[len++] = *r;
      }
    }
    if (m[0].rm_eo == 0) { /* empty match: copy one char to move on */
      if (!*p) break;
      out[len++] = *p++;
    } else {
      p += m[0].rm_eo;
    }
    flags = REG_NOTBOL;
  }
  regfree(&re);
  if (!out) return NULL;
  size_t rest = strlen(p);
  if (len + rest + 1 > cap) out = realloc(out, len + rest + 1);
  if (!out) return NULL;
  memcpy(out + len, p, rest + 1);
  return out;
}

static char *chain(char *s, const char *pattern, const char *repl) {
  char *r = replace_all(s, pattern, repl);
  free(s);
  return r;
}

char *sbs_n1_toolchain_paths(const char *s) {
  char *r = replace_all(s, "include/c\\+\\+/[0-9]+", "include/c++/N"); /* also clang's ../../../../include/c++/9 */
  return chain(r, "/usr/lib/gcc/x86_64-linux-gnu/[0-9]+/", "/usr/lib/gcc/x86_64-linux-gnu/N/");
}

char *sbs_n2_link_noise(const char *s) {
  char *r = replace_all(s, "\\+0x[0-9a-fA-F]+", "+0x...");
  r = chain(r, "/tmp/cc[A-Za-z0-9]+\\.o", "/tmp/cc*.o");
  return chain(r, "/tmp/([A-Za-z0-9_]+)-[0-9a-f]+\\.o", "/tmp/\\1-*.o"); /* clang's temporaries */
}

char *sbs_n3_trailing_ws(const char *s) {
  char *r = replace_all(s, "[ \t\r]+$", "");
  size_t n = strlen(r);
  while (n && strchr(" \t\r\n", r[n - 1])) r[--n] = '\0';
  return r;
}

/* The position of a diagnostic inside a system header, and the line-number
 * gutter of the source excerpt that follows it ("  298 | ..."), depend on
 * the header's version. Excerpts of the user's own file are left alone. */
char *sbs_n4_system_header_pos(const char *s) {
  char *r = replace_all(s, "(/usr/[^: \t\n]+):[0-9]+(:[0-9]+)?", "\\1:L");
  size_t n = strlen(r);
  char *out = malloc(n + 1);
  size_t o = 0;
  bool in_header_excerpt = false;
  for (const char *line = r; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line + 1) : strlen(line);
    const char *p = line;
    while (p < line + len && *p == ' ') p++;
    const char *digits = p;
    while (p < line + len && *p >= '0' && *p <= '9') p++;
    bool gutter = p > digits && p + 2 <= line + len && p[0] == ' ' && p[1] == '|';
    bool caret = p == digits && p + 1 < line + len && p[0] == '|'; /* "      |   ^" */
    if (in_header_excerpt && gutter) {
      memcpy(out + o, line, (size_t)(digits - line));
      o += (size_t)(digits - line);
      out[o++] = 'N';
      memcpy(out + o, p, (size_t)(line + len - p));
      o += (size_t)(line + len - p);
    } else {
      memcpy(out + o, line, len);
      o += len;
      if (!caret && !gutter) in_header_excerpt = strncmp(line, "/usr/", 5) == 0 && memmem(line, len, ":L:", 3);
    }
    line += len;
  }
  out[o] = '\0';
  free(r);
  return out;
}

char *sbs_n5_warning_tags(const char *s) { return replace_all(s, " ?\\[-W[^] \n]*\\]", ""); }

char *sbs_n6_whitespace_runs(const char *s) {
  char *r = replace_all(s, "[ \t\r\n]+", " ");
  char *t = sbs_strip(r);
  free(r);
  return t;
}

char *sbs_normalize(const char *s, bool whitespace_free) {
  /* the passes in their order (not their numbers'); n6 only for a whitespace-free comparison */
  static char *(*const passes[])(const char *) = {sbs_n1_toolchain_paths, sbs_n2_link_noise, sbs_n4_system_header_pos,
                                                 sbs_n5_warning_tags, sbs_n3_trailing_ws, sbs_n6_whitespace_runs};
  char *out = passes[0](s);
  for (size_t i = 1; out && i < (whitespace_free ? 6 : 5); i++) {
    SBU_AUTOFREE char *in = out;
    out = passes[i](in);
  }
  return out;
}
