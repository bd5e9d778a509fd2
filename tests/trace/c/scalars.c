#include <stdio.h>
#include <string.h>

int main(void) {
  const char *s = "hi\n";
  char c = 'A';
  double d = 0.1;
  float f = 0.1f;
  size_t n = strlen(s);
  printf("%zu %c %g %g\n", n, c, d, f);
  return 0;
}
