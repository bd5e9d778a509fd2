/* Where an installed surgebox keeps its data: relative to the binary
 * (<prefix>/bin/surgebox -> <prefix>/share/surgebox/...), so that any
 * `cmake --install --prefix` works without paths compiled in. */
#include "toolchain.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *sbt_installed_dir(const char *sub, char *buf, size_t cap) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return NULL;
  self[n] = '\0';
  char *slash = strrchr(self, '/');
  if (!slash) return NULL;
  *slash = '\0'; /* <prefix>/bin */
  slash = strrchr(self, '/');
  if (!slash) return NULL;
  *slash = '\0'; /* <prefix> */
  int len = snprintf(buf, cap, "%s/share/surgebox/%s", self, sub);
  if (len < 0 || (size_t)len >= cap || access(buf, R_OK) != 0) return NULL;
  return buf;
}
