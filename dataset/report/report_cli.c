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

#define AT(F) SBO_AT(sbrp_opts, F)
static const sbo_opt report_opts[] = {
    {"out", 0, "FILE.html", "where the page goes (default OUT/report.html)"},
    {"data", 0, "DIR", "SURGE's published data, for items whose record lacks gt_published", SBO_STR, AT(data)},
    {"verify", 0, "FILE",
     "verify's scores to include: a `verify --benchmark surge --json` document or a CRUXEval scored file "
     "(repeatable; OUT/verify*.json are included too)", SBO_LIST, SBO_LIST_AT(sbrp_opts, verify, n_verify)},
    {"max-items", 0, "N", "diffs shown, the first N mismatched items that ran (default 40)", SBO_INT, AT(max_items), .min = 0, .max = 100000},
    {"max-bytes", 0, "N", "bytes shown per side of a diff (default 4096)", SBO_INT, AT(max_bytes), .min = 16, .max = 1 << 24},
    {NULL, 0, NULL, NULL}};
#undef AT
static const sbo_cmd report_cmd = {
    "surgebox report", "OUT [--out FILE.html] [--data DIR] [--verify FILE]... [--max-items N] [--max-bytes N]",
    "One self-contained HTML page (no network, no script) of a regen --out directory: the fidelity table with\n"
    "each mismatch class defined, the environment, the CPU-time bins as a chart, verify's scores, and per-item\n"
    "diffs of regenerated against published references, the first differing line highlighted.",
    report_opts, NULL, "exit: 0 written, 1 bad arguments, 2 OUT (or a --data, --verify file) unreadable or the page not written\n", false,
    NULL};

/* --out is the command's own (the page, not a field of sbrp_opts) */
static int html_out(sbo_parser *p, void *html, int key, const char *v) {
  *(const char **)html = v;
  return 0;
}

static int parse(int argc, char **argv, sbrp_opts *o, const char **html) {
  *o = (sbrp_opts){.max_items = 40, .max_bytes = 4096};
  sbo_parser p;
  int rc = sbo_parse(&p, &report_cmd, argc, argv, o, html_out, html); /* -1: --help */
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
