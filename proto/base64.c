/* RFC 4648 base64 (section 4, standard alphabet, "=" padding).
 *
 * Hand-written on purpose: none of the project's dependencies (libuv, json-c,
 * libseccomp, libcap) exports a base64 codec and OpenSSL is not one of them.
 * The decoder is strict (see protocol.h) and is tested against the RFC 4648
 * section 10 vectors plus malformed input in tests/unit/proto/test_base64.c. */
#include <stdint.h>
#include <stdlib.h>

#include "protocol.h"

static const char b64_alphabet[64] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* 0..63 for alphabet characters, -1 for everything else (including '='). */
static int b64_value(unsigned char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
  if (ch >= '0' && ch <= '9') return ch - '0' + 52;
  if (ch == '+') return 62;
  if (ch == '/') return 63;
  return -1;
}

size_t sbp_base64_encoded_len(size_t n) {
  size_t groups = n / 3 + (n % 3 != 0);
  if (groups > (SIZE_MAX - 1) / 4) return SIZE_MAX;
  return groups * 4;
}

char *sbp_base64_encode(const void *data, size_t len, size_t *out_len) {
  const unsigned char *in = data;
  size_t olen = sbp_base64_encoded_len(len);
  if (olen == SIZE_MAX) return NULL;
  char *out = malloc(olen + 1);
  if (!out) return NULL;
  size_t i = 0, o = 0;
  for (; len - i >= 3; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
    out[o++] = b64_alphabet[v >> 18 & 63];
    out[o++] = b64_alphabet[v >> 12 & 63];
    out[o++] = b64_alphabet[v >> 6 & 63];
    out[o++] = b64_alphabet[v & 63];
  }
  if (len - i == 1) {
    uint32_t v = (uint32_t)in[i] << 16;
    out[o++] = b64_alphabet[v >> 18 & 63];
    out[o++] = b64_alphabet[v >> 12 & 63];
    out[o++] = '=';
    out[o++] = '=';
  } else if (len - i == 2) {
    uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
    out[o++] = b64_alphabet[v >> 18 & 63];
    out[o++] = b64_alphabet[v >> 12 & 63];
    out[o++] = b64_alphabet[v >> 6 & 63];
    out[o++] = '=';
  }
  out[o] = '\0';
  if (out_len) *out_len = o;
  return out;
}

static sbp_b64_result b64_invalid(size_t pos, size_t *bad_pos) {
  if (bad_pos) *bad_pos = pos;
  return SBP_B64_INVALID;
}

sbp_b64_result sbp_base64_decode(const char *in, size_t len, unsigned char **out, size_t *out_len,
                                 size_t *bad_pos) {
  *out = NULL;
  *out_len = 0;
  /* Up to two trailing '=' are padding; everything before must be alphabet. */
  size_t data_len = len;
  if (data_len > 0 && in[data_len - 1] == '=') data_len--;
  if (data_len > 0 && in[data_len - 1] == '=') data_len--;
  for (size_t i = 0; i < data_len; i++)
    if (b64_value((unsigned char)in[i]) < 0) return b64_invalid(i, bad_pos);
  size_t rem = data_len % 4;
  /* One character carries only 6 bits: never a whole byte. */
  if (rem == 1) return b64_invalid(data_len, bad_pos);
  /* Padding, when present, completes the last quantum exactly ("Zg==", "Zm8="). */
  if (data_len != len && (len % 4 != 0 || len - data_len != (rem == 2 ? 2u : 1u)))
    return b64_invalid(data_len, bad_pos);
  /* The bits of the last character that do not make a whole byte must be
   * zero (RFC 4648 section 3.5: only the canonical encoding is accepted). */
  if (rem) {
    unsigned last = (unsigned)b64_value((unsigned char)in[data_len - 1]);
    unsigned unused_mask = rem == 2 ? 0x0F : 0x03;
    if (last & unused_mask) return b64_invalid(data_len - 1, bad_pos);
  }

  size_t olen = data_len / 4 * 3 + (rem == 2 ? 1 : rem == 3 ? 2 : 0);
  unsigned char *buf = malloc(olen + 1);
  if (!buf) return SBP_B64_NOMEM;
  size_t o = 0, i = 0;
  for (; data_len - i >= 4; i += 4) {
    uint32_t v = (uint32_t)b64_value((unsigned char)in[i]) << 18 |
                 (uint32_t)b64_value((unsigned char)in[i + 1]) << 12 |
                 (uint32_t)b64_value((unsigned char)in[i + 2]) << 6 |
                 (uint32_t)b64_value((unsigned char)in[i + 3]);
    buf[o++] = (unsigned char)(v >> 16);
    buf[o++] = (unsigned char)(v >> 8);
    buf[o++] = (unsigned char)v;
  }
  if (rem) {
    uint32_t v = (uint32_t)b64_value((unsigned char)in[i]) << 18 |
                 (uint32_t)b64_value((unsigned char)in[i + 1]) << 12;
    if (rem == 3) v |= (uint32_t)b64_value((unsigned char)in[i + 2]) << 6;
    buf[o++] = (unsigned char)(v >> 16);
    if (rem == 3) buf[o++] = (unsigned char)(v >> 8);
  }
  buf[o] = 0;
  *out = buf;
  *out_len = o;
  return SBP_B64_OK;
}
