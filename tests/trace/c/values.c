#include <stdbool.h>
#include <stdio.h>

enum color { RED, GREEN = 5 };
struct inner { int v[2]; };
struct outer { struct inner in; struct outer *self; };

int twice(int x) { return 2 * x; }

int main(void) {
  int big[40];
  for (int i = 0; i < 40; i++)
    big[i] = i;
  enum color c = GREEN;
  bool flag = true;
  unsigned char u = 200;
  long neg = -7;
  double third = 1.0 / 3;
  int (*fp)(int) = twice;
  const char *wild = (const char *)16;
  struct outer o = {{{1, 2}}, 0};
  o.self = &o;
  int *inside = &big[3];
  printf("%d %d\n", fp(c), big[39] + u + (int)neg + flag + (int)(third * 3) + o.in.v[1] + *inside + (wild != 0));
  return 0;
}
