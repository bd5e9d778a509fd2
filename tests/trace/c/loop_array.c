#include <stdio.h>

int main(void) {
  int a[4] = {5, 6, 7, 8};
  int sum = 0;
  for (int i = 0; i < 4; i++) {
    sum += a[i];
  }
  printf("%d\n", sum);
  return 0;
}
