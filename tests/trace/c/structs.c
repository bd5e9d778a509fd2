#include <stdio.h>

struct point {
  int x;
  int y;
};

void move(struct point *p, int dx) {
  p->x += dx;
}

int main(void) {
  struct point a = {1, 2};
  struct point *q = &a;
  move(q, 3);
  printf("%d %d\n", a.x, q->y);
  return 0;
}
