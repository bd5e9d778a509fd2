/* The supervisor's scan of a trace as it arrives (runners/trace.c, issue 35):
 * a sealed trace (the Python tracer's) against one the program wrote around
 * its tracer or changed after it stopped; the JSON scan resumed at every
 * byte boundary gives the whole line's verdict; an end past its bound fails
 * before its newline; a line of megabytes fed in small reads. The seals are
 * computed here with nettle from the rule in PROTOCOL.md, not by trace.c. */
#include "check.h"
#include "internal.h"
#include "sha256.h"

#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAD "{\"t\":\"head\",\"v\":1}\n"
#define EV0 "{\"t\":\"ev\",\"i\":0,\"k\":\"line\"}\n"
#define END_DONE "{\"t\":\"end\",\"status\":\"complete\",\"events\":1,\"exit\":{\"code\":0}}\n"
#define END_CAP "{\"t\":\"end\",\"status\":\"truncated\",\"cap\":\"events\",\"events\":1,\"exit\":{\"code\":0}}\n"

static const unsigned char key[SB_TRACE_KEY_BYTES] = "0123456789abcdef0123456789abcde";

/* The seal line the tracer writes after `before` for status and cap. */
static void seal_of(const char *before, const char *status, const char *cap, char line[128]) {
  struct sha256_ctx h;
  unsigned char d[SHA256_DIGEST_SIZE];
  char hex[65];
  sha256_init(&h);
  sha256_update(&h, sizeof key, key);
  sha256_update(&h, strlen(before), (const uint8_t *)before);
  sha256_update(&h, strlen(status), (const uint8_t *)status);
  sha256_update(&h, 1, (const uint8_t *)"\n");
  sha256_update(&h, strlen(cap), (const uint8_t *)cap);
  sha256_digest(&h, sizeof d, d);
  sbu_hex(d, sizeof d, hex);
  snprintf(line, 128, "{\"t\":\"seal\",\"mac\":\"%s\"}\n", hex);
}

/* text fed in reads of `step` bytes to a sealed scan, then finalized. */
static sb_result sealed_run(const char *text, size_t step) {
  sb_result r;
  memset(&r, 0, sizeof r);
  r.traced = true;
  sb_trace_scan sc;
  memset(&sc, 0, sizeof sc);
  sb_trace_scan_seal(&sc, key);
  size_t n = strlen(text);
  for (size_t at = 0; at < n; at += step) {
    size_t k = n - at < step ? n - at : step;
    sb_buf_append(&r.trace, text + at, k, 1 << 24);
    if (!sb_trace_scan_more(&sc, &r.trace)) break;
  }
  sb_trace_finalize(&r, &sc);
  return r;
}

static void sealed(void) {
  char seal[128], text[1024];
  seal_of(HEAD EV0, "complete", "", seal);
  snprintf(text, sizeof text, "%s%s%s%s", HEAD, EV0, seal, END_DONE);
  for (size_t step = 1; step <= strlen(text); step += 7) { /* any split of the reads */
    sb_result r = sealed_run(text, step);
    CHECK_STR(r.trace_status, "complete");
    CHECK(r.trace_sealed);
    CHECK_STR((const char *)r.trace.data, HEAD EV0 END_DONE); /* the seal line removed */
    sb_result_free(&r);
  }
  /* the tracer sealed "truncated"/events at its cap; the end says complete (finding 7b) */
  seal_of(HEAD EV0, "truncated", "events", seal);
  snprintf(text, sizeof text, "%s%s%s%s", HEAD, EV0, seal, END_DONE);
  sb_result r = sealed_run(text, 4096);
  CHECK_STR(r.trace_status, "tampered");
  CHECK(!r.trace_sealed);
  CHECK(strstr((const char *)r.trace.data, "the tracer's seal does not match") != NULL);
  CHECK(strstr((const char *)r.trace.data, "seal\"") == NULL && strstr((const char *)r.trace.data, "\"complete\"") == NULL);
  sb_result_free(&r);
  /* ... and with the end the tracer sealed: its own truncated end, kept */
  snprintf(text, sizeof text, "%s%s%s%s", HEAD, EV0, seal, END_CAP);
  r = sealed_run(text, 4096);
  CHECK_STR(r.trace_status, "truncated");
  CHECK(r.trace_sealed);
  CHECK_STR((const char *)r.trace.data, HEAD EV0 END_CAP);
  sb_result_free(&r);
  /* a whole trace without a seal (finding 7a) */
  r = sealed_run(HEAD EV0 END_DONE, 4096);
  CHECK_STR(r.trace_status, "tampered");
  CHECK(!r.trace_sealed);
  CHECK(strstr((const char *)r.trace.data, "an end without the tracer's seal") != NULL);
  sb_result_free(&r);
  /* a line the program wrote before the tracer's records: the seal, made over the tracer's bytes, fails */
  seal_of(HEAD EV0, "complete", "", seal);
  snprintf(text, sizeof text, "%s%s%s%s%s", HEAD, "{\"t\":\"file\",\"f\":1,\"path\":\"/x\"}\n", EV0, seal, END_DONE);
  r = sealed_run(text, 4096);
  CHECK_STR(r.trace_status, "tampered");
  sb_result_free(&r);
  /* a record between the seal and the end */
  snprintf(text, sizeof text, "%s%s%s%s%s", HEAD, EV0, seal, "{\"t\":\"file\",\"f\":1,\"path\":\"/x\"}\n", END_DONE);
  r = sealed_run(text, 4096);
  CHECK_STR(r.trace_status, "tampered");
  CHECK(strstr((const char *)r.trace.data, "a record after the tracer's seal") != NULL);
  CHECK_STR((const char *)r.trace.data + strlen(HEAD EV0), strstr((const char *)r.trace.data, "{\"t\":\"end\""));
  sb_result_free(&r);
  /* a seal in an unsealed trace (gdb's) is no record */
  r = (sb_result){0};
  r.traced = true;
  snprintf(text, sizeof text, "%s%s%s%s", HEAD, EV0, seal, END_DONE);
  sb_buf_append(&r.trace, text, strlen(text), 1 << 20);
  sb_trace_finalize(&r, NULL);
  CHECK_STR(r.trace_status, "tampered");
  CHECK(!r.trace_seal_wanted && !r.trace_sealed);
  sb_result_free(&r);
}

