/* The code of a completion, as SandboxFusion's default_extract_helper
 * finds it (sandbox/utils/extraction.py), without custom_extract_logic
 * (which runs client Python outside any sandbox: never served here).
 *
 * Candidates, by priority:
 *   30 fenced:            ```INFO\n BODY \n<whitespace>```  (BODY as short as can be; left to right)
 *   20 incomplete_fenced: ```INFO\n REST  (the first ``` followed by a line break; REST to the end)
 *   10 heuristic:         python: the first `def`/`class` line at column 0 followed by indented lines,
 *                         with the import/from/# lines right above it; bash: every non-blank line
 * Only the highest priority present counts; among its blocks the first
 * whose INFO (trimmed, through SandboxFusion's alias table) names the
 * requested language, else the first. Nothing found: "" ("empty"). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* SandboxFusion's aliases_to_language_tiled: the last language listing an
 * alias wins, so "javascript" is "javascript" (never equal to the request's
 * "nodejs") while "js" is "nodejs". */
static const char *const aliases[][2] = {
    {"python", "python"},   {"Python", "python"},   {"py", "python"},       {"Python3", "python"},
    {"python3", "python"},  {"PY", "python"},       {"cpp", "cpp"},         {"c++", "cpp"},
    {"C++", "cpp"},         {"Cpp", "cpp"},         {"CPP", "cpp"},         {"JS", "nodejs"},
    {"js", "nodejs"},       {"go", "go"},           {"Go", "go"},           {"java", "java"},
    {"Java", "java"},       {"php", "php"},         {"PHP", "php"},         {"csharp", "csharp"},
    {"c#", "csharp"},       {"C#", "csharp"},       {"bash", "bash"},       {"Bash", "bash"},
    {"BASH", "bash"},       {"sh", "bash"},         {"shell", "bash"},      {"typescript", "typescript"},
    {"rust", "rust"},       {"Rust", "rust"},       {"rs", "rust"},         {"sql", "sql"},
    {"SQL", "sql"},         {"Sql", "sql"},         {"D", "D"},             {"d", "D"},
    {"julia", "julia"},     {"Julia", "julia"},     {"jl", "julia"},        {"lua", "lua"},
    {"Lua", "lua"},         {"perl", "perl"},       {"Perl", "perl"},       {"PERL", "perl"},
    {"R", "R"},             {"r", "R"},             {"ruby", "ruby"},       {"Ruby", "ruby"},
    {"scala", "scala"},     {"Scala", "scala"},     {"kotlin", "kotlin"},   {"Kotlin", "kotlin"},
    {"c", "c"},             {"C", "c"},             {"html", "html"},       {"Html", "html"},
    {"HTML", "html"},       {"javascript", "javascript"}, {"Javascript", "javascript"},
    {"JavaScript", "javascript"}, {"verilog", "verilog"}, {"Verilog", "verilog"}, {"VERILOG", "verilog"},
    {"racket", "racket"},   {"swift", "swift"},
};

static bool is_space(char ch) { /* Python's str.strip() and \s for ASCII */
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* The language an info string names, or "". */
static const char *info_language(const char *s, size_t n) {
  while (n && is_space(*s)) s++, n--;
  while (n && is_space(s[n - 1])) n--;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strlen(aliases[i][0]) == n && !memcmp(aliases[i][0], s, n)) return aliases[i][1];
  return "";
}

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

static const char *find3(const char *s, size_t from, size_t len) {
  for (size_t i = from; i + 3 <= len; i++)
    if (s[i] == '`' && s[i + 1] == '`' && s[i + 2] == '`') return s + i;
  return NULL;
}

/* Fenced blocks, left to right: the first whose language is `language`,
 * else the first. 1 found (*start, *n), 0 none. */
