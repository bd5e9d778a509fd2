/* Comparing regenerated references with the published ones (prefix sbr_). */
#ifndef SURGEBOX_FIDELITY_H
#define SURGEBOX_FIDELITY_H
#include "regen.h"

#include <stdio.h>

typedef struct {
  bool exact, normalized, drift;
  double jaccard;
} sbs_compare_result;

/* compile_failed: our run's compile step failed (BG/DR/RL). */
void sbs_compare(const char *published, const char *regenerated, bool whitespace_free, bool compile_failed,
                 sbs_compare_result *out);
/* The mismatch class of an item, NULL when it matched exactly. */
const char *sbs_classify(const char *status, bool missing, bool deterministic, const sbs_compare_result *c);
/* When job j ran on another toolchain than SURGE's (j->substituted): exec gets
 * "substituted": {"used", "surge"}, and a miss classed "other" becomes
 * "toolchain_drift". Called once exec holds "regenerated" and "class". */
void sbs_exec_substitution(json_object *exec, const sbs_job *j);
/* {"<subset>": {"n","ran","exact","normalized","jaccard_mean","missing_toolchain","nondeterministic",
 *               "environment","substituted", "by": {...same...}, "mismatches": {"<class>": [indices]}}} from items carrying "exec". */
json_object *sbs_summary(json_object *const *items_by_subset, const sbs_subset *subsets, size_t n_subsets);
void sbs_print_table(json_object *summary, FILE *f);
/* The names of a summary's "by" groups in a stable order (numbers inside
 * compared as numbers: "g++-C++11--O1" before "g++-C++17--O0"), not in order
 * of first appearance; at most max of them, the count returned. They point
 * into by. */
size_t sbs_sorted_groups(json_object *by, const char **names, size_t max);
#endif
