/* The supervisor's word on a trace (runners/trace.c): each case a trace as
 * bytes, the expected kept bytes and end written by hand. Also prints what
 * the check costs per MB (a figure for PROTOCOL.md, never asserted). */
#include "check.h"
#include "clock.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAD "{\"t\":\"head\",\"v\":1}\n"
#define EV0 "{\"t\":\"ev\",\"i\":0,\"k\":\"line\"}\n"
#define EV1 "{\"t\":\"ev\",\"i\":1,\"k\":\"line\"}\n"
#define END_OK "{\"t\":\"end\",\"status\":\"complete\",\"events\":2,\"exit\":{\"code\":0}}\n"

static sb_result run(const char *bytes, bool cut, int exit_code, int sig) {
  sb_result r;
  memset(&r, 0, sizeof r);
  r.exit_code = exit_code;
  r.signal = sig;
  r.traced = true;
  size_t n = strlen(bytes);
  r.trace.data = malloc(n + 1);
  memcpy(r.trace.data, bytes, n + 1);
  r.trace.len = r.trace.cap = n;
  r.trace.cap = n + 1;
  r.trace.truncated = cut;
  sb_trace_finalize(&r, NULL);
  return r;
}

static void expect(const char *name, const char *in, bool cut, int code, int sig, const char *want, const char *status) {
  sb_result r = run(in, cut, code, sig);
  if (strcmp((const char *)r.trace.data, want) != 0)
    fprintf(stderr, "%s: got\n%s\nwanted\n%s\n", name, (const char *)r.trace.data, want);
  CHECK_STR((const char *)r.trace.data, want);
  CHECK_STR(r.trace_status, status);
  sb_result_free(&r);
}

/* Checked as it arrives: a line split across reads is checked once whole;
 * the first bad line stops the scan (the pipe is then closed). */
static void incremental(void) {
  const char *chunks[] = {(HEAD "{\"t\":\"ev\","), "\"i\":0,\"k\":\"line\"}\n{\"t\":", ("\"ev\",\"i\":1,\"k\":\"line\"}\n" END_OK)};
  const bool ok_after[] = {true, true, true};
  const uint64_t events_after[] = {0, 1, 2};
  sb_result r;
  memset(&r, 0, sizeof r);
  r.traced = true;
  sb_trace_scan sc;
  memset(&sc, 0, sizeof sc);
  for (int k = 0; k < 3; k++) {
    sb_buf_append(&r.trace, chunks[k], strlen(chunks[k]), 1 << 20);
    CHECK(sb_trace_scan_more(&sc, &r.trace) == ok_after[k]);
    CHECK(sc.events == events_after[k]);
  }
  sb_trace_finalize(&r, &sc);
  CHECK_STR((const char *)r.trace.data, HEAD EV0 EV1 END_OK);
  CHECK_STR(r.trace_status, "complete");
  sb_result_free(&r);
  memset(&sc, 0, sizeof sc);
  sb_buf_append(&r.trace, HEAD "junk\n" EV0, strlen(HEAD "junk\n" EV0), 1 << 20);
  CHECK(!sb_trace_scan_more(&sc, &r.trace));
  CHECK(sc.keep == strlen(HEAD));
  sb_result_free(&r);
}

static void bench(void) {
  size_t cap = 16u << 20, len = 0, i = 0;
  char *buf = malloc(cap + 256);
  len += (size_t)sprintf(buf, HEAD);
  while (len < cap - 256)
    len += (size_t)sprintf(buf + len,
                           "{\"t\":\"ev\",\"i\":%zu,\"k\":\"line\",\"fr\":2,\"up\":1,\"d\":1,\"f\":0,\"ln\":4,"
                           "\"fn\":\"double_all\",\"loc\":{\"x\":[\"int\",\"2\"],\"out\":[\"list\",\"#2[2, 4, 6, 8]\"]}}\n",
                           i++);
  len += (size_t)sprintf(buf + len, "{\"t\":\"end\",\"status\":\"complete\",\"events\":%zu,\"exit\":{\"code\":0}}\n", i);
  sb_result r;
  memset(&r, 0, sizeof r);
  r.traced = true;
  r.trace.data = (unsigned char *)buf;
  r.trace.len = len;
  r.trace.cap = cap + 256;
  uint64_t t0 = sbu_now_ns();
  sb_trace_finalize(&r, NULL);
  double ms = (double)(sbu_now_ns() - t0) / 1e6;
  CHECK_STR(r.trace_status, "complete");
  printf("check: %.1f MB, %zu events in %.1f ms: %.2f ms per MB\n", (double)len / 1e6, i, ms, ms / ((double)len / 1e6));
  sb_result_free(&r);
}

