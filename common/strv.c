/* NULL-terminated string arrays: see strv.h. */
#include "strv.h"

#include <stdlib.h>
#include <string.h>

size_t sbu_strv_len(const char *const *v) {
  size_t n = 0;
  while (v && v[n]) n++;
  return n;
}

char **sbu_strv_copy(const char *const *v) {
  size_t n = sbu_strv_len(v);
  char **out = calloc(n + 1, sizeof *out);
  for (size_t i = 0; out && i < n; i++)
    if (!(out[i] = strdup(v[i]))) {
      sbu_strv_free(out);
      return NULL;
    }
  return out;
}

void sbu_strv_free(char **v) {
  for (size_t i = 0; v && v[i]; i++) free(v[i]);
  free(v);
}
