/* Writes one line to stdout and one to stderr. */
#include <string.h>
#include <unistd.h>

int main(void) {
  const char *o = "hello stdout\n", *e = "hello stderr\n";
  if (write(1, o, strlen(o)) < 0) return 2;
  if (write(2, e, strlen(e)) < 0) return 2;
  return 0;
}
