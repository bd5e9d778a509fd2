/* surgebox report OUT/ [--out FILE.html] [--data DIR] [--verify FILE]...
 *
 * One self-contained HTML page of a `surgebox regen --out OUT` directory
 * (or verify --benchmark surge's --out): the fidelity table with each class
 * defined, the environment, the CPU-time bins, verify's scores, per-item
 * diffs. Talks to no daemon; reads OUT, writes one file. */
#include "atomic_write.h"
#include "cliopt.h"
#include "report.h"

#include <errno.h>
#include <string.h>

enum { O_OUT = 256, O_DATA, O_VERIFY, O_MAX_ITEMS, O_MAX_BYTES };
static const sbo_opt report_opts[] = {
    {"out", O_OUT, "FILE.html", "where the page goes (default OUT/report.html)"},
    {"data", O_DATA, "DIR", "SURGE's published data, for items whose record lacks gt_published"},
    {"verify", O_VERIFY, "FILE",
     "verify's scores to include: a `verify --benchmark surge --json` document or a CRUXEval scored file "
     "(repeatable; OUT/verify*.json are included too)"},
    {"max-items", O_MAX_ITEMS, "N", "diffs shown, the first N mismatched items that ran (default 40)"},
    {"max-bytes", O_MAX_BYTES, "N", "bytes shown per side of a diff (default 4096)"},
    {NULL, 0, NULL, NULL}};
static const sbo_cmd report_cmd = {
    "surgebox report", "OUT [--out FILE.html] [--data DIR] [--verify FILE]... [--max-items N] [--max-bytes N]",
    "One self-contained HTML page (no network, no script) of a regen --out directory: the fidelity table with\n"
    "each mismatch class defined, the environment, the CPU-time bins as a chart, verify's scores, and per-item\n"
    "diffs of regenerated against published references, the first differing line highlighted.",
    report_opts, NULL, "exit: 0 written, 1 bad arguments, 2 OUT (or a --data, --verify file) unreadable or the page not written\n", false,
    NULL};

static int parse(int argc, char **argv, sbrp_opts *o, const char **html) {
  *o = (sbrp_opts){.max_items = 40, .max_bytes = 4096};
  sbo_parser p;
  sbo_init(&p, &report_cmd, argc, argv);
  int k, rc = 0;
  const char *v;
  while (!rc && (k = sbo_next(&p, &v)) > 0) {
    switch (k) {
    case O_OUT: *html = v; break;
    case O_DATA: o->data = v; break;
    case O_VERIFY:
      if (o->n_verify == SBRP_MAX_VERIFY) rc = sbo_usage_error(&p, "--verify given more than %d times", SBRP_MAX_VERIFY);
      else o->verify[o->n_verify++] = v;
      break;
    case O_MAX_ITEMS:
      if (sbo_parse_long(v, 0, 100000, &o->max_items) < 0) rc = sbo_bad_value(&p, k, v);
      break;
    case O_MAX_BYTES:
      if (sbo_parse_long(v, 16, 1 << 24, &o->max_bytes) < 0) rc = sbo_bad_value(&p, k, v);
      break;
    }
  }
  if (!rc && k == SBO_STOP) rc = p.status ? p.status : -1; /* -1: --help */
  if (!rc && p.n_pos != 1)
    rc = sbo_usage_error(&p, p.n_pos ? "one OUT directory, not %d" : "OUT (a regen --out directory) is required", p.n_pos);
  if (!rc) o->dir = p.pos[0];
  sbo_done(&p);
  return rc;
}

int sbrp_report_main(const sbc_ctx *ctx, int argc, char **argv) {
  (void)ctx;
  sbrp_opts o;
  const char *html = NULL;
  int rc = parse(argc, argv, &o, &html);
  if (rc) return rc < 0 ? 0 : rc;
  char def[4200];
  if (!html) {
    size_t len = strlen(o.dir); /* "out/" gives out/report.html, not out//report.html */
    while (len > 1 && o.dir[len - 1] == '/') len--;
    snprintf(def, sizeof def, "%.*s/report.html", (int)len, o.dir);
    html = def;
  }
  sbrp_report r;
  if (sbrp_gather(&r, &o)) { /* an unreadable input: 2, as for every command */
    sbrp_free(&r);
    return 2;
  }
  sbu_atomic a;
  if (sbu_atomic_open(&a, html, 0644) < 0) {
    fprintf(stderr, "report: cannot write %s: %s\n", html, strerror(errno));
    sbrp_free(&r);
    return 2;
  }
  if (sbrp_write_page(&r, a.f) < 0) {
    sbu_atomic_abort(&a);
    rc = -1;
  } else {
    rc = sbu_atomic_commit(&a);
  }
  if (rc < 0) {
    fprintf(stderr, "report: cannot write %s: %s\n", html, strerror(errno));
    sbrp_free(&r);
    return 2;
  }
  printf("report: wrote %s (%zu subset(s), %zu verify file(s))\n", html, r.n, r.n_verify);
  if (r.failed)
    fprintf(stderr, "report: %zu item(s) in class internal_error (a failure of surgebox): see the page's fidelity table\n",
            r.failed);
  sbrp_free(&r);
  return 0;
}
