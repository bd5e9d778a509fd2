/* RFC 4648 base64 (section 4, standard alphabet, "=" padding): the one
 * encoder and the one strict decoder. Prefix sbu_. */
#ifndef SURGEBOX_BASE64_H
#define SURGEBOX_BASE64_H

#include <stddef.h>

typedef enum {
  SBU_B64_OK = 0,
  SBU_B64_INVALID = -1, /* bad character, misplaced '=', bad length or non-zero pad bits */
  SBU_B64_NOMEM = -2,
} sbu_b64_result;

/* Length of the padded encoding of n bytes (without NUL); SIZE_MAX on overflow. */
size_t sbu_base64_encoded_len(size_t n);
/* malloc'd, padded, NUL-terminated; *out_len (may be NULL) excludes the NUL.
 * NULL on allocation failure or overflow. */
char *sbu_base64_encode(const void *data, size_t len, size_t *out_len);
/* Strict decoder: no whitespace, '=' only as 1-2 trailing pad characters of a
 * length that is a multiple of 4 (unpadded input is accepted), the unused bits
 * of the last character must be zero. *out is malloc'd with one extra NUL byte
 * after *out_len bytes. On SBU_B64_INVALID, *bad_pos (may be NULL) is the
 * offset of the first offending character (len if the input is truncated). */
sbu_b64_result sbu_base64_decode(const char *in, size_t len, unsigned char **out, size_t *out_len, size_t *bad_pos);

#endif
