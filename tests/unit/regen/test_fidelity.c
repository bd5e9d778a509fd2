/* The fidelity summary (dataset/surge/fidelity.c) on hand-written "exec"
 * records: which environment each language ran in, and a subset whose
 * toolchain is absent said once as not regenerated, not as n failures. */
#include "check.h"
#include "fidelity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RAN(group, env) \
  "{\"exec\":{\"regenerated\":true,\"group\":\"" group "\",\"matched\":\"exact\",\"jaccard\":1,\"deterministic\":true," \
  "\"profile\":{\"name\":\"" env "\",\"manifest_hash\":null},\"class\":null}}"
#define MISSING(group, tc) \
  "{\"exec\":{\"regenerated\":false,\"group\":\"" group "\",\"missing\":\"" tc "\",\"class\":\"missing_toolchain\"}}"

static const char *get_str(json_object *o, const char *a, const char *b, const char *c) {
  json_object *v = json_object_object_get(o, a);
  if (b) v = json_object_object_get(v, b);
  if (c) v = json_object_object_get(v, c);
  return v ? json_object_get_string(v) : NULL;
}

int main(void) {
  json_object *ml = json_tokener_parse("[" RAN("Python", "host") "," RAN("Julia", "surge-2025") "," RAN("Python", "host") ","
                                       RAN("Julia", "surge-2025") "," MISSING("C#", "mono") "]");
  json_object *fl = json_tokener_parse("[" MISSING("lean4", "lean4") "," MISSING("lean4", "lean4") "," MISSING("lean4", "lean4") "]");
  CHECK(ml && fl);
  json_object *items[2] = {ml, fl};
  sbs_subset subsets[2] = {SBS_ML, SBS_FL};
  json_object *s = sbs_summary(items, subsets, 2);
  json_object *by = json_object_object_get(json_object_object_get(s, "ml"), "by");
  CHECK_STR(json_object_get_string(json_object_object_get(json_object_object_get(by, "Python"), "environment")), "host");
  CHECK_STR(json_object_get_string(json_object_object_get(json_object_object_get(by, "Julia"), "environment")), "surge-2025");
  CHECK(json_object_object_get(json_object_object_get(by, "C#"), "environment") == NULL); /* none ran */
  CHECK_STR(get_str(s, "ml", "environment", NULL), "host+surge-2025");
  CHECK(json_object_get_int(json_object_object_get(json_object_object_get(s, "ml"), "ran")) == 4);
  /* ML: one item not regenerated, its index still listed */
  CHECK(json_object_get_int(json_object_object_get(json_object_object_get(json_object_object_get(s, "ml"), "not_regenerated"), "count")) == 1);
  CHECK_STR(get_str(s, "ml", "not_regenerated", "reason"), "toolchain absent here: mono");
  CHECK(json_object_array_length(json_object_object_get(json_object_object_get(json_object_object_get(s, "ml"), "mismatches"), "missing_toolchain")) == 1);
  /* FL: the whole subset, said once */
  json_object *nr = json_object_object_get(json_object_object_get(s, "fl"), "not_regenerated");
  CHECK(json_object_get_int(json_object_object_get(nr, "count")) == 3);
  CHECK(json_object_get_boolean(json_object_object_get(nr, "all")));
  CHECK_STR(get_str(s, "fl", "not_regenerated", "reason"), "toolchain absent here: lean4");
  CHECK(json_object_array_length(json_object_object_get(json_object_object_get(json_object_object_get(s, "fl"), "mismatches"), "missing_toolchain")) == 0);
  /* the text report */
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  sbs_print_table(s, f);
  fclose(f);
  CHECK(strstr(text, "  fl   3 items, the whole subset (toolchain absent here: lean4)\n") != NULL);
  CHECK(strstr(text, "  ml   1 item (toolchain absent here: mono): 4\n") != NULL); /* issue 36: not "1 items" */
  CHECK(strstr(text, "missing_toolchain") == NULL); /* never listed as mismatches */
  CHECK(strstr(text, "surge-2025\n") != NULL);      /* Julia's row names its profile */
  if (check_failures_) fputs(text, stderr);
  free(text);
  json_object_put(s);
  json_object_put(ml);
  json_object_put(fl);
  return check_exit();
}
