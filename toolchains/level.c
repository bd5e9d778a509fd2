/* Which language level a toolchain accepts, as its file declares it
 * ("language_level"): a fixed text (mcs: "C# 7.2" from its own error
 * message), a regex over the version or over what an argv printed at
 * detection, formatted ("Java {1}"), or the runs of accepted values of an
 * option, probes included ("c++98..c++23, gnu++98..gnu++23"). */
#include "toolchain.h"
#include "cleanup.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *sbt_regex_group(const char *regex, int group, const char *text) {
  regex_t re;
  if (!regex || !text || group < 0 || group > 9 || regcomp(&re, regex, REG_EXTENDED) != 0) return NULL;
  regmatch_t m[10];
  char *out = NULL;
  if (regexec(&re, text, 10, m, 0) == 0 && m[group].rm_so >= 0)
    out = strndup(text + m[group].rm_so, (size_t)(m[group].rm_eo - m[group].rm_so));
  regfree(&re);
  return out;
}

/* "{1}" in format replaced by value. */
static char *format(const char *fmt, const char *value) {
  if (!fmt) return strdup(value);
  const char *p = strstr(fmt, "{1}");
  if (!p) return strdup(fmt);
  size_t n = strlen(fmt) + strlen(value);
  char *out = malloc(n);
  if (out) snprintf(out, n, "%.*s%s%s", (int)(p - fmt), fmt, value, p + 3);
  return out;
}

/* "c++11" and "c++17" are one dialect, "gnu++11" another: the part before
 * the first digit. */
static bool same_dialect(const char *a, const char *b) {
  size_t n = strcspn(a, "0123456789");
  return n == strcspn(b, "0123456789") && strncmp(a, b, n) == 0;
}

/* Runs of consecutive accepted values of one dialect, in the file's order:
 * "c++98..c++23, gnu++98..gnu++23". */
static char *accepted_runs(const sbt_toolchain *t, size_t o) {
  const sbt_option *op = &t->def->options[o];
  size_t len = 1;
  for (size_t k = 0; k < op->n_values; k++) len += strlen(op->values[k]) + 4;
  char *out = calloc(len, 1);
  for (size_t k = 0; out && k < op->n_values;) {
    if (!t->value_ok[o][k]) {
      k++;
      continue;
    }
    size_t end = k;
    while (end + 1 < op->n_values && t->value_ok[o][end + 1] && same_dialect(op->values[k], op->values[end + 1])) end++;
    size_t at = strlen(out);
    if (end == k) snprintf(out + at, len - at, "%s%s", at ? ", " : "", op->values[k]);
    else snprintf(out + at, len - at, "%s%s..%s", at ? ", " : "", op->values[k], op->values[end]);
    k = end + 1;
  }
  return out;
}

char *sbt_level(const sbt_toolchain *t) {
  const sbt_def *d = t->def;
  if (d->level_text) return strdup(d->level_text);
  if (!d->level_format && !d->level_option) return NULL; /* the file does not say */
  SBU_AUTOFREE char *value = NULL;
  if (d->level_option) {
    for (size_t o = 0; o < d->n_options && !value; o++)
      if (!strcmp(d->options[o].name, d->level_option)) value = accepted_runs(t, o);
  } else if (d->level_argv) {
    value = t->level_raw ? strdup(t->level_raw) : NULL; /* matched at detection */
  } else if (d->level_regex) {
    value = sbt_regex_group(d->level_regex, d->level_group, t->version);
  } else {
    value = t->version ? strdup(t->version) : NULL;
  }
  if (!value || !value[0]) return NULL;
  return format(d->level_format, value);
}
