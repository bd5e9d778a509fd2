/* The completion's code as SandboxFusion's default_extract_helper
 * (sandbox/utils/extraction.py) finds it, without custom logic: each
 * expected value worked out by hand from its regular expressions and its
 * priority rule (fenced 30 > unclosed fence 20 > heuristic 10; the first
 * block naming the language, else the first). */
#include "check.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static const char *type;

static char *x(const char *completion, const char *language) {
  type = NULL;
  return sbh_extract_code(completion, strlen(completion), language, &type);
}

#define EXTRACT(completion, language, want, want_type) \
  do {                                                 \
    char *got_ = x(completion, language);              \
    CHECK(got_ != NULL);                               \
    if (got_) CHECK_STR(got_, want);                   \
    CHECK_STR(type, want_type);                        \
    free(got_);                                        \
  } while (0)

int main(void) {
  /* one fenced block: its body without the line break before the fence */
  EXTRACT("Here:\n```python\nprint(1)\n```\nDone.", "python", "print(1)", "fenced");
  /* the body as short as can be: the first closing fence ends it */
  EXTRACT("```python\na\n```\ntext\n```python\nb\n```", "python", "a", "fenced");
  /* the first block naming the language wins over an earlier other one */
  EXTRACT("```bash\necho hi\n```\n```cpp\nint main(){}\n```", "cpp", "int main(){}", "fenced");
  /* aliases: c++ is cpp, py is python, js is nodejs; "javascript" is not nodejs */
  EXTRACT("```text\nx\n```\n```c++\ny\n```", "cpp", "y", "fenced");
  EXTRACT("```\nx\n```\n```py\ny\n```", "python", "y", "fenced");
  EXTRACT("```javascript\nA\n```\n```js\nB\n```", "nodejs", "B", "fenced");
  /* none names it: the first block */
  EXTRACT("```rust\nfn main(){}\n```\n```go\npackage main\n```", "python", "fn main(){}", "fenced");
  /* whitespace before the closing fence is allowed; the info string is trimmed */
  EXTRACT("```  python  \nx = 1\n   ```", "python", "x = 1", "fenced");
  /* an empty body: "```x\n\n```" */
  EXTRACT("```python\n\n```", "python", "", "fenced");
  /* an unclosed fence: everything after its line */
  EXTRACT("Sure:\n```python\nprint(2)\n# no end", "python", "print(2)\n# no end", "incomplete_fenced");
  /* a fence without a line break after it is no fence: the heuristic */
  EXTRACT("import os\n\ndef f(x):\n    return x\nprint(f(1))\n```", "python", "import os\ndef f(x):\n    return x\n",
          "heuristic");
  /* python heuristic: the import/from/# run right above the def, the indented body */
  EXTRACT("Text first\nimport math\nx = 2\n# helper\nfrom a import b\nclass C:\n  y = 1\n  z = 2\nw = 3\n", "python",
          "# helper\nfrom a import b\nclass C:\n  y = 1\n  z = 2\n", "heuristic");
  /* a def without an indented line is not a block */
  EXTRACT("def f(): return 1\nprint(1)\n", "python", "", "empty");
  /* bash heuristic: every non-blank line */
  EXTRACT("echo a\n\n   \necho b", "bash", "echo a\necho b\n", "heuristic");
  /* nothing at all */
  EXTRACT("no code here", "cpp", "", "empty");
  /* hostile shapes a quadratic scan would not finish (ctest's timeout): 4 MiB
   * of line breaks after an opened fence, and 4 MiB of backticks */
  size_t big = (size_t)4 << 20;
  char *t = malloc(big + 8);
  CHECK(t != NULL);
  if (t) {
    memcpy(t, "```x\n", 5);
    memset(t + 5, '\n', big);
    t[big + 5] = 0;
    char *got = x(t, "python");
    CHECK(got && strlen(got) == big); /* no closing fence: everything after the opening line */
    CHECK_STR(type, "incomplete_fenced");
    free(got);
    memset(t, '`', big);
    t[big] = 0;
    got = x(t, "python");
    CHECK(got && !*got);
    CHECK_STR(type, "empty");
    free(got);
    free(t);
  }
  return check_exit();
}
