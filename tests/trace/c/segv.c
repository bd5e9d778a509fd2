#include <stdio.h>

void poke(int *p) {
  *p = 7;
}

int main(void) {
  printf("before\n");
  fflush(stdout);
  poke(NULL);
  return 0;
}
