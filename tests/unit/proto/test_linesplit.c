/* Line splitter: chunk boundaries, blank lines, the cap, EOF, stopping. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "protocol.h"

#define MAX_EVENTS 256

typedef struct {
  int n;
  sbp_line_event ev[MAX_EVENTS];
  char *text[MAX_EVENTS]; /* NULL for TOO_LARGE */
  size_t len[MAX_EVENTS];
  int stop_after; /* return 1 once n reaches this (0: never) */
  size_t max_buffered;
  sbp_linesplit *ls;
} collector;

static int collect(void *ctx, sbp_line_event ev, const char *line, size_t len) {
  collector *c = ctx;
  if (c->n >= MAX_EVENTS) return -1;
  c->ev[c->n] = ev;
  c->len[c->n] = len;
  c->text[c->n] = NULL;
  if (ev == SBP_LINE_OK) {
    c->text[c->n] = malloc(len + 1);
    memcpy(c->text[c->n], line, len);
    c->text[c->n][len] = '\0';
  } else {
    CHECK(line == NULL);
  }
  c->n++;
  return c->stop_after && c->n >= c->stop_after ? 1 : 0;
}

static void collector_reset(collector *c) {
  for (int i = 0; i < c->n; i++) free(c->text[i]);
  memset(c, 0, sizeof *c);
}

static int feed_str(sbp_linesplit *ls, collector *c, const char *s) {
  int rc = sbp_linesplit_feed(ls, s, strlen(s), collect, c);
  if (sbp_linesplit_buffered(ls) > c->max_buffered) c->max_buffered = sbp_linesplit_buffered(ls);
  return rc;
}

static void test_basic(void) {
  sbp_linesplit ls;
  collector c = {0};
  sbp_linesplit_init(&ls, 0);
  CHECK(ls.max_line == SBP_DEFAULT_MAX_LINE);
  CHECK(feed_str(&ls, &c, "{\"a\":1}\n{\"b\":2}\npartial") == 0);
  CHECK(c.n == 2);
  CHECK_STR(c.text[0], "{\"a\":1}");
  CHECK_STR(c.text[1], "{\"b\":2}");
  CHECK(sbp_linesplit_buffered(&ls) == 7);
  CHECK(feed_str(&ls, &c, " line\r\n") == 0);
  CHECK(c.n == 3);
  CHECK_STR(c.text[2], "partial line\r"); /* "\r" is left for the JSON parser (whitespace) */
  CHECK(sbp_linesplit_buffered(&ls) == 0);
  /* blank lines are skipped */
  CHECK(feed_str(&ls, &c, "\n\n  \t\r\n\nx\n") == 0);
  CHECK(c.n == 4);
  CHECK_STR(c.text[3], "x");
  collector_reset(&c);
  sbp_linesplit_free(&ls);
}

static void test_byte_by_byte(void) {
  const char *stream = "first\nsecond line\n\nthird\r\nlast";
  sbp_linesplit ls;
  collector c = {0};
  sbp_linesplit_init(&ls, 64);
  for (size_t i = 0; stream[i]; i++) CHECK(sbp_linesplit_feed(&ls, stream + i, 1, collect, &c) == 0);
  CHECK(c.n == 3);
  CHECK_STR(c.text[0], "first");
  CHECK_STR(c.text[1], "second line");
  CHECK_STR(c.text[2], "third\r");
  CHECK(sbp_linesplit_finish(&ls, collect, &c) == 0);
  CHECK(c.n == 4);
  CHECK_STR(c.text[3], "last");
  CHECK(sbp_linesplit_buffered(&ls) == 0);
  /* finish again: nothing more */
  CHECK(sbp_linesplit_finish(&ls, collect, &c) == 0);
  CHECK(c.n == 4);
  collector_reset(&c);
  sbp_linesplit_free(&ls);
}

/* Every way of cutting a stream in two gives the same lines. */
static void test_every_split_point(void) {
  const char *stream = "{\"id\":1}\nabc\n\n0123456789\nTOOLONG-TOOLONG\nend\n";
  size_t n = strlen(stream);
  for (size_t cut = 0; cut <= n; cut++) {
    sbp_linesplit ls;
    collector c = {0};
    sbp_linesplit_init(&ls, 10);
    CHECK(sbp_linesplit_feed(&ls, stream, cut, collect, &c) == 0);
    CHECK(sbp_linesplit_feed(&ls, stream + cut, n - cut, collect, &c) == 0);
    CHECK(c.n == 5);
    if (c.n == 5) {
      CHECK_STR(c.text[0], "{\"id\":1}");
      CHECK_STR(c.text[1], "abc");
      CHECK_STR(c.text[2], "0123456789"); /* exactly the cap: fine */
      CHECK(c.ev[3] == SBP_LINE_TOO_LARGE);
      CHECK(c.len[3] > 10);
      CHECK_STR(c.text[4], "end");
    }
    CHECK(sbp_linesplit_buffered(&ls) == 0);
    collector_reset(&c);
    sbp_linesplit_free(&ls);
  }
}

