/* Dispatch to the subset's adapter. */
#include "adapt_internal.h"

#include <string.h>

const char *sbs_item_str(json_object *item, const char *key) {
  json_object *v;
  return json_object_object_get_ex(item, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                             : NULL;
}

const char *sbs_feature_str(json_object *item, const char *key) {
  json_object *f;
  return json_object_object_get_ex(item, "custom_features", &f) ? sbs_item_str(f, key) : NULL;
}

static int adapt_subset(sbs_subset s, size_t index, json_object *item, const sbs_env *env, sbs_job *out, char *err,
                        size_t err_len) {
  switch (s) {
  case SBS_DR: return sbs_adapt_dr(index, item, env, out, err, err_len);
  case SBS_BG: return sbs_adapt_bg(index, item, env, out, err, err_len);
  case SBS_TC:
  case SBS_SC: return sbs_adapt_tcsc(s, index, item, env, out, err, err_len);
  case SBS_ML:
  case SBS_CL: return sbs_adapt_mlcl(s, index, item, env, out, err, err_len);
  case SBS_RL: return sbs_adapt_rl(index, item, env, out, err, err_len);
  case SBS_FL: return sbs_adapt_fl(index, item, env, out, err, err_len);
  default: snprintf(err, err_len, "unknown subset"); return -1;
  }
}

int sbs_adapt(sbs_subset s, size_t index, json_object *item, const sbs_env *env, sbs_job *out, char *err,
              size_t err_len) {
  memset(out, 0, sizeof *out);
  out->out_step = "run";
  int rc = adapt_subset(s, index, item, env, out, err, err_len);
  int k = rc == 0 && env->alt ? sbs_env_role_of(s, out) : -1;
  if (k >= 0 && env->in_alt[k]) { /* the best profile is closer to SURGE's for this role: built there */
    sbs_job_free(out);
    out->out_step = "run";
    rc = adapt_subset(s, index, item, env->alt, out, err, err_len);
    if (rc == 0) snprintf(out->profile, sizeof out->profile, "%s", env->alt->run_profile);
    if (rc == 0 && out->request)
      json_object_object_add(out->request, "profile", json_object_new_string(env->alt->run_profile));
  }
  if (rc == 0) out->substituted = sbs_env_tag(env, s, out); /* not SURGE's environment: said and recorded */
  return rc;
}
