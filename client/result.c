/* An exec response as a struct: see result.h. */
#include "result.h"
#include "protocol.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_object *field(json_object *o, const char *key) {
  json_object *v = NULL;
  return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A string field copied, or NULL when absent, null or not a string. */
static char *str_dup(json_object *o, const char *key) {
  json_object *v = field(o, key);
  return v && json_object_is_type(v, json_type_string) ? strdup(json_object_get_string(v)) : NULL;
}

static char *str_or_empty(json_object *o, const char *key) {
  char *s = str_dup(o, key);
  return s ? s : strdup("");
}

static bool flag(json_object *o, const char *key) {
  json_object *v = field(o, key);
  return v && json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

static double number(json_object *o, const char *key) {
  json_object *v = field(o, key);
  return v && (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))
             ? json_object_get_double(v)
             : -1;
}

/* A step's wall_waiting ({"process", "state", "wchan"}) as words: "the
 * program was asleep (S) in hrtimer_nanosleep"; NULL when absent. */
static char *waiting_text(json_object *w) {
  char *process = str_dup(w, "process"), *state = str_dup(w, "state"), *wchan = str_dup(w, "wchan"), *s = NULL;
  if (process && state) {
    static const char *const hows[][2] = {{"R", "running"}, {"S", "asleep"}, {"D", "in uninterruptible I/O"},
                                          {"T", "stopped"},   {"t", "stopped"}, {"Z", "exiting"}, {"X", "exiting"}};
    const char *how = "in state";
    for (size_t i = 0; i < sizeof hows / sizeof *hows; i++)
      if (!strcmp(state, hows[i][0])) how = hows[i][1];
    const char *who = !strcmp(process, "program") ? "the program was"
                      : !strcmp(process, "zygote") ? "the program had not started: its warm zygote was"
                                                   : "the program had not started: the sandbox's init was";
    if (asprintf(&s, "%s %s (%.2s)%s%.64s", who,
                 how, state, wchan ? " in " : "", wchan ? wchan : "") < 0)
      s = NULL;
  }
  free(process);
  free(state);
  free(wchan);
  return s;
}

static json_object *ref(json_object *o, const char *key) {
  json_object *v = field(o, key);
  return v ? json_object_get(v) : NULL;
}

/* key's exact bytes: key_b64 decoded when present, else the text. */
static int read_stream(json_object *step, const char *key, sbc_stream *s, char *err, size_t err_len) {
  char k[32];
  snprintf(k, sizeof k, "%s_lossy", key);
  s->lossy = flag(step, k);
  snprintf(k, sizeof k, "%s_truncated", key);
  s->truncated = flag(step, k);
  snprintf(k, sizeof k, "%s_b64", key);
  json_object *b64 = field(step, k), *text = field(step, key);
  const char *t = text && json_object_is_type(text, json_type_string) ? json_object_get_string(text) : "";
  size_t n = text && json_object_is_type(text, json_type_string) ? (size_t)json_object_get_string_len(text) : 0;
  s->text = malloc(n + 1);
  if (!s->text) {
    snprintf(err, err_len, "out of memory");
    return -1;
  }
  memcpy(s->text, t, n);
  s->text[n] = 0;
  s->text_len = n;
  if (b64 && json_object_is_type(b64, json_type_string)) {
    unsigned char *d = NULL;
    size_t dn = 0;
    if (sbu_base64_decode(json_object_get_string(b64), (size_t)json_object_get_string_len(b64), &d, &dn, NULL) !=
        SBU_B64_OK) {
      free(d);
      snprintf(err, err_len, "%s is not base64", k);
      return -1;
    }
    s->data = d; /* the decoder leaves a NUL after the bytes */
    s->len = dn;
    s->exact = true;
    return 0;
  }
  s->data = malloc(n + 1);
  if (!s->data) {
    snprintf(err, err_len, "out of memory");
    return -1;
  }
  memcpy(s->data, t, n + 1);
  s->len = n;
  s->exact = !s->lossy;
  return 0;
}

static int read_step(json_object *o, sbc_step *s, char *err, size_t err_len) {
  if (!json_object_is_type(o, json_type_object)) {
    snprintf(err, err_len, "a step is not an object");
    return -1;
  }
  s->name = str_or_empty(o, "name");
  s->status = str_or_empty(o, "status");
  json_object *code = field(o, "exit_code");
  s->has_exit_code = code && json_object_is_type(code, json_type_int);
  s->exit_code = s->has_exit_code ? json_object_get_int(code) : -1;
  s->signal = str_dup(o, "signal");
  s->error = str_dup(o, "error");
  s->limit_hit = str_dup(o, "limit_hit");
  s->cpu_time_s = number(o, "cpu_time_s");
  s->wall_time_s = number(o, "wall_time_s");
  json_object *rss = field(o, "max_rss_kb");
  s->max_rss_kb = rss && json_object_is_type(rss, json_type_int) ? (long long)json_object_get_int64(rss) : -1;
  s->cached = flag(o, "cached");
  s->pids_limit_hit = flag(o, "pids_limit_hit");
  s->wall_waiting = waiting_text(field(o, "wall_waiting"));
  s->enforced = ref(o, "enforced");
  if (!s->name || !s->status) {
    snprintf(err, err_len, "out of memory");
    return -1;
  }
  if (read_stream(o, "stdout", &s->out, err, err_len) < 0) return -1;
  return read_stream(o, "stderr", &s->err, err, err_len);
}

