/* base64: RFC 4648 section 10 vectors, round trips, strictness. */
#include <stdint.h>
#include <stdlib.h>

#include "../check.h"
#include "base64.h"

static void check_encode(const char *in, const char *want) {
  size_t n = 0;
  char *got = sbu_base64_encode(in, strlen(in), &n);
  CHECK_STR(got, want);
  CHECK(n == strlen(want));
  CHECK(sbu_base64_encoded_len(strlen(in)) == strlen(want));
  free(got);
}

static void check_decode(const char *in, const char *want) {
  unsigned char *out = NULL;
  size_t n = 99, bad = 99;
  CHECK(sbu_base64_decode(in, strlen(in), &out, &n, &bad) == SBU_B64_OK);
  CHECK(out != NULL);
  CHECK(n == strlen(want));
  if (out) {
    CHECK(memcmp(out, want, n) == 0);
    CHECK(out[n] == 0);
  }
  free(out);
}

static void check_invalid(const char *in, size_t want_pos) {
  unsigned char *out = (unsigned char *)"x";
  size_t n = 99, bad = 12345;
  int r = sbu_base64_decode(in, strlen(in), &out, &n, &bad);
  CHECK(r == SBU_B64_INVALID);
  CHECK(out == NULL);
  CHECK(n == 0);
  if (bad != want_pos) fprintf(stderr, "  input \"%s\": bad_pos %zu, expected %zu\n", in, bad, want_pos);
  CHECK(bad == want_pos);
}

static void test_rfc4648_vectors(void) {
  /* RFC 4648 section 10 */
  static const char *const v[][2] = {
      {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},         {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    check_encode(v[i][0], v[i][1]);
    check_decode(v[i][1], v[i][0]);
  }
  /* unpadded forms decode the same */
  check_decode("Zg", "f");
  check_decode("Zm8", "fo");
  check_decode("Zm9vYg", "foob");
  check_decode("Zm9vYmE", "fooba");
}

static void test_binary_round_trip(void) {
  unsigned char all[256 * 3 + 2];
  for (size_t i = 0; i < sizeof all; i++) all[i] = (unsigned char)(i * 7 + 3);
  for (size_t len = 0; len <= sizeof all; len += (len < 10 ? 1 : 37)) {
    size_t elen = 0;
    char *enc = sbu_base64_encode(all, len, &elen);
    CHECK(enc != NULL);
    CHECK(elen % 4 == 0);
    CHECK(elen == sbu_base64_encoded_len(len));
    unsigned char *dec = NULL;
    size_t dlen = 0;
    CHECK(sbu_base64_decode(enc, elen, &dec, &dlen, NULL) == SBU_B64_OK);
    CHECK(dlen == len);
    CHECK(dec && memcmp(dec, all, len) == 0);
    free(enc);
    free(dec);
  }
  /* every alphabet character, including + and / */
  check_decode("+/+/", "\xfb\xff\xbf");
  check_encode("\xfb\xff\xbf", "+/+/");
  unsigned char *out = NULL;
  size_t n = 0;
  CHECK(sbu_base64_decode("AAAA", 4, &out, &n, NULL) == SBU_B64_OK);
  CHECK(n == 3 && out && out[0] == 0 && out[1] == 0 && out[2] == 0);
  free(out);
}

static void test_invalid(void) {
  check_invalid("Z", 1);           /* one character is never a byte */
  check_invalid("Zm9vY", 5);       /* 4k+1 characters */
  check_invalid("Zg=", 2);         /* padded but not a whole quantum */
  check_invalid("Zg===", 2);       /* too much padding */
  check_invalid("Zm8==", 3);       /* "Zm8" needs one "=", not two */
  check_invalid("Zm9v=", 4);       /* padding after a full quantum */
  check_invalid("=", 0);
  check_invalid("====", 0);
  check_invalid("Zg==Zg==", 2);    /* padding in the middle */
  check_invalid("Zm 9v", 2);       /* whitespace */
  check_invalid("Zm9v\n", 4);
  check_invalid("Zm-v", 2);        /* URL-safe alphabet is not accepted */
  check_invalid("Zm_v", 2);
  check_invalid("Zm9v\x80YQ==", 4); /* non-ASCII */
  check_invalid("Zh==", 1);        /* non-zero pad bits: not canonical ("Zg==") */
  check_invalid("Zm9=", 2);        /* non-canonical "Zm8=" */
  /* an embedded NUL is not silently the end of the input */
  unsigned char *out = NULL;
  size_t n = 0, bad = 0;
  CHECK(sbu_base64_decode("Zm9v\0Zm9v", 9, &out, &n, &bad) == SBU_B64_INVALID);
  CHECK(bad == 4);
  CHECK(out == NULL);
}

static void test_encoded_len(void) {
  CHECK(sbu_base64_encoded_len(0) == 0);
  CHECK(sbu_base64_encoded_len(1) == 4);
  CHECK(sbu_base64_encoded_len(3) == 4);
  CHECK(sbu_base64_encoded_len(4) == 8);
  CHECK(sbu_base64_encoded_len(SIZE_MAX) == SIZE_MAX); /* overflow is reported */
  CHECK(sbu_base64_encode("x", SIZE_MAX, NULL) == NULL);
}

int main(void) {
  test_rfc4648_vectors();
  test_binary_round_trip();
  test_invalid();
  test_encoded_len();
  return check_exit();
}
