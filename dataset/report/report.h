/* surgebox report: one self-contained HTML page of a regen --out directory
 * (prefix sbrp_). report_data.c gathers (the subsets' items, regen's own
 * summary, verify's scores), report_page.c writes the page and its tables,
 * report_diffs.c the per-item diffs, report_bins.c the CPU-time section;
 * html.c escapes, svg_chart.c draws. */
#ifndef SURGEBOX_REPORT_H
#define SURGEBOX_REPORT_H

#include "regen.h"

#include <json-c/json.h>
#include <stdio.h>

#define SBRP_MAX_VERIFY 16

typedef struct {
  const char *dir;          /* OUT */
  const char *data;         /* --data: the published data (NULL: the items' gt_published) */
  const char *verify[SBRP_MAX_VERIFY]; /* --verify FILEs */
  size_t n_verify;
  long max_items;           /* diffs shown */
  long max_bytes;           /* bytes per side of a diff */
} sbrp_opts;

typedef struct {
  char path[4200];
  json_object *doc;         /* a verify --json document or a CRUXEval scored file (owned) */
} sbrp_verify;

typedef struct {
  const sbrp_opts *o;
  sbs_subset subsets[SBS_N_SUBSETS];
  json_object *items[SBS_N_SUBSETS];     /* OUT/<subset>.json (owned) */
  json_object *published[SBS_N_SUBSETS]; /* --data's (owned; NULL without) */
  size_t n;
  json_object *summary;     /* sbs_regen_summary of the items (owned) */
  size_t failed;            /* items in class internal_error */
  bool summary_file;        /* OUT/summary.json exists (regen --summary) */
  sbrp_verify verify[SBRP_MAX_VERIFY];
  size_t n_verify;
} sbrp_report;

/* Read OUT (and --data, --verify): 0, or non-zero with a one-line error on stderr. */
int sbrp_gather(sbrp_report *r, const sbrp_opts *o);
void sbrp_free(sbrp_report *r);
/* The published reference of item i of subset k (NULL when unknown). */
const char *sbrp_published(const sbrp_report *r, size_t k, size_t i, size_t *len);

/* The page, to f: 0, or -1 when writing failed. */
int sbrp_write_page(const sbrp_report *r, FILE *f);
void sbrp_write_diffs(const sbrp_report *r, FILE *f);
/* Whether item i of subset k has its diff on the page (the first --max-items mismatches that ran). */
bool sbrp_diff_shown(const sbrp_report *r, size_t k, size_t i);
void sbrp_write_bins(const sbrp_report *r, FILE *f);
void sbrp_write_verify(const sbrp_report *r, FILE *f);

int sbrp_report_main(const sbc_ctx *ctx, int argc, char **argv);

#endif
