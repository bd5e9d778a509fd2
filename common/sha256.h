/* SHA-256 as lowercase hex (nettle underneath), and hex of any bytes.
 * Prefix sbu_ (common utilities). */
#ifndef SURGEBOX_SHA256_H
#define SURGEBOX_SHA256_H

#include <stddef.h>

#define SBU_SHA256_HEX 65 /* 64 hex digits and the NUL */

struct sha256_ctx;

/* 2n lowercase hex digits of bytes, then a NUL (out holds 2n + 1). */
void sbu_hex(const void *bytes, size_t n, char *out);
/* SHA-256 of data as hex. */
void sbu_sha256_hex(const void *data, size_t len, char out[SBU_SHA256_HEX]);
/* Finish a hash fed with nettle's sha256_update, as hex (the context is reset). */
void sbu_sha256_digest_hex(struct sha256_ctx *ctx, char out[SBU_SHA256_HEX]);
/* SHA-256 of a file's bytes as hex: 0, or -1 with errno (out untouched). */
int sbu_sha256_file_hex(const char *path, char out[SBU_SHA256_HEX]);

#endif