static int fenced(const char *s, size_t len, const char *language, size_t *start, size_t *n) {
  size_t pos = 0;
  bool have_first = false;
  while (pos < len) {
    const char *t = find3(s, pos, len);
    if (!t) break;
    size_t i = (size_t)(t - s);
    const char *nl = memchr(s + i + 3, '\n', len - i - 3);
    if (!nl) break; /* no later ``` has a line break after it either */
    size_t body = (size_t)(nl - s) + 1, close = 0, after = 0;
    bool found = false;
    for (size_t k = body; k < len && !found; k++) { /* the shortest BODY: the first \n<ws>``` */
      if (s[k] != '\n') continue;
      size_t j = k + 1;
      while (j < len && is_space(s[j])) j++;
      if (j + 3 <= len && !memcmp(s + j, "```", 3)) {
        close = k;
        after = j + 3;
        found = true;
      }
      k = j - 1; /* every line break before j reaches the same j: linear, whatever the text */
    }
    if (!found) break; /* a later start has fewer candidates: none either */
    const char *lang = info_language(s + i + 3, (size_t)(nl - (s + i + 3)));
    if (!have_first) {
      *start = body;
      *n = close - body;
      have_first = true;
    }
    if (language && *language && !strcmp(lang, language)) {
      *start = body;
      *n = close - body;
      return 1;
    }
    pos = after;
  }
  return have_first;
}

/* The lines of s that are not blank, each ending in \n; "\n" when there
 * is none (Python's "\n".join([...]) + "\n"). malloc'd (*out_len bytes), or NULL. */
static char *nonblank_lines(const char *s, size_t len, size_t *out_len) {
  char *code = malloc(len + 2);
  if (!code) return NULL;
  size_t m = 0;
  for (size_t i = 0; i < len;) {
    const char *nl = memchr(s + i, '\n', len - i);
    size_t e = nl ? (size_t)(nl - s) : len;
    bool blank = true;
    for (size_t k = i; k < e; k++) blank &= is_space(s[k]);
    if (!blank) {
      memcpy(code + m, s + i, e - i);
      m += e - i;
      code[m++] = '\n';
    }
    i = e + 1;
  }
  if (!m) code[m++] = '\n';
  code[m] = '\0';
  *out_len = m;
  return code;
}

/* Python's heuristic block (priority 10): the text without blank lines,
 * then the first def/class line at column 0 followed by indented lines,
 * with the run of import/from/# lines right above it. */
static char *python_heuristic(const char *s, size_t len) {
  size_t m;
  char *code = nonblank_lines(s, len, &m);
  if (!code) return NULL;
  size_t run = SIZE_MAX; /* where the current run of import/from/# lines began */
  for (size_t i = 0; i < m;) {
    size_t e = (size_t)((char *)memchr(code + i, '\n', m - i) - code);
    size_t ll = e - i;
    const char *l = code + i;
    bool head = (ll > 6 && !memcmp(l, "import", 6)) || (ll > 4 && !memcmp(l, "from", 4)) || (ll > 1 && l[0] == '#');
    bool def = (ll > 4 && !memcmp(l, "def ", 4)) || (ll > 6 && !memcmp(l, "class ", 6));
    if (def && e + 1 < m && is_space(code[e + 1])) {
      size_t end = e + 1; /* the indented lines after it */
      while (end < m && is_space(code[end]) && code[end] != '\n') {
        size_t ne = (size_t)((char *)memchr(code + end, '\n', m - end) - code);
        end = ne + 1;
      }
      if (end > e + 1) {
        size_t from = run != SIZE_MAX ? run : i;
        char *r = dup_n(code + from, end - from);
        free(code);
        return r;
      }
    }
    run = head ? (run == SIZE_MAX ? i : run) : SIZE_MAX;
    i = e + 1;
  }
  free(code);
  return NULL;
}

char *sbh_extract_code(const char *s, size_t len, const char *language, const char **type) {
  size_t start = 0, n = 0;
  if (fenced(s, len, language, &start, &n)) {
    *type = "fenced";
    return dup_n(s + start, n);
  }
  const char *t = find3(s, 0, len); /* the first ```: a line break after it, or none after any */
  const char *open_nl = t ? memchr(t + 3, '\n', len - (size_t)(t + 3 - s)) : NULL;
  if (open_nl) {
    *type = "incomplete_fenced";
    return dup_n(open_nl + 1, len - (size_t)(open_nl + 1 - s));
  }
  if (language && !strcmp(language, "python")) {
    char *c = python_heuristic(s, len);
    if (c) {
      *type = "heuristic";
      return c;
    }
  } else if (language && !strcmp(language, "bash")) { /* its heuristic: the lines that are not blank */
    size_t m;
    char *c = nonblank_lines(s, len, &m);
    if (c) *type = "heuristic";
    return c;
  }
  *type = "empty";
  return strdup("");
}
