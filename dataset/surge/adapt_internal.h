/* Shared by the SURGE adapters (adapt_*.c). */
#ifndef SURGEBOX_ADAPT_INTERNAL_H
#define SURGEBOX_ADAPT_INTERNAL_H
#include "regen.h"

#include <stdio.h>

#define SBS_DEFAULT_TIME_S 30.0
#define SBS_LONG_TIME_S 300.0 /* TC/SC: a 12-city brute-force TSP takes 72-144 s */

json_object *sbs_req_new(void);
json_object *sbs_req_toolchain(const char *toolchain, double time_s);
void sbs_req_file(json_object *req, const char *path, const char *content, size_t len, int mode);
json_object *sbs_req_step(json_object *req, const char *name, const char *const *argv, double time_s);
json_object *sbs_posix_env(const char *path);
char **sbs_shell_split(const char *s, size_t *n);
void sbs_strv_free(char **v);

/* The toolchain named `name` in a daemon's toolchain list, or NULL. */
json_object *sbs_tc_find(json_object *list, const char *name);

/* item helpers */
const char *sbs_item_str(json_object *item, const char *key);
const char *sbs_feature_str(json_object *item, const char *key);

int sbs_adapt_dr(size_t index, json_object *item, const sbs_env *env, sbs_job *out, char *err, size_t n);
int sbs_adapt_bg(size_t index, json_object *item, const sbs_env *env, sbs_job *out, char *err, size_t n);
int sbs_adapt_tcsc(sbs_subset s, size_t index, json_object *item, const sbs_env *env, sbs_job *out, char *err,
                   size_t n);
int sbs_adapt_mlcl(sbs_subset s, size_t index, json_object *item, const sbs_env *env, sbs_job *out, char *err,
                   size_t n);
int sbs_adapt_rl(size_t index, json_object *item, const sbs_env *env, sbs_job *out, char *err, size_t n);
int sbs_adapt_fl(size_t index, json_object *item, const sbs_env *env, sbs_job *out, char *err, size_t n);

/* TC: the function whose calls SURGE timed, by script ("" = the whole script). */
const char *sbs_tc_timed_span(const char *fid);

/* The public class of a Java source (SURGE: /app/<C>.java), else the class
 * with main; NULL when neither. Caller frees. */
char *sbs_java_class(const char *src);
#endif