static void test_oversize_across_chunks(void) {
  sbp_linesplit ls;
  collector c = {0};
  sbp_linesplit_init(&ls, 10);
  CHECK(feed_str(&ls, &c, "ok1\n01234") == 0);
  CHECK(feed_str(&ls, &c, "56789") == 0); /* 10 bytes buffered: still fine */
  CHECK(c.n == 1);
  CHECK(sbp_linesplit_buffered(&ls) == 10);
  CHECK(feed_str(&ls, &c, "AB") == 0); /* 12: reported now, not at the newline */
  CHECK(c.n == 2);
  CHECK(c.ev[1] == SBP_LINE_TOO_LARGE);
  CHECK(c.len[1] == 12);
  CHECK(sbp_linesplit_buffered(&ls) == 0);
  /* more of the same line: dropped silently, reported only once */
  for (int i = 0; i < 100; i++) CHECK(feed_str(&ls, &c, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx") == 0);
  CHECK(c.n == 2);
  CHECK(sbp_linesplit_buffered(&ls) == 0);
  /* the newline ends it; the connection goes on */
  CHECK(feed_str(&ls, &c, "yyy\nok2\n") == 0);
  CHECK(c.n == 3);
  CHECK_STR(c.text[2], "ok2");
  /* an oversize line whose newline is in the same chunk */
  CHECK(feed_str(&ls, &c, "ok3\n0123456789012345\nok4\n") == 0);
  CHECK(c.n == 6);
  CHECK_STR(c.text[3], "ok3");
  CHECK(c.ev[4] == SBP_LINE_TOO_LARGE && c.len[4] == 16);
  CHECK_STR(c.text[5], "ok4");
  /* a partial line then a big chunk pushing it over */
  CHECK(feed_str(&ls, &c, "abcdef") == 0);
  CHECK(feed_str(&ls, &c, "ghijk\nok5\n") == 0);
  CHECK(c.n == 8);
  CHECK(c.ev[6] == SBP_LINE_TOO_LARGE && c.len[6] == 11);
  CHECK_STR(c.text[7], "ok5");
  CHECK(c.max_buffered <= 10);
  /* an oversize unterminated line at EOF yields nothing more */
  CHECK(feed_str(&ls, &c, "0123456789ABC") == 0);
  CHECK(c.n == 9 && c.ev[8] == SBP_LINE_TOO_LARGE);
  CHECK(sbp_linesplit_finish(&ls, collect, &c) == 0);
  CHECK(c.n == 9);
  /* and the splitter is fresh after finish */
  CHECK(feed_str(&ls, &c, "after\n") == 0);
  CHECK(c.n == 10);
  CHECK_STR(c.text[9], "after");
  collector_reset(&c);
  sbp_linesplit_free(&ls);
}

static void test_stop(void) {
  sbp_linesplit ls;
  collector c = {0};
  c.stop_after = 2;
  sbp_linesplit_init(&ls, 100);
  CHECK(feed_str(&ls, &c, "a\nb\nc\nd\n") == 1);
  CHECK(c.n == 2);
  CHECK_STR(c.text[1], "b");
  collector_reset(&c);
  sbp_linesplit_free(&ls);
}

/* Reference: split the whole stream at once, apply the cap and blank rule. */
static int reference_split(const char *s, size_t n, size_t cap, sbp_line_event *ev, char **text) {
  int k = 0;
  size_t start = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '\n') continue;
    size_t len = i - start;
    bool blank = true;
    for (size_t j = start; j < i; j++)
      if (s[j] != ' ' && s[j] != '\t' && s[j] != '\r') blank = false;
    if (len > cap) {
      ev[k] = SBP_LINE_TOO_LARGE;
      text[k++] = NULL;
    } else if (!blank) {
      ev[k] = SBP_LINE_OK;
      text[k] = malloc(len + 1);
      memcpy(text[k], s + start, len);
      text[k++][len] = '\0';
    }
    start = i + 1;
  }
  return k;
}

static void test_random_chunking(void) {
  unsigned seed = 12345;
  char stream[2048];
  for (int round = 0; round < 200; round++) {
    size_t n = 0;
    while (n < sizeof stream - 1) {
      seed = seed * 1103515245u + 12345u;
      unsigned r = (seed >> 16) % 23;
      stream[n++] = r == 0 ? '\n' : r == 1 ? '\r' : r == 2 ? ' ' : (char)('a' + r);
    }
    stream[n++] = '\n';
    sbp_line_event want_ev[MAX_EVENTS];
    char *want_text[MAX_EVENTS];
    size_t cap = 8 + (size_t)round % 40;
    int want = reference_split(stream, n, cap, want_ev, want_text);
    CHECK(want < MAX_EVENTS);

    sbp_linesplit ls;
    collector c = {0};
    sbp_linesplit_init(&ls, cap);
    size_t off = 0;
    while (off < n) {
      seed = seed * 1103515245u + 12345u;
      size_t chunk = 1 + (seed >> 16) % 97;
      if (chunk > n - off) chunk = n - off;
      CHECK(sbp_linesplit_feed(&ls, stream + off, chunk, collect, &c) == 0);
      CHECK(sbp_linesplit_buffered(&ls) <= cap);
      off += chunk;
    }
    CHECK(c.n == want);
    for (int i = 0; i < want && i < c.n; i++) {
      CHECK(c.ev[i] == want_ev[i]);
      if (want_text[i] && c.text[i]) CHECK_STR(c.text[i], want_text[i]);
    }
    for (int i = 0; i < want; i++) free(want_text[i]);
    collector_reset(&c);
    sbp_linesplit_free(&ls);
  }
}

int main(void) {
  test_basic();
  test_byte_by_byte();
  test_every_split_point();
  test_oversize_across_chunks();
  test_stop();
  test_random_chunking();
  return check_exit();
}
