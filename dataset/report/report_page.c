/* surgebox report's page: the frame, the fidelity table with each class
 * defined, the environment; the other sections come from report_diffs.c,
 * report_bins.c and report_verify.c. Everything from OUT is escaped
 * (html.c); the page loads nothing and runs no script. */
#include "html.h"
#include "report.h"

#include "failure.h"
#include "fidelity.h"

#include <string.h>
#include <time.h>

static const char css[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1180px;color:#222;padding:0 12px}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}h3{font-size:15px}"
    "table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ccc;padding:3px 7px;text-align:right;vertical-align:top}"
    "th{background:#f2f2f2}td.l,th.l{text-align:left}tr td:first-child{white-space:nowrap}tr.group td:first-child{padding-left:22px}"
    "tr.subset td{font-weight:600;background:#fafafa}"
    "dt{font-weight:600;font-family:monospace}dd{margin:0 0 8px 24px}"
    ".bad{background:#fdd;color:#900;font-weight:600}"
    "pre{background:#f8f8f8;border:1px solid #ddd;padding:6px;overflow-x:auto;max-height:420px;margin:4px 0;white-space:pre}"
    ".ln{color:#999;user-select:none}.first{background:#ffe08a;display:inline-block;min-width:100%}"
    ".diff{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:10px}.diff>div{min-width:0}.cut{color:#a40;font-style:italic}"
    ".note{color:#555}.bar{font-family:monospace;color:#36c}svg.chart{border:1px solid #ddd;background:#fff}"
    "svg .edge{stroke:#c33;stroke-dasharray:4 3}svg .tick{font-size:11px;fill:#555}svg text{font-size:12px}"
    "svg .charttitle{font-weight:600;font-size:13px}.warn{color:#a40;font-weight:600}";

/* from fidelity.c, regen_task.c and failure.h: the order sbs_classify tries */
static const struct {
  const char *name, *def;
} classes[] = {
    {"missing_toolchain",
     "the toolchain the item needs is absent here (from the daemon and its profiles): the item did not run and its "
     "published reference is kept; said once per subset, never guessed."},
    {"nondeterministic",
     "the item's repeats (regen --repeat N) gave different references: its output depends on more than its input "
     "(uninitialised memory, timing, hashing); the first repeat is the one compared."},
    {"timeout",
     "the run hit its time limit before finishing: not a reference (the published one is kept), never scored or "
     "timed; `regen --retry-failed` runs it again."},
    {"memory_limit",
     "the run hit its own memory limit (its cgroup's own counters say so) before finishing: not a reference, never "
     "scored or timed; `regen --retry-failed` runs it again."},
    {"host_killed",
     "the host's OOM killer (or a parent cgroup's) killed the run although its own memory limit was never reached: "
     "a failure of the machine, not the program's verdict. Not a reference, never scored or timed, not complete "
     "(the next regen runs it again), and regen's exit status is 2."},
    {"unchecked",
     "run once (regen without --repeat 2), so not checked for determinism, and different even after normalisation "
     "on SURGE's toolchain: nondeterministic or a real difference; run with --repeat 2 to tell."},
    {"toolchain_drift",
     "not byte-equal, but equal once toolchain-controlled text is normalised (N1-N5: install paths, link offsets and "
     "temporary names, trailing whitespace, positions inside system headers, warning tags; N6 whitespace runs for "
     "whitespace-insensitive references), or both sides are the same compile failure in another compiler's words; "
     "also any miss of an item run on another toolchain than SURGE's (a substitution, listed under Environment)."},
    {"other",
     "deterministic, run on SURGE's toolchain, and different even after normalisation: a difference nothing above "
     "explains (see its diff)."},
    {SBR_FAILURE_CLASS,
     "a failure of surgebox, not of the program: the sandbox or the daemon could not run the item. Never written as a "
     "reference (the published one is kept), counted on its own, and regen's exit status is 2."},
};

static int geti(json_object *o, const char *k) { return json_object_get_int(json_object_object_get(o, k)); }
static const char *gets_(json_object *o, const char *k) {
  json_object *v = json_object_object_get(o, k);
  return v ? json_object_get_string(v) : NULL;
}

static void row(FILE *f, const char *cls, const char *name, json_object *o, bool subset) {
  int ran = geti(o, "ran");
  fprintf(f, "<tr class=\"%s\"><td class=\"l\">", cls);
  sbh_text(f, name);
  /* where nothing ran, "-" for the rates and the Jaccard mean (nothing was compared), as eval and regen's text */
  char ex[16] = "-", nm[16] = "-", jac[16] = "-";
  if (ran) {
    snprintf(ex, sizeof ex, "%.1f%%", 100.0 * geti(o, "exact") / ran);
    snprintf(nm, sizeof nm, "%.1f%%", 100.0 * geti(o, "normalized") / ran);
    snprintf(jac, sizeof jac, "%.3f", json_object_get_double(json_object_object_get(o, "jaccard_mean")));
  }
  fprintf(f, "</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%d</td><td>%d</td>",
          geti(o, "n"), ran, geti(o, "exact"), ex, geti(o, "normalized"), nm, jac, geti(o, "missing_toolchain"),
          geti(o, "nondeterministic"));
  if (subset) fprintf(f, "<td>%d</td>", geti(o, SBR_FAILURE_CLASS));
  else fputs("<td></td>", f);
  fputs("<td class=\"l\">", f);
  sbh_text(f, gets_(o, "environment"));
  fputs("</td></tr>\n", f);
}

static void fidelity(const sbrp_report *r, FILE *f) {
  fputs("<h2 id=\"fidelity\">Fidelity</h2>\n<p class=\"note\">Regenerated references against SURGE's published "
        "ones. <em>exact</em>: byte-equal after SURGE's own post-processing; <em>normalized</em>: equal after "
        "N1-N6; <em>Jaccard</em>: SURGE's metric (lower-cased whitespace token sets), the mean over the items "
        "that ran. Percentages are of the items that ran.</p>\n",
        f);
  fputs("<table id=\"fidelity-table\"><tr><th class=\"l\">subset / group</th><th>n</th><th>ran</th><th>exact</th><th>exact %</th>"
        "<th>normalized</th><th>normalized %</th><th>Jaccard</th><th>missing toolchain</th><th>nondeterministic</th>"
        "<th>internal_error</th><th class=\"l\">environment</th></tr>\n",
        f);
  json_object_object_foreach(r->summary, subset, o) {
    row(f, "subset", subset, o, true);
    json_object *by = json_object_object_get(o, "by");
    if (json_object_object_length(by) < 2) continue;
    const char *names[256]; /* sorted, as regen's text table (not in order of first appearance) */
    size_t ng = sbs_sorted_groups(by, names, 256);
    for (size_t i = 0; i < ng; i++) row(f, "group", names[i], json_object_object_get(by, names[i]), false);
  }
  fputs("</table>\n", f);
  if (r->failed)
    fprintf(f, "<p class=\"warn\">%zu item(s) not regenerated: a failure of surgebox (class %s), the published reference kept.</p>\n",
            r->failed, SBR_FAILURE_CLASS);
  fputs("<h3 id=\"classes\">Mismatch classes</h3>\n<dl>\n", f);
  for (size_t c = 0; c < sizeof classes / sizeof *classes; c++)
    fprintf(f, "<dt id=\"class-%s\">%s</dt><dd>%s</dd>\n", classes[c].name, classes[c].name, classes[c].def);
  fputs("</dl>\n<h3>Mismatches by class (item indices)</h3>\n<table><tr><th class=\"l\">subset</th><th class=\"l\">class</th>"
        "<th>items</th><th class=\"l\">indices (linked where the diff is shown)</th></tr>\n",
        f);
  bool any = false;
  for (size_t k = 0; k < r->n; k++) {
    const char *sn = sbs_subset_name(r->subsets[k]);
    json_object *so = json_object_object_get(r->summary, sn), *mm = json_object_object_get(so, "mismatches");
    json_object_object_foreach(mm, cls, arr) {
      size_t n = json_object_array_length(arr);
      json_object *nr = json_object_object_get(so, "not_regenerated");
      bool whole = !strcmp(cls, "missing_toolchain") && nr && json_object_get_boolean(json_object_object_get(nr, "all"));
      if (!n && !whole) continue;
      any = true;
      fprintf(f, "<tr><td class=\"l\">%s</td><td class=\"l\"><a href=\"#class-%s\">%s</a></td><td>%d</td><td class=\"l\">", sn,
              cls, cls, whole ? geti(nr, "count") : (int)n);
      if (whole) sbh_text(f, "every item: ");
      if (whole) sbh_text(f, gets_(nr, "reason"));
      for (size_t i = 0; i < n; i++) {
        int idx = json_object_get_int(json_object_array_get_idx(arr, i));
        char id[96];
        sbh_id(id, sizeof id, sn, (size_t)idx);
        if (sbrp_diff_shown(r, k, (size_t)idx)) fprintf(f, "%s<a href=\"#%s\">%d</a>", i ? ", " : "", id, idx);
        else fprintf(f, "%s%d", i ? ", " : "", idx);
      }
      fputs("</td></tr>\n", f);
    }
  }
  if (!any) fputs("<tr><td class=\"l\" colspan=\"4\">none: every item that ran matched exactly</td></tr>\n", f);
  fputs("</table>\n", f);
}

static void env_row(FILE *f, const char *cls, const char *name, json_object *o) {
  fprintf(f, "<tr class=\"%s\"><td class=\"l\">", cls);
  sbh_text(f, name);
  fputs("</td><td class=\"l\">", f);
  sbh_text(f, gets_(o, "environment") ? gets_(o, "environment") : "none ran");
  fputs("</td><td class=\"l\">", f);
  sbh_text(f, gets_(o, "toolchains"));
  fputs("</td><td class=\"l\">", f);
  sbh_text(f, gets_(o, "substituted") ? gets_(o, "substituted") : "none");
  fputs("</td></tr>\n", f);
}

static void environment(const sbrp_report *r, FILE *f) {
  fputs("<h2 id=\"environment\">Environment</h2>\n<p class=\"note\">Where each subset and group ran (<em>host</em> or a "
        "profile's name; several joined by +), the toolchains that ran it with their versions, and each substitution: a "
        "toolchain used instead of SURGE's, whose misses are classed toolchain_drift.</p>\n"
        "<table id=\"environment-table\"><tr><th class=\"l\">subset / group</th><th class=\"l\">where</th>"
        "<th class=\"l\">toolchains</th><th class=\"l\">substituted (SURGE's)</th></tr>\n",
        f);
  json_object_object_foreach(r->summary, subset, o) {
    env_row(f, "subset", subset, o);
    json_object *by = json_object_object_get(o, "by");
    if (json_object_object_length(by) < 2) continue;
    const char *names[256];
    size_t ng = sbs_sorted_groups(by, names, 256);
    for (size_t i = 0; i < ng; i++) env_row(f, "group", names[i], json_object_object_get(by, names[i]));
  }
  fputs("</table>\n", f);
  json_object_object_foreach(r->summary, subset1, o1) {
    json_object *nr = json_object_object_get(o1, "not_regenerated");
    if (!nr) continue;
    fprintf(f, "<p>Not regenerated in %s: %d item(s)%s (", subset1, geti(nr, "count"),
            json_object_get_boolean(json_object_object_get(nr, "all")) ? ", the whole subset" : "");
    sbh_text(f, gets_(nr, "reason"));
    fputs(").</p>\n", f);
  }
}

int sbrp_write_page(const sbrp_report *r, FILE *f) {
  char when[64];
  time_t now = time(NULL);
  strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        /* nothing is fetched and nothing runs, whatever an item printed */
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n"
        "<title>surgebox report: ",
        f);
  sbh_text(f, r->o->dir);
  fprintf(f, "</title>\n<style>%s</style></head><body>\n<h1>surgebox report: ", css);
  sbh_text(f, r->o->dir);
  fprintf(f, "</h1>\n<p class=\"note\">surgebox %s, written %s from ", SURGEBOX_VERSION, when);
  for (size_t k = 0; k < r->n; k++) fprintf(f, "%s%s.json", k ? ", " : "", sbs_subset_name(r->subsets[k]));
  fputs(r->summary_file ? " (and summary.json beside them: the figures below are recomputed from the items with the same "
                          "function regen --summary uses)"
                        : "",
        f);
  fputs(".</p>\n<p><a href=\"#fidelity\">Fidelity</a> · <a href=\"#classes\">Mismatch classes</a> · "
        "<a href=\"#environment\">Environment</a> · <a href=\"#bins\">CPU-time bins</a> · <a href=\"#verify\">Verify scores</a>"
        " · <a href=\"#diffs\">Diffs</a></p>\n",
        f);
  fidelity(r, f);
  environment(r, f);
  sbrp_write_bins(r, f);
  sbrp_write_verify(r, f);
  sbrp_write_diffs(r, f);
  fputs("</body></html>\n", f);
  return ferror(f) ? -1 : 0;
}