int main(void) {
  expect("complete", HEAD EV0 EV1 END_OK, false, 0, 0, HEAD EV0 EV1 END_OK, "complete");
  /* no end: crashed, the partial line cut */
  expect("crashed", HEAD EV0 "{\"t\":\"ev\",\"i\":1,", false, -1, 9,
         HEAD EV0 "{\"t\":\"end\",\"status\":\"crashed\",\"reason\":\"no end record: the tracer was killed, exited early "
                  "or lost its descriptor\",\"events\":1,\"exit\":{\"signal\":9},\"by\":\"supervisor\"}\n",
         "crashed");
  /* the cap cut it: truncated/bytes */
  expect("cap", HEAD EV0 EV1 "{\"t\":\"ev\",\"i\":2,\"k\"", true, 0, 0,
         HEAD EV0 EV1 "{\"t\":\"end\",\"status\":\"truncated\",\"cap\":\"bytes\",\"events\":2,\"exit\":{\"code\":0},"
                      "\"by\":\"supervisor\"}\n",
         "truncated");
  /* junk: cut before it */
  expect("junk", HEAD EV0 "junk\n" EV1 END_OK, false, 0, 0,
         HEAD EV0 "{\"t\":\"end\",\"status\":\"tampered\",\"reason\":\"line 3 is not a trace record\",\"events\":1,"
                  "\"exit\":{\"code\":0},\"by\":\"supervisor\"}\n",
         "tampered");
  /* an event out of sequence (a forged one) */
  expect("sequence", HEAD EV1 END_OK, false, 0, 0,
         HEAD "{\"t\":\"end\",\"status\":\"tampered\",\"reason\":\"line 2: event 0 expected\",\"events\":0,"
              "\"exit\":{\"code\":0},\"by\":\"supervisor\"}\n",
         "tampered");
  /* a record after the end: the end goes too */
  expect("after end", HEAD EV0 EV1 END_OK "{\"t\":\"file\",\"f\":1,\"path\":\"/x\"}\n", false, 0, 0,
         HEAD EV0 EV1 "{\"t\":\"end\",\"status\":\"tampered\",\"reason\":\"line 5: a record after the end\","
                      "\"events\":2,\"exit\":{\"code\":0},\"by\":\"supervisor\"}\n",
         "tampered");
  /* no head first */
  expect("no head", EV0 END_OK, false, 0, 0,
         "{\"t\":\"end\",\"status\":\"tampered\",\"reason\":\"line 1 is not a head\",\"events\":0,\"exit\":{\"code\":0},"
         "\"by\":\"supervisor\"}\n",
         "tampered");
  /* nothing at all: crashed */
  expect("empty", "", false, 0, 0,
         "{\"t\":\"end\",\"status\":\"crashed\",\"reason\":\"no end record: the tracer was killed, exited early or lost "
         "its descriptor\",\"events\":0,\"exit\":{\"code\":0},\"by\":\"supervisor\"}\n",
         "crashed");
  /* the tracer's own truncated end is kept as is */
  expect("tracer cap", HEAD EV0 "{\"t\":\"end\",\"status\":\"truncated\",\"cap\":\"events\",\"events\":1}\n", false, 0, 0,
         HEAD EV0 "{\"t\":\"end\",\"status\":\"truncated\",\"cap\":\"events\",\"events\":1}\n", "truncated");
  incremental();
  bench();
  return check_exit();
}
