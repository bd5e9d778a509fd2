/* common/json_seconds.c: durations to their resolution, given numbers as given. */
#include "../check.h"
#include "json_seconds.h"

#include <string.h>

static int text_is(json_object *o, const char *want) {
  int ok = strcmp(json_object_to_json_string(o), want) == 0;
  if (!ok) fprintf(stderr, "got %s, want %s\n", json_object_to_json_string(o), want);
  json_object_put(o);
  return ok;
}

int main(void) {
  CHECK(sbu_resolution_digits(1e-6) == 6);
  CHECK(sbu_resolution_digits(1e-9) == 9);
  CHECK(sbu_resolution_digits(0.01) == 2); /* 100 Hz clock ticks */
  CHECK(sbu_resolution_digits(1.0 / 250) == 3);
  CHECK(sbu_resolution_digits(0) == 6);
  CHECK(text_is(sbu_json_seconds(1.8330000000000001e-06), "0.000002"));
  CHECK(text_is(sbu_json_seconds(0.0012345678), "0.001235"));
  CHECK(text_is(sbu_json_seconds(0), "0.000000"));
  CHECK(text_is(sbu_json_seconds_at(0.349999, 2), "0.35"));
  json_object *o = sbu_json_seconds(0.0012345678);
  CHECK(json_object_get_double(o) == 0.001235); /* the value is the rounding too */
  json_object_put(o);
  CHECK(text_is(sbu_json_number(0.3), "0.3"));
  CHECK(text_is(sbu_json_number(30), "30.0"));
  CHECK(text_is(sbu_json_number(2.5), "2.5"));
  CHECK(text_is(sbu_json_number(1e20), "1e+20"));
  CHECK(text_is(sbu_json_number(0.1 + 0.2), "0.30000000000000004"));
  return check_exit();
}
