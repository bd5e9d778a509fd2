/* The bearer token: read once from a file only its owner may read, and
 * compared in time that does not depend on where the first difference is. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOKEN_MAX 4096

int sbh_token_load(const char *file, char **out, char *err, size_t n) {
  int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    snprintf(err, n, "--http-token-file %s: %s", file, strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    snprintf(err, n, "--http-token-file %s: not a regular file", file);
    return -1;
  }
  if (st.st_mode & 0077) {
    close(fd);
    snprintf(err, n, "--http-token-file %s: readable by others (mode %03o): chmod 600 it", file,
             (unsigned)(st.st_mode & 0777));
    return -1;
  }
  char buf[TOKEN_MAX + 1];
  ssize_t r = read(fd, buf, TOKEN_MAX + 1);
  close(fd);
  if (r < 0 || r > TOKEN_MAX) {
    snprintf(err, n, "--http-token-file %s: %s", file, r < 0 ? strerror(errno) : "longer than 4096 bytes");
    return -1;
  }
  size_t len = (size_t)r;
  while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ')) len--;
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)buf[i] <= ' ' || (unsigned char)buf[i] >= 127) {
      snprintf(err, n, "--http-token-file %s: the token must be printable ASCII without spaces", file);
      return -1;
    }
  if (len < 16) {
    snprintf(err, n, "--http-token-file %s: the token is shorter than 16 characters: use e.g. "
                     "head -c 32 /dev/urandom | base64 > FILE", file);
    return -1;
  }
  buf[len] = '\0';
  *out = strdup(buf);
  if (!*out) {
    snprintf(err, n, "out of memory");
    return -1;
  }
  return 0;
}

bool sbh_token_ok(const char *token, const char *header, size_t header_len) {
  static const char prefix[] = "Bearer ";
  size_t tl = strlen(token), want = sizeof prefix - 1 + tl;
  unsigned char diff = header_len != want;
  /* every byte of the expected value is looked at, whatever the header is */
  for (size_t i = 0; i < want; i++) {
    unsigned char e = (unsigned char)(i < sizeof prefix - 1 ? prefix[i] : token[i - (sizeof prefix - 1)]);
    unsigned char g = header && i < header_len ? (unsigned char)header[i] : 0;
    diff |= e ^ g;
  }
  return diff == 0;
}
