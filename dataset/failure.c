/* What counts as a failure of surgebox rather than of the program. */
#include "failure.h"

#include "protocol.h"

#include <stdio.h>
#include <string.h>

bool sbr_failure_of(const sbc_result *r, char *why, size_t why_len) {
  char buf[8];
  if (!why) why = buf, why_len = sizeof buf;
  if (!r) {
    snprintf(why, why_len, "lost: the connection to the daemon ended");
    return true;
  }
  if (r->is_error) { /* the daemon refused or failed the request: nothing ran as asked */
    snprintf(why, why_len, "%s: %s", r->error_code ? r->error_code : "", r->error_message ? r->error_message : "");
    return true;
  }
  const char *st = r->status;
  if (st && strcmp(st, SBP_STATUS_INTERNAL_ERROR) && strcmp(st, SBP_STATUS_TOOLCHAIN_MISSING) &&
      strcmp(st, SBP_STATUS_HOST_KILLED))
    return false;
  /* the sandbox failed, or the daemon lacks what the job was built for; the
   * text: the response's error, else the first step's that has one */
  const char *text = r->error_message;
  for (size_t i = 0; !text && i < r->n_steps; i++) text = r->steps[i].error;
  snprintf(why, why_len, "%s: %s", st ? st : "no status", text ? text : "(no error text)");
  return true;
}

bool sbr_unfinished_status(const char *status) {
  return status && (!strcmp(status, SBP_STATUS_TIMEOUT) || !strcmp(status, SBP_STATUS_MEMORY_LIMIT) ||
                    !strcmp(status, SBP_STATUS_HOST_KILLED));
}

bool sbr_failure_of_request(const sbc_result *r, char *why, size_t why_len) {
  /* what the daemon answers when it, not the request, is at fault; and an
   * answer that could not be read (client/result.h) */
  static const char *const own[] = {"internal", "busy", "unauthorized", "fleet_unavailable", SBC_BAD_RESPONSE};
  const char *code = r && r->is_error ? r->error_code : NULL;
  bool own_fault = !r || !r->is_error;
  for (size_t i = 0; code && i < sizeof own / sizeof *own; i++) own_fault |= !strcmp(code, own[i]);
  return own_fault && sbr_failure_of(r, why, why_len);
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
