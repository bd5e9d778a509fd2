/* The CRUXEval adapter: which generations run, and the program each runs as.
 * Every byte of a generation is hostile: it only ever becomes the text of a
 * program run in the sandbox; lengths, not strlen (a generation may hold
 * "\u0000"). */
#include "cruxeval.h"
#include "protocol.h"

#include <stdlib.h>
#include <string.h>

bool sbx_keeps(sbx_mode m, const sbx_sample *s, const char *g, size_t g_len) {
  if (m == SBX_INPUT) return memmem(g, g_len, "f(", 2) != NULL;
  /* output mode: a generation that contains the call f(<input>) is dropped */
  size_t call_len = s->input_len + 3;
  char *call = malloc(call_len);
  memcpy(call, "f(", 2);
  memcpy(call + 2, s->input, s->input_len);
  call[call_len - 1] = ')';
  bool found = memmem(g, g_len, call, call_len) != NULL;
  free(call);
  return !found;
}

char *sbx_program(const sbx_sample *s, const char *g, size_t g_len, size_t *len) {
  static const char mid[] = "\nassert ", eq[] = " == ";
  *len = s->code_len + (sizeof mid - 1) + s->output_len + (sizeof eq - 1) + g_len;
  char *p = malloc(*len + 1), *w = p;
  memcpy(w, s->code, s->code_len), w += s->code_len;
  memcpy(w, mid, sizeof mid - 1), w += sizeof mid - 1;
  memcpy(w, s->output, s->output_len), w += s->output_len;
  memcpy(w, eq, sizeof eq - 1), w += sizeof eq - 1;
  memcpy(w, g, g_len), w += g_len;
  *w = '\0';
  return p;
}

/* A fresh /usr/bin/python3 per program, 3 s of wall time as upstream. */
json_object *sbx_request(const char *prog, size_t len) {
  json_object *req = json_object_new_object(), *files = json_object_new_array(), *file = json_object_new_object();
  json_object_object_add(req, "type", json_object_new_string("exec"));
  json_object_object_add(file, "path", json_object_new_string("prog.py"));
  json_object_object_add(file, "content", json_object_new_string_len(prog, (int)len));
  json_object_array_add(files, file);
  json_object_object_add(req, "files", files);
  json_object *steps = json_object_new_array(), *step = json_object_new_object(), *argv = json_object_new_array(),
              *limits = json_object_new_object();
  json_object_object_add(step, "name", json_object_new_string("run"));
  json_object_array_add(argv, json_object_new_string("/usr/bin/python3"));
  json_object_array_add(argv, json_object_new_string("prog.py"));
  json_object_object_add(step, "argv", argv);
  json_object_object_add(limits, "time_s", json_object_new_int(3));
  json_object_object_add(step, "limits", limits);
  json_object_array_add(steps, step);
  json_object_object_add(req, "steps", steps);
  return req;
}

int sbx_verdict(const sbc_result *r) {
  if (r->is_error) return -1;
  const char *st = r->status;
  if (!st || !strcmp(st, SBP_STATUS_INTERNAL_ERROR) || !strcmp(st, SBP_STATUS_CANCELLED)) return -1;
  /* ok: exit 0. Any other end (an exception, the 3 s limit, memory, a
   * crash) fails the generation, as upstream. */
  return !strcmp(st, "ok");
}
