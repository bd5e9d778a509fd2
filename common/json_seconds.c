/* Durations in JSON, rounded to what was measured (json_seconds.h). */
#include "json_seconds.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sbu_resolution_digits(double resolution_s) {
  if (!(resolution_s > 0)) return 6;
  int d = (int)ceil(-log10(resolution_s) - 1e-9);
  return d < 0 ? 0 : d > 9 ? 9 : d;
}

json_object *sbu_json_seconds_at(double s, int digits) {
  char text[48];
  if (digits < 0) digits = 0;
  if (digits > 9) digits = 9;
  snprintf(text, sizeof text, "%.*f", digits, isfinite(s) ? s : 0.0);
  return json_object_new_double_s(strtod(text, NULL), text);
}

json_object *sbu_json_seconds(double s) { return sbu_json_seconds_at(s, 6); }

json_object *sbu_json_number(double v) {
  if (!isfinite(v)) return json_object_new_double(v);
  char text[48];
  bool plain = v == 0 || (fabs(v) >= 1e-4 && fabs(v) < 1e15); /* 0.3, 30.0: no exponent */
  for (int prec = plain ? 0 : 1; prec <= (plain ? 24 : 17); prec++) {
    snprintf(text, sizeof text, plain ? "%.*f" : "%.*g", prec, v);
    if (strtod(text, NULL) == v) break;
  }
  if (!strpbrk(text, ".e")) strcat(text, ".0");
  return json_object_new_double_s(v, text);
}
