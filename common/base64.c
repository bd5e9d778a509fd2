/* RFC 4648 base64 (section 4, standard alphabet, "=" padding).
 *
 * Encoding is nettle's (already a dependency, for the compile cache's
 * SHA-256). Decoding is not: nettle's decoder is lenient (it skips
 * whitespace and ignores non-zero pad bits, where the protocol accepts only
 * the canonical encoding, protocol.h), and it decodes one character per
 * function call: 14.8 ms per MB measured against 1.x ms for the table-driven
 * single pass below. Uploads (a static binary in content_b64) are decoded on
 * the daemon's event loop, so this is on its critical path.
 * Tested against the RFC 4648 section 10 vectors plus malformed input in
 * tests/unit/common/test_base64.c, and fuzzed. */
#include <nettle/base64.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"

/* 0..63 for alphabet characters, 0xFF for everything else (including '='). */
static const unsigned char b64_table[256] = {
    ['A'] = 0,  ['B'] = 1,  ['C'] = 2,  ['D'] = 3,  ['E'] = 4,  ['F'] = 5,  ['G'] = 6,  ['H'] = 7,
    ['I'] = 8,  ['J'] = 9,  ['K'] = 10, ['L'] = 11, ['M'] = 12, ['N'] = 13, ['O'] = 14, ['P'] = 15,
    ['Q'] = 16, ['R'] = 17, ['S'] = 18, ['T'] = 19, ['U'] = 20, ['V'] = 21, ['W'] = 22, ['X'] = 23,
    ['Y'] = 24, ['Z'] = 25, ['a'] = 26, ['b'] = 27, ['c'] = 28, ['d'] = 29, ['e'] = 30, ['f'] = 31,
    ['g'] = 32, ['h'] = 33, ['i'] = 34, ['j'] = 35, ['k'] = 36, ['l'] = 37, ['m'] = 38, ['n'] = 39,
    ['o'] = 40, ['p'] = 41, ['q'] = 42, ['r'] = 43, ['s'] = 44, ['t'] = 45, ['u'] = 46, ['v'] = 47,
    ['w'] = 48, ['x'] = 49, ['y'] = 50, ['z'] = 51, ['0'] = 52, ['1'] = 53, ['2'] = 54, ['3'] = 55,
    ['4'] = 56, ['5'] = 57, ['6'] = 58, ['7'] = 59, ['8'] = 60, ['9'] = 61, ['+'] = 62, ['/'] = 63,
};
/* The designated initialisers leave every other entry 0, which is also 'A':
 * this marks which ones are really in the alphabet. */
static unsigned char b64_value(unsigned char ch) {
  unsigned char v = b64_table[ch];
  return v || ch == 'A' ? v : 0xFF;
}

size_t sbu_base64_encoded_len(size_t n) {
  size_t groups = n / 3 + (n % 3 != 0);
  if (groups > (SIZE_MAX - 1) / 4) return SIZE_MAX;
  return groups * 4;
}

char *sbu_base64_encode(const void *data, size_t len, size_t *out_len) {
  size_t olen = sbu_base64_encoded_len(len);
  if (olen == SIZE_MAX) return NULL;
  char *out = malloc(olen + 1);
  if (!out) return NULL;
  base64_encode_raw(out, len, data);
  out[olen] = '\0';
  if (out_len) *out_len = olen;
  return out;
}

static sbu_b64_result b64_invalid(size_t pos, size_t *bad_pos) {
  if (bad_pos) *bad_pos = pos;
  return SBU_B64_INVALID;
}

/* the first character in [i, end) outside the alphabet, or end */
static size_t first_bad(const char *in, size_t i, size_t end) {
  while (i < end && b64_value((unsigned char)in[i]) != 0xFF) i++;
  return i;
}

sbu_b64_result sbu_base64_decode(const char *in, size_t len, unsigned char **out, size_t *out_len, size_t *bad_pos) {
  *out = NULL;
  *out_len = 0;
  /* Up to two trailing '=' are padding; everything before must be alphabet. */
  size_t data_len = len;
  if (data_len > 0 && in[data_len - 1] == '=') data_len--;
  if (data_len > 0 && in[data_len - 1] == '=') data_len--;
  size_t rem = data_len % 4, full = data_len - rem;
  unsigned char *buf = malloc(full / 4 * 3 + 3);
  if (!buf) return SBU_B64_NOMEM;
  /* One pass that validates while it decodes: an invalid character's table
   * value (0xFF) sets bit 7 in the OR of the quantum. */
  size_t o = 0, i = 0;
  for (; i < full; i += 4) {
    uint32_t a = b64_value((unsigned char)in[i]), b = b64_value((unsigned char)in[i + 1]),
             c = b64_value((unsigned char)in[i + 2]), d = b64_value((unsigned char)in[i + 3]);
    if ((a | b | c | d) & 0x80) break;
    uint32_t v = a << 18 | b << 12 | c << 6 | d;
    buf[o++] = (unsigned char)(v >> 16);
    buf[o++] = (unsigned char)(v >> 8);
    buf[o++] = (unsigned char)v;
  }
  size_t bad = first_bad(in, i, data_len);
  if (bad < data_len) {
    free(buf);
    return b64_invalid(bad, bad_pos);
  }
  /* One character carries only 6 bits: never a whole byte. */
  if (rem == 1) {
    free(buf);
    return b64_invalid(data_len, bad_pos);
  }
  /* Padding, when present, completes the last quantum exactly ("Zg==", "Zm8="). */
  if (data_len != len && (len % 4 != 0 || len - data_len != (rem == 2 ? 2u : 1u))) {
    free(buf);
    return b64_invalid(data_len, bad_pos);
  }
  if (rem) {
    uint32_t a = b64_value((unsigned char)in[i]), b = b64_value((unsigned char)in[i + 1]),
             c = rem == 3 ? b64_value((unsigned char)in[i + 2]) : 0;
    /* The bits of the last character that do not make a whole byte must be
     * zero (RFC 4648 section 3.5: only the canonical encoding is accepted). */
    if ((rem == 2 ? b & 0x0F : c & 0x03) != 0) {
      free(buf);
      return b64_invalid(data_len - 1, bad_pos);
    }
    uint32_t v = a << 18 | b << 12 | c << 6;
    buf[o++] = (unsigned char)(v >> 16);
    if (rem == 3) buf[o++] = (unsigned char)(v >> 8);
  }
  buf[o] = 0;
  *out = buf;
  *out_len = o;
  return SBU_B64_OK;
}
