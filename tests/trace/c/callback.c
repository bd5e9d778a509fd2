#include <stdio.h>
#include <stdlib.h>

int cmp(const void *a, const void *b) {
  return *(const int *)a - *(const int *)b;
}

int main(void) {
  int v[2] = {2, 1};
  qsort(v, 2, sizeof v[0], cmp);
  printf("%d %d\n", v[0], v[1]);
  return 0;
}
