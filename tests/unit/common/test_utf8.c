/* common/utf8.c: well-formed sequences and each kind of ill-formed one. */
#include "../check.h"
#include "utf8.h"

#define SEQ(lit) sbu_utf8_seq((const unsigned char *)(lit), sizeof(lit) - 1)
#define VALID(lit) sbu_utf8_valid((lit), sizeof(lit) - 1)

int main(void) {
  /* one to four bytes, at the edges of each length */
  CHECK(SEQ("A") == 1);
  CHECK(SEQ("\x7f") == 1);
  CHECK(SEQ("\xc2\x80") == 2);         /* U+0080 */
  CHECK(SEQ("\xc3\xa9") == 2);         /* é */
  CHECK(SEQ("\xdf\xbf") == 2);         /* U+07FF */
  CHECK(SEQ("\xe0\xa0\x80") == 3);     /* U+0800 */
  CHECK(SEQ("\xe2\x82\xac") == 3);     /* € */
  CHECK(SEQ("\xed\x9f\xbf") == 3);     /* U+D7FF, just below the surrogates */
  CHECK(SEQ("\xee\x80\x80") == 3);     /* U+E000, just above */
  CHECK(SEQ("\xef\xbf\xbf") == 3);     /* U+FFFF */
  CHECK(SEQ("\xf0\x90\x80\x80") == 4); /* U+10000 */
  CHECK(SEQ("\xf0\x9f\x98\x80") == 4); /* U+1F600 */
  CHECK(SEQ("\xf4\x8f\xbf\xbf") == 4); /* U+10FFFF */
  /* overlong forms */
  CHECK(SEQ("\xc0\x80") == 0);         /* NUL in two bytes */
  CHECK(SEQ("\xc1\xbf") == 0);
  CHECK(SEQ("\xe0\x80\x80") == 0);
  CHECK(SEQ("\xe0\x9f\xbf") == 0);     /* U+07FF in three bytes */
  CHECK(SEQ("\xf0\x80\x80\x80") == 0);
  CHECK(SEQ("\xf0\x8f\xbf\xbf") == 0); /* U+FFFF in four bytes */
  /* surrogates */
  CHECK(SEQ("\xed\xa0\x80") == 0);     /* U+D800 */
  CHECK(SEQ("\xed\xbf\xbf") == 0);     /* U+DFFF */
  /* above U+10FFFF, and bytes that never start a sequence */
  CHECK(SEQ("\xf4\x90\x80\x80") == 0); /* U+110000 */
  CHECK(SEQ("\xf5\x80\x80\x80") == 0);
  CHECK(SEQ("\xf8\x88\x80\x80\x80") == 0);
  CHECK(SEQ("\xff") == 0);
  CHECK(SEQ("\xfe") == 0);
  /* truncated, a stray or a missing continuation byte */
  CHECK(SEQ("\xc3") == 0);
  CHECK(SEQ("\xe2\x82") == 0);
  CHECK(SEQ("\xf0\x9f\x98") == 0);
  CHECK(SEQ("\x80") == 0);
  CHECK(SEQ("\xbf") == 0);
  CHECK(SEQ("\xc3\x28") == 0);
  CHECK(SEQ("\xe2\x28\xac") == 0);
  CHECK(SEQ("\xf0\x9f\x28\x80") == 0);
  /* NUL, and nothing at all */
  CHECK(sbu_utf8_seq((const unsigned char *)"", 1) == 0);
  CHECK(sbu_utf8_seq((const unsigned char *)"A", 0) == 0);

  /* whole strings */
  CHECK(VALID(""));
  CHECK(VALID("plain ASCII\n"));
  CHECK(VALID("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  CHECK(!VALID("a\0b"));
  CHECK(!VALID("caf\xc3"));              /* cut in the middle of é */
  CHECK(!VALID("ok \xed\xa0\x80 then"));  /* a lone surrogate */
  CHECK(!VALID("\xc0\xaf"));              /* overlong '/' */
  CHECK(!VALID("abc\xf4\x90\x80\x80"));
  return check_exit();
}
