/* What counts as a failure of surgebox rather than of the program. */
#include "failure.h"

#include "protocol.h"

#include <stdio.h>
#include <string.h>

bool sbr_failure_of(json_object *resp, char *why, size_t why_len) {
  char buf[8];
  if (!why) why = buf, why_len = sizeof buf;
  if (!resp) {
    snprintf(why, why_len, "lost: the connection to the daemon ended");
    return true;
  }
  const char *code = sbp_response_error_code(resp);
  json_object *e = json_object_object_get(resp, "error");
  if (code) { /* the daemon refused or failed the request: nothing ran as asked */
    const char *m = json_object_get_string(json_object_object_get(e, "message"));
    snprintf(why, why_len, "%s: %s", code, m ? m : "");
    return true;
  }
  const char *st = json_object_get_string(json_object_object_get(resp, "status"));
  if (st && strcmp(st, "internal_error") && strcmp(st, "toolchain_missing")) return false;
  /* the sandbox failed, or the daemon lacks what the job was built for; the
   * text: the response's error, else the first step's that has one */
  const char *text = e && json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;
  json_object *steps = json_object_object_get(resp, "steps");
  for (size_t i = 0; !text && steps && i < json_object_array_length(steps); i++)
    text = json_object_get_string(json_object_object_get(json_object_array_get_idx(steps, i), "error"));
  snprintf(why, why_len, "%s: %s", st ? st : "no status", text ? text : "(no error text)");
  return true;
}

bool sbr_failure_of_request(json_object *resp, char *why, size_t why_len) {
  /* what the daemon answers when it, not the request, is at fault */
  static const char *const own[] = {"internal", "busy", "unauthorized"};
  const char *code = resp ? sbp_response_error_code(resp) : NULL;
  bool own_fault = !code;
  for (size_t i = 0; code && i < sizeof own / sizeof *own; i++) own_fault |= !strcmp(code, own[i]);
  return own_fault && sbr_failure_of(resp, why, why_len);
}

void sbr_failures_add(sbr_failures *f, const char *why) {
  if (f->count++ == 0) snprintf(f->first, sizeof f->first, "%s", why);
}

int sbr_failures_report(const sbr_failures *f, const char *label) {
  if (!f->count) return 0;
  fprintf(stderr,
          "%s: %zu failure(s) of surgebox (not results of the programs; nothing recorded for them); the first: %s\n",
          label, f->count, f->first);
  return 2;
}
