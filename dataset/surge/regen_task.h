/* One SURGE item of a regen run: its job, the responses to its repeats,
 * and the record written to --out (regen_task.c). */
#ifndef SURGEBOX_REGEN_TASK_H
#define SURGEBOX_REGEN_TASK_H
#include "regen.h"

typedef struct {
  sbs_subset subset;
  size_t index;
  json_object *item; /* the published item */
  sbs_job job;
  int got, wanted;
  char **refs; /* per repeat */
  double *cpu, *wall, *inproc; /* per repeat, one block (cpu's) */
  int64_t rss;
  char status[32];
  bool compile_failed;
  bool failed;            /* a failure of surgebox (failure.h): nothing of it is data */
  char unfinished[32];    /* a repeat's status when one did not finish (timeout, memory_limit, host_killed) */
  json_object *toolchain; /* identity from the response */
  json_object *profile;   /* {"name","manifest_hash"} from the response */
  char error[512];
} sbs_regen_task;

/* The task of item `index` (its job adapted for env): 0, or -1 (out of memory). */
int sbs_regen_task_init(sbs_regen_task *t, sbs_subset s, size_t index, json_object *item, const sbs_env *env,
                        int repeat);
void sbs_regen_task_free(sbs_regen_task *t);
/* The answer to one repeat (typed: client/result.h). */
void sbs_regen_task_answer(sbs_regen_task *t, const sbc_result *res, const sbs_env *env);
/* out_item (the item as written to --out) gets the published item's
 * fields, "gt" (regenerated, or the published one when nothing was) and
 * "exec" (what happened). A failure of surgebox is written as such:
 * "regenerated": false, class SBR_FAILURE_CLASS, not complete (a resumed
 * run runs it again). A run that did not finish is never a reference:
 * "regenerated": false, its status as its class (timeout, memory_limit;
 * host_killed, the machine's failure, also not complete). One run: a miss
 * nothing explains is "unchecked" (determinism not checked), not "other". */
void sbs_regen_task_record(const sbs_regen_task *t, json_object *out_item);


#endif
