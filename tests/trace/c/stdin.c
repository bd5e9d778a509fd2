#include <stdio.h>

int main(void) {
  int n = 0, total = 0, x;
  if (scanf("%d", &n) != 1)
    return 1;
  for (int i = 0; i < n; i++) {
    scanf("%d", &x);
    total += x;
  }
  printf("%d\n", total);
  return 0;
}
