/* Function-call results compared as Python's == compares what json.loads
 * gives, with floats within tolerance (judge.h). */
#include "judge.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static bool is_number(json_type t) { return t == json_type_int || t == json_type_double || t == json_type_boolean; }

static void path_say(char *why, size_t why_len, const char *path, const char *what) {
  if (why && why_len && !why[0]) snprintf(why, why_len, "%s%s%s", path[0] ? path : "the value", path[0] ? ": " : ": ", what);
}

static bool numbers_equal(const sbj_compare *c, json_object *e, json_object *a) {
  json_type te = json_object_get_type(e), ta = json_object_get_type(a);
  if (te != json_type_double && ta != json_type_double)
    return json_object_get_int64(e) == json_object_get_int64(a); /* ints and bools: exact */
  double ev = json_object_get_double(e), av = json_object_get_double(a);
  if (ev == av) return true;
  if (isnan(ev) || isnan(av) || isinf(ev) || isinf(av)) return false;
  double d = fabs(ev - av);
  return d <= c->abs_tol || d <= c->rel_tol * fabs(ev);
}

static bool equal_at(const sbj_compare *c, json_object *e, json_object *a, char *path, size_t path_len, char *why,
                     size_t why_len, int depth) {
  if (depth > 200) {
    path_say(why, why_len, path, "nested deeper than 200");
    return false;
  }
  json_type te = json_object_get_type(e), ta = json_object_get_type(a);
  if (is_number(te) && is_number(ta)) {
    if (numbers_equal(c, e, a)) return true;
    char m[96];
    snprintf(m, sizeof m, "expected %.17g, got %.17g", json_object_get_double(e), json_object_get_double(a));
    path_say(why, why_len, path, m);
    return false;
  }
  if (te != ta) {
    char m[96];
    snprintf(m, sizeof m, "expected %s, got %s", json_type_to_name(te), json_type_to_name(ta));
    path_say(why, why_len, path, m);
    return false;
  }
  size_t used = strlen(path);
  switch (te) {
  case json_type_null: return true;
  case json_type_string: {
    int el = json_object_get_string_len(e), al = json_object_get_string_len(a);
    if (el == al && memcmp(json_object_get_string(e), json_object_get_string(a), (size_t)el) == 0) return true;
    path_say(why, why_len, path, "the strings differ");
    return false;
  }
  case json_type_array: {
    size_t n = json_object_array_length(e), m = json_object_array_length(a);
    if (n != m) {
      char msg[96];
      snprintf(msg, sizeof msg, "expected %zu items, got %zu", n, m);
      path_say(why, why_len, path, msg);
      return false;
    }
    for (size_t i = 0; i < n; i++) {
      snprintf(path + used, path_len - used, "[%zu]", i);
      bool ok = equal_at(c, json_object_array_get_idx(e, i), json_object_array_get_idx(a, i), path, path_len, why,
                         why_len, depth + 1);
      path[used] = 0;
      if (!ok) return false;
    }
    return true;
  }
  case json_type_object: {
    if (json_object_object_length(e) != json_object_object_length(a)) {
      path_say(why, why_len, path, "the keys differ");
      return false;
    }
    json_object_object_foreach(e, key, ev) {
      json_object *av;
      if (!json_object_object_get_ex(a, key, &av)) {
        char msg[96];
        snprintf(msg, sizeof msg, "key \"%.40s\" missing", key);
        path_say(why, why_len, path, msg);
        return false;
      }
      snprintf(path + used, path_len - used, "[\"%.40s\"]", key);
      bool ok = equal_at(c, ev, av, path, path_len, why, why_len, depth + 1);
      path[used] = 0;
      if (!ok) return false;
    }
    return true;
  }
  default: return false;
  }
}

bool sbj_json_equal(const sbj_compare *c, json_object *expected, json_object *actual, char *why, size_t why_len) {
  char path[256] = "";
  if (why && why_len) why[0] = 0;
  if (!expected || !actual) { /* json-c's NULL is JSON null */
    if (!expected && !actual) return true;
    path_say(why, why_len, path, expected ? "expected a value, got null" : "expected null, got a value");
    return false;
  }
  return equal_at(c, expected, actual, path, sizeof path, why, why_len, 0);
}
