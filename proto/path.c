/* Validation and normalisation of the relative paths of job files. */
#include <stdlib.h>
#include <string.h>

#include "protocol.h"

static int reject(const char **why, const char *msg) {
  *why = msg;
  return -1;
}

int sbp_path_normalize(const char *path, size_t len, char **out, const char **why) {
  *out = NULL;
  *why = NULL;
  if (len == 0) return reject(why, "is empty");
  if (memchr(path, '\0', len)) return reject(why, "contains a NUL byte");
  if (len > SBP_MAX_PATH) return reject(why, "is longer than 4096 bytes");
  if (path[0] == '/') return reject(why, "is absolute (must be relative to the job directory)");
  if (path[len - 1] == '/') return reject(why, "ends with \"/\" (names a directory)");

  char *buf = malloc(len + 1);
  if (!buf) return -2;
  size_t o = 0;
  size_t i = 0;
  while (i < len) {
    const char *comp = path + i;
    const char *slash = memchr(comp, '/', len - i);
    size_t clen = slash ? (size_t)(slash - comp) : len - i;
    i += clen + 1;
    if (clen == 0 || (clen == 1 && comp[0] == '.')) continue;
    if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
      free(buf);
      return reject(why, "has a \"..\" component");
    }
    if (clen > SBP_MAX_NAME) {
      free(buf);
      return reject(why, "has a component longer than 255 bytes");
    }
    if (o) buf[o++] = '/';
    memcpy(buf + o, comp, clen);
    o += clen;
  }
  if (o == 0) {
    free(buf);
    return reject(why, "names no file (only \".\" components)");
  }
  buf[o] = '\0';
  *out = buf;
  return 0;
}
