/* A toolchain file's "limits" read as a request's are (issue 21): every key
 * the protocol takes, output_bytes included, and the same caps. Hand-written
 * files and values; only the registry loader and the planner are used, so
 * this also builds against a tree from before the change (where it fails:
 * output_bytes was dropped and the caps were not checked). */
#include "check.h"
#include "toolchain.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEAD                                                                                                      \
  "{\"name\":\"t\",\"language\":\"c\",\"binaries\":[{\"path\":\"/x\",\"name\":\"t\"}],"                          \
  "\"version\":{\"argv\":[\"{bin}\"],\"regex\":\"(.*)\"},\"sources\":[\".c\"],\"default_source\":\"t.c\","      \
  "\"compile\":[\"cc\",\"{main}\"],\"run\":[\"./a.out\"]"

/* Loads one file holding text into a fresh directory: the loader's status, its message in err. */
static int load_one(const char *text, sbt_registry *r, char err[SBT_ERR_MAX]) {
  char dir[] = "/tmp/sbt-limits-XXXXXX", path[256];
  if (!mkdtemp(dir)) return -99;
  snprintf(path, sizeof path, "%s/t.json", dir);
  FILE *f = fopen(path, "w");
  if (!f) return -99;
  fputs(text, f);
  fclose(f);
  err[0] = '\0';
  int rc = sbt_registry_load(r, dir, err);
  unlink(path);
  rmdir(dir);
  return rc;
}

/* The file is refused and the message names the key and why. */
static void refused(const char *limits, const char *key, const char *why) {
  char text[1024], err[SBT_ERR_MAX];
  snprintf(text, sizeof text, HEAD ",\"limits\":%s}", limits);
  sbt_registry r;
  int rc = load_one(text, &r, err);
  CHECK(rc == -1);
  if (rc == 0) {
    fprintf(stderr, "  accepted: %s\n", limits);
    sbt_registry_free(&r);
    return;
  }
  if (!strstr(err, key) || !strstr(err, why)) fprintf(stderr, "  %s: %s\n", limits, err);
  CHECK(strstr(err, key) != NULL);
  CHECK(strstr(err, why) != NULL);
}

int main(void) {
  sbt_registry r;
  char err[SBT_ERR_MAX];
  int rc = load_one(HEAD ",\"limits\":{\"compile\":{\"memory_mib\":3000,\"time_s\":90},"
                         "\"run\":{\"output_bytes\":4096,\"pids\":77,\"cpu_time_s\":2.5}}}",
                    &r, err);
  CHECK(rc == 0);
  if (rc) fprintf(stderr, "load: %s\n", err);
  if (rc == 0 && r.n_defs == 1) {
    CHECK(r.defs[0].run_limits.has_output_bytes && r.defs[0].run_limits.output_bytes == 4096);
    sbt_toolchain t = {.name = "t", .def = &r.defs[0], .bin = "/x", .bin_real = "/x", .bin_dir = "/", .version = "1"};
    bool *none = NULL;
    t.value_ok = &none;
    sbt_file f = {"t.c", (const unsigned char *)"int main(){}", 12};
    sbt_plan p;
    CHECK(sbt_plan_make(&t, NULL, &f, 1, NULL, NULL, &p, err) == SBT_OK);
    CHECK(p.n_steps == 2);
    const sb_limits *c = &p.steps[0].limits, *run = &p.steps[1].limits;
    /* compile: the file's memory and time (time_s alone sets the CPU limit too), defaults for the rest */
    CHECK(c->memory_mib == 3000);
    CHECK_NEAR(c->wall_time_s, 90, 0);
    CHECK_NEAR(c->cpu_time_s, 90, 0);
    CHECK(c->pids == 128);
    CHECK(c->output_bytes == 8388608);
    /* run: the file's output_bytes, pids and CPU time; the default wall time and memory */
    CHECK(run->output_bytes == 4096);
    CHECK(run->pids == 77);
    CHECK_NEAR(run->cpu_time_s, 2.5, 0);
    CHECK_NEAR(run->wall_time_s, 30, 0);
    CHECK(run->memory_mib == 2048);
    sbt_plan_free(&p);
    sbt_registry_free(&r);
  }
  /* the protocol's caps (SBP_LIMIT_MAX_*: one day, 1 TiB of memory, PID_MAX_LIMIT, 1 TiB of output) */
  refused("{\"run\":{\"memory_mib\":1048577}}", "memory_mib", "absurd");
  refused("{\"compile\":{\"pids\":4194305}}", "pids", "absurd");
  refused("{\"run\":{\"output_bytes\":1099511627777}}", "output_bytes", "absurd");
  refused("{\"run\":{\"time_s\":86401}}", "time_s", "absurd");
  refused("{\"compile\":{\"cpu_time_s\":1e9}}", "cpu_time_s", "absurd");
  /* the protocol's types and signs */
  refused("{\"run\":{\"output_bytes\":0}}", "output_bytes", "greater than 0");
  refused("{\"run\":{\"pids\":2.5}}", "pids", "whole number");
  refused("{\"run\":{\"time_s\":\"ten\"}}", "time_s", "number of seconds");
  /* a misspelt key is refused, not ignored */
  refused("{\"run\":{\"memory\":512}}", "memory", "unknown field");
  refused("{\"runs\":{\"pids\":5}}", "limits", "\"run\"");
  return check_exit();
}