/* The verdict on one line, whole or split at byte k (two reads). */
static bool line_ok(const char *rec, size_t k) {
  sb_trace_scan sc;
  memset(&sc, 0, sizeof sc);
  sb_buf b = {0};
  sb_buf_append(&b, HEAD, strlen(HEAD), 1 << 20);
  bool ok = sb_trace_scan_more(&sc, &b);
  size_t n = strlen(rec);
  if (k > n) k = n;
  sb_buf_append(&b, rec, k, 1 << 20);
  ok = ok && sb_trace_scan_more(&sc, &b);
  sb_buf_append(&b, rec + k, n - k, 1 << 20);
  sb_buf_append(&b, "\n", 1, 1 << 20);
  ok = ok && sb_trace_scan_more(&sc, &b);
  free(b.data);
  return ok && sc.lineno == 2;
}

static void resumable(void) {
  static const struct {
    const char *rec;
    bool ok;
  } lines[] = {
      {"{\"t\":\"file\",\"f\":1,\"path\":\"/a\\\"b\\\\c\\u00e9\\/\"}", true},
      {"{\"t\":\"file\",\"x\":[1,-2.5e+3,0.25,true,false,null,[],{},{\"a\":[[1]]}]}", true},
      {"{\"t\":\"file\", \"x\" : [ 1 , 2 ] }", true},
      {"{\"t\":\"file\",\"x\":-}", false},
      {"{\"t\":\"file\",\"x\":1.}", false},
      {"{\"t\":\"file\",\"x\":1e}", false},
      {"{\"t\":\"file\",\"x\":tru}", false},
      {"{\"t\":\"file\",\"x\":\"\\q\"}", false},
      {"{\"t\":\"file\",\"x\":\"\\u12g4\"}", false},
      {"{\"t\":\"file\",\"x\":[1,]}", false},
      {"{\"t\":\"file\",\"x\":{\"a\" 1}}", false},
      {"{\"t\":\"file\",\"x\":1} ", false},
      {"{\"t\":\"file\",\"x\":1}}", false},
      {"{\"t\":\"file\",\"x\":[1}", false},
      {"{\"t\":\"file\",\"x\":\"tab\there\"}", false},
  };
  for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
    for (size_t k = 0; k <= strlen(lines[i].rec); k++) {
      bool got = line_ok(lines[i].rec, k);
      if (got != lines[i].ok) fprintf(stderr, "line %zu split at %zu: %d\n", i, k, got);
      CHECK(got == lines[i].ok);
    }
  /* nesting: values 32 deep (the record 0) pass, 33 do not */
  char deep[256];
  for (int levels = 32; levels <= 33; levels++) {
    int n = snprintf(deep, sizeof deep, "{\"t\":\"file\",\"x\":");
    for (int j = 0; j < levels; j++) deep[n++] = '[';
    for (int j = 0; j < levels; j++) deep[n++] = ']';
    deep[n++] = '}';
    deep[n] = '\0';
    CHECK(line_ok(deep, 0) == (levels == 32));
    CHECK(line_ok(deep, (size_t)n / 2) == (levels == 32));
  }
}

/* An end past its bound fails before its newline comes; a 3 MB record fed
 * in 4 KiB reads passes, one read at a time. */
static void long_lines(void) {
  sb_trace_scan sc;
  memset(&sc, 0, sizeof sc);
  sb_buf b = {0};
  const char *end_start = HEAD "{\"t\":\"end\",\"status\":\"complete\",\"reason\":\"";
  sb_buf_append(&b, end_start, strlen(end_start), 1 << 24);
  CHECK(sb_trace_scan_more(&sc, &b));
  char chunk[4096];
  memset(chunk, 'x', sizeof chunk);
  bool ok = true;
  int reads = 0;
  while (ok && reads < 100) {
    sb_buf_append(&b, chunk, sizeof chunk, 1 << 24);
    ok = sb_trace_scan_more(&sc, &b);
    reads++;
  }
  CHECK(!ok && reads <= SB_TRACE_END_MAX / 4096 + 1);
  CHECK(strstr(sc.reason, "an end record of more than 16384 bytes") != NULL);
  free(b.data);
  memset(&sc, 0, sizeof sc);
  b = (sb_buf){0};
  const char *file_start = HEAD "{\"t\":\"file\",\"f\":1,\"path\":\"";
  sb_buf_append(&b, file_start, strlen(file_start), 1 << 24);
  ok = sb_trace_scan_more(&sc, &b);
  for (int k = 0; ok && k < 750; k++) {
    sb_buf_append(&b, chunk, sizeof chunk, 1 << 24);
    ok = sb_trace_scan_more(&sc, &b) && sc.lineno == 1;
  }
  sb_buf_append(&b, "\"}\n", 3, 1 << 24);
  CHECK(ok && sb_trace_scan_more(&sc, &b) && sc.lineno == 2 && sc.keep == b.len);
  free(b.data);
}

int main(void) {
  sealed();
  resumable();
  long_lines();
  return check_exit();
}
