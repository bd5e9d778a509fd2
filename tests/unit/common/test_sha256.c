/* common/sha256.c: FIPS 180-2 example vectors, written out by hand. */
#include "../check.h"
#include "sha256.h"

#include <errno.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ABC "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

int main(void) {
  char hex[SBU_SHA256_HEX];
  sbu_sha256_hex("", 0, hex);
  CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  sbu_sha256_hex("abc", 3, hex);
  CHECK_STR(hex, ABC);
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  sbu_sha256_hex(two, strlen(two), hex);
  CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  char *million = malloc(1000000);
  memset(million, 'a', 1000000);
  sbu_sha256_hex(million, 1000000, hex);
  CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

  /* streamed: "a" then "bc" is "abc" */
  struct sha256_ctx c;
  sha256_init(&c);
  sha256_update(&c, 1, (const uint8_t *)"a");
  sha256_update(&c, 2, (const uint8_t *)"bc");
  sbu_sha256_digest_hex(&c, hex);
  CHECK_STR(hex, ABC);

  /* hex of bytes, NUL-terminated */
  char h[9];
  sbu_hex("\x00\x0f\xa5\xff", 4, h);
  CHECK_STR(h, "000fa5ff");
  sbu_hex("", 0, h);
  CHECK_STR(h, "");

  /* a file: the same as its bytes (a million 'a's crosses the read buffer) */
  char path[] = "/tmp/sbu-sha-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0 && write(fd, million, 1000000) == 1000000);
  close(fd);
  CHECK(sbu_sha256_file_hex(path, hex) == 0);
  CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  unlink(path);
  strcpy(hex, "untouched");
  errno = 0;
  CHECK(sbu_sha256_file_hex(path, hex) == -1);
  CHECK(errno == ENOENT);
  CHECK_STR(hex, "untouched");
  free(million);
  return check_exit();
}
