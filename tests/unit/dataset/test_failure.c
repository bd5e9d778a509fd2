/* dataset/failure.c on hand-written answers, typed as the pump hands them
 * over: which are failures of surgebox (for every benchmark, and for batch
 * whose requests are the user's own) and the text that names them. */
#include "check.h"
#include "failure.h"

#include <string.h>

static char why[512];

static bool failure(const char *answer, bool request) {
  json_object *o = json_tokener_parse(answer);
  sbc_result r;
  sbc_result_of(o, &r);
  json_object_put(o);
  why[0] = '\0';
  bool f = request ? sbr_failure_of_request(&r, why, sizeof why) : sbr_failure_of(&r, why, sizeof why);
  sbc_result_free(&r);
  return f;
}

int main(void) {
  /* the program's own outcomes, whatever they are */
  CHECK(!failure("{\"id\":\"1\",\"type\":\"exec\",\"status\":\"ok\",\"steps\":[]}", false));
  CHECK(!failure("{\"id\":\"1\",\"type\":\"exec\",\"status\":\"compile_error\",\"steps\":[{\"name\":\"compile\","
                 "\"status\":\"runtime_error\",\"error\":\"not this\"}]}",
                 false));
  CHECK(!failure("{\"id\":\"1\",\"type\":\"exec\",\"status\":\"unsupported\",\"steps\":[]}", false));
  CHECK(!failure("{\"id\":\"1\",\"type\":\"exec\",\"status\":\"timeout\",\"steps\":[]}", true));
  CHECK_STR(why, "");

  /* the sandbox failed: the response's error, else the first step's that has one */
  CHECK(failure("{\"id\":\"1\",\"type\":\"exec\",\"status\":\"internal_error\",\"steps\":[{\"name\":\"compile\","
                "\"status\":\"ok\"},{\"name\":\"run\",\"status\":\"internal_error\",\"error\":\"move_mount /app: "
                "No such file or directory\"},{\"name\":\"x\",\"error\":\"later\"}]}",
                false));
  CHECK_STR(why, "internal_error: move_mount /app: No such file or directory");
  CHECK(failure("{\"id\":\"1\",\"type\":\"exec\",\"status\":\"toolchain_missing\",\"steps\":[],"
                "\"error\":\"g++-9 is not installed here\"}",
                true));
  CHECK_STR(why, "toolchain_missing: g++-9 is not installed here");
  CHECK(failure("{\"id\":\"1\",\"type\":\"exec\",\"status\":\"internal_error\",\"steps\":[]}", false));
  CHECK_STR(why, "internal_error: (no error text)");

  /* a daemon's error answer: a failure for a benchmark; for batch only when
   * the daemon, not the user's request, is at fault */
  const char *bad = "{\"id\":\"1\",\"type\":\"error\",\"error\":{\"code\":\"bad_request\",\"message\":\"steps is required\"}}";
  CHECK(failure(bad, false));
  CHECK_STR(why, "bad_request: steps is required");
  CHECK(!failure(bad, true));
  CHECK(failure("{\"id\":\"1\",\"type\":\"error\",\"error\":{\"code\":\"internal\",\"message\":\"fork: EAGAIN\"}}", true));
  CHECK_STR(why, "internal: fork: EAGAIN");
  /* an answer that cannot be read is never a program's outcome */
  CHECK(failure("{\"id\":\"1\",\"type\":\"exec\",\"steps\":[]}", true));
  CHECK_STR(why, "bad_response: the daemon's answer cannot be read: an exec response without a status");

  /* the connection was lost */
  CHECK(sbr_failure_of(NULL, why, sizeof why));
  CHECK_STR(why, "lost: the connection to the daemon ended");
  CHECK(sbr_failure_of_request(NULL, NULL, 0));

  sbr_failures f = {0};
  sbr_failures_add(&f, "internal_error: a");
  sbr_failures_add(&f, "internal_error: b");
  CHECK(f.count == 2);
  CHECK_STR(f.first, "internal_error: a");
  return check_exit();
}