int sbc_result_parse(json_object *resp, sbc_result *r, char *err, size_t err_len) {
  memset(r, 0, sizeof *r);
  json_object *type = field(resp, "type"), *id = field(resp, "id");
  const char *t = type && json_object_is_type(type, json_type_string) ? json_object_get_string(type) : NULL;
  if (!t || (strcmp(t, "exec") != 0 && strcmp(t, "error") != 0)) {
    snprintf(err, err_len, "not an exec response (type %s)", t ? t : "missing");
    return -1;
  }
  r->id = strdup(id && !json_object_is_type(id, json_type_null) ? json_object_get_string(id) : "");
  if (!strcmp(t, "error")) {
    json_object *e = field(resp, "error");
    r->is_error = true;
    r->error_code = str_dup(e, "code");
    r->error_message = str_dup(e, "message");
    if (!r->error_code) r->error_code = strdup("unknown");
    return 0;
  }
  r->status = str_dup(resp, "status");
  if (!r->status) {
    snprintf(err, err_len, "an exec response without a status");
    sbc_result_free(r);
    return -1;
  }
  r->error_message = str_dup(resp, "error");
  r->toolchain = ref(resp, "toolchain");
  r->profile = ref(resp, "profile");
  json_object *steps = field(resp, "steps");
  size_t n = steps && json_object_is_type(steps, json_type_array) ? json_object_array_length(steps) : 0;
  r->steps = n ? calloc(n, sizeof *r->steps) : NULL;
  if (n && !r->steps) {
    snprintf(err, err_len, "out of memory");
    sbc_result_free(r);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    r->n_steps = i + 1;
    if (read_step(json_object_array_get_idx(steps, i), &r->steps[i], err, err_len) < 0) {
      sbc_result_free(r);
      return -1;
    }
  }
  return 0;
}

void sbc_result_free(sbc_result *r) {
  for (size_t i = 0; i < r->n_steps; i++) {
    sbc_step *s = &r->steps[i];
    free(s->name);
    free(s->status);
    free(s->signal);
    free(s->error);
    free(s->limit_hit);
    free(s->wall_waiting);
    free(s->out.data);
    free(s->err.data);
    free(s->out.text);
    free(s->err.text);
    json_object_put(s->enforced);
  }
  free(r->steps);
  free(r->id);
  free(r->status);
  free(r->error_code);
  free(r->error_message);
  json_object_put(r->toolchain);
  json_object_put(r->profile);
  memset(r, 0, sizeof *r);
}

void sbc_result_of(json_object *resp, sbc_result *r) {
  char err[256], msg[320];
  if (sbc_result_parse(resp, r, err, sizeof err) == 0) return;
  json_object *id = field(resp, "id");
  snprintf(msg, sizeof msg, "the daemon's answer cannot be read: %s", err);
  r->is_error = true;
  r->id = strdup(id && !json_object_is_type(id, json_type_null) ? json_object_get_string(id) : "");
  r->error_code = strdup(SBC_BAD_RESPONSE);
  r->error_message = strdup(msg);
}

const sbc_step *sbc_result_step(const sbc_result *r, const char *name) {
  for (size_t i = 0; i < r->n_steps; i++)
    if (!strcmp(r->steps[i].name, name)) return &r->steps[i];
  return NULL;
}

bool sbc_result_compile_failed(const sbc_result *r) {
  const sbc_step *c = sbc_result_step(r, "compile");
  return c && strcmp(c->status, SBP_STATUS_OK) != 0;
}

const sbc_step *sbc_result_program_step(const sbc_result *r) {
  const sbc_step *run = sbc_result_step(r, "run");
  return run ? run : r->n_steps == 1 ? &r->steps[0] : NULL;
}

const sbc_step *sbc_result_last_step(const sbc_result *r) { return r->n_steps ? &r->steps[r->n_steps - 1] : NULL; }

int sbc_result_shell_status(const sbc_result *r) {
  const sbc_step *last = sbc_result_last_step(r);
  if (!last) return -1;
  if (last->signal) {
    const char *sig = last->signal;
    if (!strncmp(sig, "SIG", 3)) sig += 3;
    for (int s = 1; s < NSIG; s++) {
      const char *ab = sigabbrev_np(s);
      if (ab && !strcmp(ab, sig)) return 128 + s;
    }
    return 128 + SIGKILL;
  }
  return last->has_exit_code ? last->exit_code & 0xff : 0;
}

bool sbc_result_failed(const sbc_result *r) {
  return r->is_error || !r->status || !strcmp(r->status, SBP_STATUS_INTERNAL_ERROR) ||
         !strcmp(r->status, SBP_STATUS_TOOLCHAIN_MISSING) || !strcmp(r->status, SBP_STATUS_UNSUPPORTED);
}

const char *sbc_result_why(const sbc_result *r) {
  if (r->error_message) return r->error_message;
  for (size_t i = 0; i < r->n_steps; i++)
    if (!strcmp(r->steps[i].status, SBP_STATUS_INTERNAL_ERROR) && r->steps[i].error) return r->steps[i].error;
  const sbc_step *last = sbc_result_last_step(r);
  return last ? last->error : NULL;
}
