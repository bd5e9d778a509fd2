/* SandboxFusion's files and fetch_files name paths in the sandbox's working
 * directory. Here they all stay below the job's /app: an absolute path is
 * taken inside it ("/app/x" and "/x" are both /app/x), and ".." is refused
 * rather than resolved. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *sbh_app_path(const char *path, size_t len, char *why, size_t n) {
  if (memchr(path, '\0', len)) {
    snprintf(why, n, "a NUL byte in the path");
    return NULL;
  }
  const char *p = path, *end = path + len;
  if (len >= 5 && !strncmp(p, "/app/", 5)) p += 5;
  char *out = malloc(len + 1);
  if (!out) {
    snprintf(why, n, "out of memory");
    return NULL;
  }
  size_t o = 0;
  while (p < end) {
    while (p < end && *p == '/') p++;
    const char *q = p;
    while (q < end && *q != '/') q++;
    size_t cl = (size_t)(q - p);
    if (cl == 2 && p[0] == '.' && p[1] == '.') {
      free(out);
      snprintf(why, n, "a \"..\" component (paths stay inside the sandbox's /app)");
      return NULL;
    }
    if (cl && !(cl == 1 && p[0] == '.')) {
      if (o) out[o++] = '/';
      memcpy(out + o, p, cl);
      o += cl;
    }
    p = q;
  }
  out[o] = '\0';
  if (!o) {
    free(out);
    snprintf(why, n, "no file name (empty, \"/\" or \".\")");
    return NULL;
  }
  return out;
}
