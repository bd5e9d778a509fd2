#include <stdlib.h>

void quit(int code) {
  exit(code);
}

int main(void) {
  quit(3);
  return 0;
}
