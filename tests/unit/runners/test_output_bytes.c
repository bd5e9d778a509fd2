/* Byte-exact output in the result document: SHA-256 of the raw bytes always,
 * base64 of them when the text is lossy or when asked. Expected values are
 * FIPS 180-2 / RFC 4648 vectors, or computed independently (Python's
 * hashlib and base64) for the NUL/0xff sample. */
#include "check.h"
#include "base64.h"
#include "internal.h"
#include "sha256.h"

#include <json-c/json.h>
#include <stdlib.h>

#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA_ABC "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define SHA_NUL_FF "a37cc3026aae4d519e0b19c298fa913b4dccfdf0658cbccbb7deaa0226d5acdb" /* "a\0b\xff" */

static void test_sha256(void) {
  char hex[65];
  sbu_sha256_hex("", 0, hex);
  CHECK_STR(hex, SHA_EMPTY);
  sbu_sha256_hex("abc", 3, hex);
  CHECK_STR(hex, SHA_ABC);
  sbu_sha256_hex("a\0b\xff", 4, hex);
  CHECK_STR(hex, SHA_NUL_FF);
}

static void test_base64(void) {
  static const char *const rfc[][2] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                       {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
                                       {"foobar", "Zm9vYmFy"}};
  for (size_t i = 0; i < sizeof rfc / sizeof rfc[0]; i++) {
    char *b = sbu_base64_encode(rfc[i][0], strlen(rfc[i][0]), NULL);
    CHECK_STR(b, rfc[i][1]);
    free(b);
  }
  char *b = sbu_base64_encode("a\0b\xff", 4, NULL);
  CHECK_STR(b, "YQBi/w==");
  free(b);
}

static const char *field(json_object *o, const char *k) {
  json_object *v;
  if (!json_object_object_get_ex(o, k, &v)) return "(absent)";
  return v ? json_object_get_string(v) : "(null)";
}

static void test_document(void) {
  sb_result r;
  memset(&r, 0, sizeof r);
  r.exit_code = 0;
  r.uid = 1879048200;
  r.out.data = malloc(5);
  memcpy(r.out.data, "a\0b\xff", 5);
  r.out.len = 4;
  json_object *o = sb_result_to_json(&r, NULL);
  CHECK_STR(field(o, "stdout"), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
  CHECK_STR(field(o, "stdout_lossy"), "true");
  CHECK_STR(field(o, "stdout_sha256"), SHA_NUL_FF);
  CHECK_STR(field(o, "stdout_b64"), "YQBi/w==");
  /* exact text: the hash, no base64 unless asked */
  CHECK_STR(field(o, "stderr_sha256"), SHA_EMPTY);
  CHECK_STR(field(o, "stderr_b64"), "(absent)");
  CHECK_STR(field(o, "uid"), "1879048200");
  json_object_put(o);
  r.output_base64 = true;
  r.uid = -1;
  o = sb_result_to_json(&r, NULL);
  CHECK_STR(field(o, "stderr_b64"), "");
  CHECK_STR(field(o, "stdout_b64"), "YQBi/w==");
  CHECK_STR(field(o, "uid"), "(null)");
  json_object_put(o);
  free(r.out.data);
}

int main(void) {
  test_sha256();
  test_base64();
  test_document();
  return check_exit();
}
