/* Allocates argv[1] MiB (default 100), touches every page, holds it 200 ms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
  char *p = malloc(mib << 20);
  if (!p) {
    printf("RESULT alloc=ENOMEM\n");
    return 1;
  }
  memset(p, 0x11, mib << 20);
  usleep(200 * 1000);
  printf("RESULT alloc=OK\nRESULT touched_mib=%zu\nRESULT check=%d\n", mib, p[(mib << 20) - 1]);
  free(p);
  return 0;
}
