/* common/nearest.c: edit distance with transpositions, the nearest name. */
#include "../check.h"
#include "nearest.h"

#include <string.h>

int main(void) {
  CHECK(sbu_edit_distance("", "") == 0);
  CHECK(sbu_edit_distance("abc", "") == 3);
  CHECK(sbu_edit_distance("kitten", "sitting") == 3);
  CHECK(sbu_edit_distance("pyhton3", "python3") == 1); /* a swap is one edit */
  CHECK(sbu_edit_distance("Python3", "python3") == 0); /* case ignored */
  const char *tcs[] = {"python3", "python3.11", "g++", "g++-12", "clang++-19", "java"};
  size_t n = sizeof tcs / sizeof *tcs;
  CHECK(sbu_nearest("pyhton3", tcs, n) && strcmp(sbu_nearest("pyhton3", tcs, n), "python3") == 0);
  CHECK(sbu_nearest("clang++19", tcs, n) && strcmp(sbu_nearest("clang++19", tcs, n), "clang++-19") == 0);
  CHECK(sbu_nearest("python3.1", tcs, n) && strcmp(sbu_nearest("python3.1", tcs, n), "python3.11") == 0);
  CHECK(sbu_nearest("cobol-85", tcs, n) == NULL);
  CHECK(sbu_nearest("gcc", tcs, n) == NULL);         /* two edits in three characters: too far */
  CHECK(sbu_nearest("python3", tcs, n) == NULL || strcmp(sbu_nearest("python3", tcs, n), "python3") != 0);
  const char *opts[] = {"std", "opt"};
  CHECK(sbu_nearest("stdd", opts, 2) && strcmp(sbu_nearest("stdd", opts, 2), "std") == 0);
  CHECK(sbu_nearest("x", opts, 2) == NULL);
  /* issue 36: a '+' typed as p or x, a prefix, the number of a standard */
  CHECK(sbu_nearest("gpp", tcs, n) && strcmp(sbu_nearest("gpp", tcs, n), "g++") == 0);
  CHECK(sbu_nearest("gxx", tcs, n) && strcmp(sbu_nearest("gxx", tcs, n), "g++") == 0);
  const char *benches[] = {"cruxeval", "surge", "traces"};
  CHECK(sbu_nearest("crux", benches, 3) && strcmp(sbu_nearest("crux", benches, 3), "cruxeval") == 0);
  CHECK(sbu_nearest("cr", benches, 3) == NULL); /* too short a start */
  const char *stds[] = {"c++98", "c++11", "c++14", "c++17", "c++20"};
  CHECK(sbu_nearest("17", stds, 5) && strcmp(sbu_nearest("17", stds, 5), "c++17") == 0);
  CHECK(sbu_nearest("7", stds, 5) == NULL);
  char longname[100];
  memset(longname, 'a', 99);
  longname[99] = '\0';
  CHECK(sbu_edit_distance(longname, "a") == (size_t)-1);
  return check_exit();
}
