/* SURGE's extract_output, rule by rule. Expected values from running its
 * regexes in CPython 3.11. */
#include <stdlib.h>

#include "check.h"
#include "eval_extract.h"

static void ex(const char *in, const char *want) {
  char *got = sbe_extract(in);
  if (!want) {
    CHECK(got == NULL);
    if (got) fprintf(stderr, "  input %s gave \"%s\", expected None\n", in, got);
  } else {
    CHECK_STR(got, want);
  }
  free(got);
}

int main(void) {
  /* 1-2: strip, then the text after the first "Output:", stripped */
  ex("Output: 42", "42");
  ex("Thought: x\nOutput:\n\n  hello world  \n", "hello world");
  ex("Output: a\nOutput: b", "a\nOutput: b");
  ex("output: 5", "output: 5"); /* case-sensitive */
  ex("\xc2\xa0Output:\xe2\x80\x83 7\xe3\x80\x80", "7"); /* Unicode whitespace */
  ex("Output:", NULL);
  /* 3: bold spans end on their own line; following whitespace goes too */
  ex("**Output:** 42", "42");        /* "** 42": unclosed, then the leading ** rule */
  ex("**Answer:**\n\n7", "7");
  ex("Output: **note** 5\n**x**\n\n6", "5\n6");
  ex("**a\nb** c", "a\nb c");        /* not a span: crosses a newline */
  ex("**bold**", NULL);
  /* 4: fenced block, optional \w+ tag, first match */
  ex("```python\nprint(1)\n```", "print(1)");
  ex("```\xe6\x97\xa5\xe6\x9c\xac\nx\n```", "x"); /* a Unicode \w tag */
  ex("```c++\nx\n```", "c++\nx");                /* "c++" is no tag: falls to inline code */
  ex("```\n\n```", "");                          /* empty string, not None */
  ex("text ```\ncode\n``` more `inline`", "code");
  ex("Output:\n```\nA\n```\n```\nB\n```", "A");
  ex("```\nno close", "```\nno close");
  /* 5: inline code */
  ex("The answer is `42` ok", "42");
  ex("`` `x`", ""); /* "` `" is the first match; stripped to "" */
  /* 6: first paragraph; a leading ** removes every ** */
  ex("line1\nline2\n\nline3", "line1\nline2");
  ex("a\n\n\nb", "a");
  ex("**x\n\ny", "x");
  ex("Output: ``\n\nz", "``");
  /* 7: nothing left is None */
  ex("   ", NULL);
  ex("", NULL);
  CHECK(sbe_extract(NULL) == NULL);
  size_t n = 99;
  char *r = sbe_extract_n("Output: a\0b", 11, &n); /* explicit length keeps the NUL */
  CHECK(r && n == 3 && r[0] == 'a' && r[1] == '\0' && r[2] == 'b');
  free(r);
  return check_exit();
}
