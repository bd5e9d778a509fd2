/* SHA-256 as hex: see sha256.h. */
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdint.h>
#include <unistd.h>

#include "cleanup.h"

void sbu_hex(const void *bytes, size_t n, char *out) {
  static const char digit[] = "0123456789abcdef";
  const uint8_t *b = bytes;
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digit[b[i] >> 4];
    out[2 * i + 1] = digit[b[i] & 15];
  }
  out[2 * n] = '\0';
}

void sbu_sha256_digest_hex(struct sha256_ctx *ctx, char out[SBU_SHA256_HEX]) {
  uint8_t d[SHA256_DIGEST_SIZE];
  sha256_digest(ctx, sizeof d, d);
  sbu_hex(d, sizeof d, out);
}

void sbu_sha256_hex(const void *data, size_t len, char out[SBU_SHA256_HEX]) {
  struct sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, len, data);
  sbu_sha256_digest_hex(&ctx, out);
}

int sbu_sha256_file_hex(const char *path, char out[SBU_SHA256_HEX]) {
  SBU_AUTOCLOSE int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct sha256_ctx ctx;
  sha256_init(&ctx);
  uint8_t buf[65536];
  for (;;) {
    ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    sha256_update(&ctx, (size_t)r, buf);
  }
  sbu_sha256_digest_hex(&ctx, out);
  return 0;
}
