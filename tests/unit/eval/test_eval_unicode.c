/* Python str semantics the evaluator depends on: lower() (Latin-1, Latin
 * Extended, Greek with final sigma, Cyrillic), isspace()/split()/strip(),
 * and Jaccard over them. Expected values from CPython 3.11. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "eval_metrics.h"
#include "eval_unicode.h"

/* Python's s.lower(), UTF-8 in and out. */
static char *lower(const char *s) {
  sbe_ustr in = {0}, out = {0};
  sbe_ustr_from_utf8(&in, s, strlen(s));
  sbe_u_lower(in.cp, in.len, &out);
  char *r = sbe_utf8_from_cp(out.cp, out.len, NULL);
  sbe_ustr_free(&in);
  sbe_ustr_free(&out);
  return r;
}

static void check_lower(const char *in, const char *want) {
  char *got = lower(in);
  CHECK_STR(got, want);
  free(got);
}

static size_t split_count(const char *s) {
  sbe_ustr u = {0};
  sbe_ustr_from_utf8(&u, s, strlen(s));
  sbe_span *sp;
  size_t n = sbe_u_split_ws(u.cp, u.len, &sp);
  free(sp);
  sbe_ustr_free(&u);
  return n;
}

int main(void) {
  /* Latin-1, Latin Extended-A/B (incl. titlecase DŽ), Greek, Cyrillic, Armenian */
  check_lower("\xc3\x80\xc3\x89\xc3\x8e\xc3\x95\xc3\x9c", "\xc3\xa0\xc3\xa9\xc3\xae\xc3\xb5\xc3\xbc"); /* ÀÉÎÕÜ */
  check_lower("\xc4\x80\xc4\x82\xc4\x84 \xc5\xb8", "\xc4\x81\xc4\x83\xc4\x85 \xc3\xbf");               /* ĀĂĄ Ÿ */
  check_lower("\xc7\x84\xc7\x85", "\xc7\x86\xc7\x86");                                                 /* Ǆǅ -> ǆǆ */
  check_lower("\xce\x86\xce\x88\xce\x89", "\xce\xac\xce\xad\xce\xae");                                 /* ΆΈΉ */
  check_lower("\xd0\x81\xd0\x96\xd0\xaf \xd0\x80", "\xd1\x91\xd0\xb6\xd1\x8f \xd1\x90");               /* ЁЖЯ Ѐ */
  check_lower("\xd4\xb1", "\xd5\xa1");                                                                 /* Ա -> ա */
  check_lower("STRASSE stra\xc3\x9f" "e", "strasse stra\xc3\x9f" "e");                                 /* ß unchanged */
  /* İ lowers to two code points: i + combining dot above */
  check_lower("\xc4\xb0", "i\xcc\x87");
  /* Final sigma: ΟΔΟΣ -> οδος; lone Σ -> σ; ΑΣ'Α -> ασ'α (apostrophe is case-ignorable);
   * ΑΣ. -> ας.; AͅΣ -> aͅς (U+0345 is skipped) */
  check_lower("\xce\x9f\xce\x94\xce\x9f\xce\xa3", "\xce\xbf\xce\xb4\xce\xbf\xcf\x82");
  check_lower("\xce\xa3", "\xcf\x83");
  check_lower("\xce\x91\xce\xa3'\xce\x91", "\xce\xb1\xcf\x83'\xce\xb1");
  check_lower("\xce\x91\xce\xa3.", "\xce\xb1\xcf\x82.");
  check_lower("A\xcd\x85\xce\xa3", "a\xcd\x85\xcf\x82");

  /* str.isspace(): 0x1C..0x1F and NEL count, ZWSP does not */
  CHECK(sbe_u_isspace(0x1C) && sbe_u_isspace(0x1F) && sbe_u_isspace(0x85) && sbe_u_isspace(0xA0));
  CHECK(sbe_u_isspace(0x1680) && sbe_u_isspace(0x2000) && sbe_u_isspace(0x200A) && sbe_u_isspace(0x2028));
  CHECK(sbe_u_isspace(0x202F) && sbe_u_isspace(0x205F) && sbe_u_isspace(0x3000));
  CHECK(!sbe_u_isspace(0x200B) && !sbe_u_isspace(0xFEFF) && !sbe_u_isspace(0x180E) && !sbe_u_isspace('a'));
  CHECK(split_count("a\x1c" "b\xc2\x85" "c\xe2\x80\xa8" "d\xe3\x80\x80" "e") == 5);
  CHECK(split_count("  \t\n ") == 0);
  CHECK(split_count("a\xe2\x80\x8b" "b") == 1); /* U+200B is not a separator */
  /* \w and unicodedata.decimal */
  CHECK(sbe_u_isword('_') && sbe_u_isword(0x65E5) && sbe_u_isword(0xB2) && !sbe_u_isword('+') && !sbe_u_isword('`'));
  CHECK(sbe_u_decimal(0x663) == 3 && sbe_u_decimal(0xFF12) == 2 && sbe_u_decimal(0xB2) == -1 && sbe_u_decimal('x') == -1);

  /* strip() */
  sbe_ustr u = {0};
  sbe_ustr_from_utf8(&u, "\xc2\xa0 x y\xe3\x80\x80\n", strlen("\xc2\xa0 x y\xe3\x80\x80\n"));
  size_t b, e;
  sbe_u_strip(u.cp, u.len, &b, &e);
  CHECK(b == 2 && e == 5);
  sbe_ustr_free(&u);

  /* Jaccard over lower().split() */
  CHECK_NEAR(sbe_jaccard("Hello World", "hello   world"), 1.0, 1e-12);
  CHECK_NEAR(sbe_jaccard("a b c", "a b d"), 0.5, 1e-12);
  CHECK_NEAR(sbe_jaccard("", "  "), 1.0, 1e-12);
  CHECK_NEAR(sbe_jaccard("x", ""), 0.0, 1e-12);
  CHECK_NEAR(sbe_jaccard("x", NULL), 0.0, 1e-12);
  CHECK_NEAR(sbe_jaccard("\xce\x9f\xce\x94\xce\x9f\xce\xa3 \xce\x91\xce\xa3.", "\xce\xbf\xce\xb4\xce\xbf\xcf\x82 \xce\xb1\xcf\x82."), 1.0, 1e-12);
  CHECK_NEAR(sbe_jaccard("\xce\x9f\xce\x94\xce\x9f\xce\xa3", "\xce\xbf\xce\xb4\xce\xbf\xcf\x83"), 0.0, 1e-12);
  CHECK_NEAR(sbe_jaccard("STRASSE \xc4\xb0", "strasse i\xcc\x87"), 1.0, 1e-12);
  CHECK_NEAR(sbe_jaccard("\xd0\x94\xd0\x9e\xd0\x9c\xc2\xa0\xd0\x9a\xd0\xbe\xd1\x82", "\xd0\xb4\xd0\xbe\xd0\xbc \xd0\xba\xd0\xbe\xd1\x82"), 1.0, 1e-12);
  CHECK_NEAR(sbe_jaccard("a\x1c" "b\xc2\x85" "c\xe2\x80\xa8" "d\xe3\x80\x80" "e", "a b c d e"), 1.0, 1e-12);
  CHECK_NEAR(sbe_jaccard("a\xe2\x80\x8b" "b", "a b"), 0.0, 1e-12);
  CHECK_NEAR(sbe_jaccard("\xc3\x89" "COLE \xc5\xb8 \xc7\x84 \xc7\x85", "\xc3\xa9" "cole \xc3\xbf \xc7\x86 \xc7\x86"), 1.0, 1e-12);
  /* repeated tokens count once: {a, b} vs {a, c} */
  CHECK_NEAR(sbe_jaccard("a a b", "A c c"), 1.0 / 3.0, 1e-12);
  return check_exit();
}
