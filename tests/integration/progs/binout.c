/* binout bad: bytes that are not UTF-8 (0xff 0xfe, a lone 0x80, a truncated
 * sequence) around ASCII text.  binout good: valid multi-byte UTF-8. */
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int good = argc > 1 && strcmp(argv[1], "good") == 0;
  static const char bad[] = "A\xff\xfe" "B\x80" "C\xe2\x82";
  static const char ok[] = "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80\n";
  const char *p = good ? ok : bad;
  size_t n = good ? sizeof ok - 1 : sizeof bad - 1;
  if (write(1, p, n) < 0) return 2;
  if (write(2, p, n) < 0) return 2;
  return 0;
}
