/* The normalisations N1-N6 (RECIPES.md), one by one, with hand-written
 * inputs and expected outputs; and what they must never touch. */
#include "check.h"
#include "fidelity.h"
#include "regen.h"

#include <stdlib.h>

#define EXPECT(fn, in, out)          \
  do {                               \
    char *r_ = fn(in);               \
    CHECK_STR(r_, out);              \
    free(r_);                        \
  } while (0)

int main(void) {
  /* N1: toolchain paths, including clang's route through GCC's install dir */
  EXPECT(sbs_n1_toolchain_paths, "/usr/include/c++/9/bits/stl_vector.h:10", "/usr/include/c++/N/bits/stl_vector.h:10");
  EXPECT(sbs_n1_toolchain_paths, "/usr/lib/gcc/x86_64-linux-gnu/11/../../../../include/c++/11/x.h",
         "/usr/lib/gcc/x86_64-linux-gnu/N/../../../../include/c++/N/x.h");
  EXPECT(sbs_n1_toolchain_paths, "printed 9 and /usr/include/stdio.h", "printed 9 and /usr/include/stdio.h");
  /* N2: linker offsets and temporary objects (GCC's and clang's) */
  EXPECT(sbs_n2_link_noise, "(.text+0x1f): undefined reference", "(.text+0x...): undefined reference");
  EXPECT(sbs_n2_link_noise, "/usr/bin/ld: /tmp/ccg2FP2i.o: in function", "/usr/bin/ld: /tmp/cc*.o: in function");
  EXPECT(sbs_n2_link_noise, "/usr/bin/ld: /tmp/test-3f3fce.o: in", "/usr/bin/ld: /tmp/test-*.o: in");
  EXPECT(sbs_n2_link_noise, "value 0x1f and +1", "value 0x1f and +1"); /* program output: untouched */
  /* N3: trailing whitespace per line and at the end */
  EXPECT(sbs_n3_trailing_ws, "a  \nb\t\n\n", "a\nb");
  EXPECT(sbs_n3_trailing_ws, "  lead stays", "  lead stays");
  /* N4: positions inside system headers and their excerpt's gutter */
  EXPECT(sbs_n4_system_header_pos,
         "/usr/include/x86_64-linux-gnu/bits/mathcalls.h:298:14: note: declared here\n  298 | __MATHCALLX (round,,\n      |              ^\n",
         "/usr/include/x86_64-linux-gnu/bits/mathcalls.h:L: note: declared here\n  N | __MATHCALLX (round,,\n      |              ^\n");
  EXPECT(sbs_n4_system_header_pos, "test.cpp:5:14: error: x\n    5 |     f(5, 3.14);\n",
         "test.cpp:5:14: error: x\n    5 |     f(5, 3.14);\n"); /* the user's file keeps its numbers */
  /* N5: option tags */
  EXPECT(sbs_n5_warning_tags, "warning: unused variable 'x' [-Wunused-variable]\n", "warning: unused variable 'x'\n");
  EXPECT(sbs_n5_warning_tags, "[-5, 3]", "[-5, 3]");
  /* N6: whitespace runs, only for whitespace-insensitive references */
  EXPECT(sbs_n6_whitespace_runs, "['1.0e+00' '2.0e+00'\n '3.0e+00']\n", "['1.0e+00' '2.0e+00' '3.0e+00']");
  /* the combination */
  char *a = sbs_normalize("x.cpp:1:1: warning: w [-Wall]  \n", false), *b = sbs_normalize("x.cpp:1:1: warning: w\n", false);
  CHECK_STR(a, b);
  free(a);
  free(b);
  char *s = sbs_strip(" \n\tabc \n");
  CHECK_STR(s, "abc");
  free(s);
  /* comparisons and classes */
  sbs_compare_result c;
  sbs_compare("a b\n", "a b\n", false, false, &c);
  CHECK(c.exact && c.normalized && c.jaccard == 1.0);
  CHECK(sbs_classify("ok", false, true, &c) == NULL);
  sbs_compare("x.cpp:1: error: e [-Wfoo]\n", "x.cpp:1: error: e\n", false, true, &c);
  CHECK(!c.exact && c.normalized);
  CHECK_STR(sbs_classify("runtime_error", false, true, &c), "toolchain_drift");
  sbs_compare("1\n", "2\n", false, false, &c);
  CHECK_STR(sbs_classify("ok", false, false, &c), "nondeterministic");
  CHECK_STR(sbs_classify("timeout", false, true, &c), "timeout");
  CHECK_STR(sbs_classify("ok", false, true, &c), "other");
  CHECK_STR(sbs_classify(NULL, true, true, &c), "missing_toolchain");
  CHECK_NEAR(c.jaccard, 0.0, 1e-12);
  return check_exit();
}
