/* common/strv.c: a deep copy of a string array, its length and free. */
#include "../check.h"
#include "strv.h"

#include <stdlib.h>
#include <string.h>

int main(void) {
  CHECK(sbu_strv_len(NULL) == 0);
  const char *empty[] = {NULL};
  CHECK(sbu_strv_len(empty) == 0);
  const char *argv[] = {"python3", "main.py", "", "x=1", NULL};
  CHECK(sbu_strv_len(argv) == 4);

  char **c = sbu_strv_copy(argv);
  CHECK(c != NULL);
  CHECK_STR(c[0], "python3");
  CHECK_STR(c[1], "main.py");
  CHECK_STR(c[2], "");
  CHECK_STR(c[3], "x=1");
  CHECK(c[4] == NULL);
  for (int i = 0; i < 4; i++) CHECK(c[i] != argv[i]); /* copies, not the same strings */
  c[0][0] = 'P';
  CHECK_STR(argv[0], "python3");
  sbu_strv_free(c);

  char **none = sbu_strv_copy(NULL); /* an empty array, not NULL */
  CHECK(none != NULL && none[0] == NULL);
  sbu_strv_free(none);
  sbu_strv_free(NULL);
  return check_exit();
}
