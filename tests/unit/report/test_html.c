/* sbh_text_n: markup escaped, text kept, every byte that is not text shown
 * as a visible \xNN mark. Expected strings written by hand. */
#include "check.h"
#include "html.h"

#include <stdlib.h>
#include <string.h>

static char *esc(const char *s, size_t n) {
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  sbh_text_n(f, s, n);
  fclose(f);
  return out;
}

#define ESC(in, want)                        \
  do {                                       \
    char *got = esc(in, sizeof in - 1);      \
    CHECK_STR(got, want);                    \
    free(got);                               \
  } while (0)

#define BAD(x) "<span class=\"bad\" title=\"not UTF-8\">\\x" x "</span>"
#define CTL(x) "<span class=\"bad\" title=\"control character\">\\x" x "</span>"

int main(void) {
  ESC("</pre><script>alert(1)</script>", "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
  ESC("a=\"b\" & c='d'", "a=&quot;b&quot; &amp; c=&#39;d&#39;");
  ESC("line\n\ttab", "line\n\ttab");
  ESC("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"); /* UTF-8 kept */
  ESC("\xff\xfe", BAD("FF") BAD("FE"));
  ESC("\xc3(", BAD("C3") "(");                  /* a sequence cut short */
  ESC("\xc0\xaf", BAD("C0") BAD("AF"));         /* overlong '/' */
  ESC("\xed\xa0\x80", BAD("ED") BAD("A0") BAD("80")); /* a surrogate */
  ESC("a\0b", "a" CTL("00") "b");               /* NUL does not cut the text */
  ESC("\x1b[31m\r", CTL("1B") "[31m" CTL("0D"));
  ESC("\xc2\x85", "<span class=\"bad\" title=\"control character\">\\u0085</span>"); /* C1 NEL */
  char id[64];
  sbh_id(id, sizeof id, "dr\"><x", 12);
  CHECK_STR(id, "item-dr---x-12");
  return check_exit();
}
