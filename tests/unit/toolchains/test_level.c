/* toolchains/level.c and the parts of a toolchain file this wave added:
 * "language_level" in its four forms, "libraries" and "rename.fallback",
 * read from hand-written files and expanded without detection. */
#include "check.h"
#include "toolchain.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *FILES[][2] = {
    {"a.json", "{\"name\":\"cxx\",\"language\":\"cpp\",\"binaries\":[{\"path\":\"/x\",\"name\":\"cxx\"}],"
               "\"version\":{\"argv\":[\"{bin}\"],\"regex\":\"(.*)\"},\"sources\":[\".cpp\"],\"default_source\":\"t.cpp\","
               "\"options\":{\"std\":{\"flag\":\"-std={value}\",\"default\":\"c++11\","
               "\"values\":[\"c++98\",\"c++11\",\"c++17\",\"c++23\",\"gnu++98\",\"gnu++11\",\"gnu++17\",\"gnu++23\"]}},"
               "\"language_level\":{\"option\":\"std\"},\"run\":[\"./t\"]}"},
    {"b.json", "{\"name\":\"jv\",\"language\":\"java\",\"binaries\":[{\"path\":\"/x\",\"name\":\"jv\"}],"
               "\"version\":{\"argv\":[\"{bin}\"],\"regex\":\"(.*)\"},\"sources\":[\".java\"],\"default_source\":\"Main.java\","
               "\"rename\":{\"regex\":\"public[ ]+class[ ]+([A-Za-z_]+)\",\"to\":\"{1}.java\","
               "\"fallback\":{\"regex\":\"class[ \\t\\n]+([A-Za-z_][A-Za-z0-9_]*)\",\"last_before\":\"static[ ]+void[ ]+main\"}},"
               "\"libraries\":{\"join\":\":\",\"paths\":[\"/usr/share/java/x.jar\"]},"
               "\"language_level\":{\"regex\":\"^(1\\\\.)?([0-9]+)\",\"group\":2,\"format\":\"Java {1}\"},"
               "\"compile\":[\"javac\",\"-cp\",\"/app{libraries}\",\"/app/{main}\"],\"run\":[\"java\",\"{main_stem}\"]}"},
    {"c.json", "{\"name\":\"cs\",\"language\":\"csharp\",\"binaries\":[{\"path\":\"/x\",\"name\":\"cs\"}],"
               "\"version\":{\"argv\":[\"{bin}\"],\"regex\":\"(.*)\"},\"sources\":[\".cs\"],\"default_source\":\"m.cs\","
               "\"language_level\":{\"argv\":[\"{bin}\",\"-langversion:?\"],\"regex\":\"to ([0-9.]+)\",\"format\":\"C# {1}\"},"
               "\"run\":[\"mono\"]}"},
    {"d.json", "{\"name\":\"mk\",\"language\":\"cpp\",\"binaries\":[{\"path\":\"/x\",\"name\":\"mk\"}],"
               "\"version\":{\"argv\":[\"{bin}\"],\"regex\":\"(.*)\"},\"sources\":[\"Makefile\"],\"default_source\":\"Makefile\","
               "\"run\":[\"make\"]}"},
};

static sbt_toolchain make_tc(const sbt_def *d, const char *version, bool *ok_flat) {
  sbt_toolchain t = {0};
  t.name = d->name;
  t.def = d;
  t.bin = t.bin_real = "/x";
  t.bin_dir = "/";
  t.version = (char *)version;
  t.value_ok = calloc(d->n_options + 1, sizeof *t.value_ok);
  for (size_t o = 0; o < d->n_options; o++) {
    t.value_ok[o] = calloc(d->options[o].n_values + 1, sizeof(bool));
    for (size_t k = 0; k < d->options[o].n_values; k++) t.value_ok[o][k] = ok_flat ? ok_flat[k] : true;
  }
  return t;
}

static void free_tc(sbt_toolchain *t) {
  for (size_t o = 0; o < t->def->n_options; o++) free(t->value_ok[o]);
  free(t->value_ok);
}

static const char *main_of(const sbt_toolchain *t, const char *src) {
  static char out[256];
  sbt_file f = {"Main.java", (const unsigned char *)src, strlen(src)};
  sbt_plan p;
  char err[SBT_ERR_MAX];
  if (sbt_plan_make(t, NULL, &f, 1, NULL, NULL, &p, err) != SBT_OK) return "(plan failed)";
  snprintf(out, sizeof out, "%s | %s %s %s %s", p.main_path, p.steps[0].argv[0], p.steps[0].argv[1], p.steps[0].argv[2],
           p.steps[1].argv[1]);
  sbt_plan_free(&p);
  return out;
}

int main(void) {
  char dir[] = "/tmp/sbt-level-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, FILES[i][0]);
    FILE *f = fopen(path, "w");
    fputs(FILES[i][1], f);
    fclose(f);
  }
  sbt_registry r;
  char err[SBT_ERR_MAX] = "";
  int rc = sbt_registry_load(&r, dir, err);
  CHECK(rc == 0);
  if (rc) fprintf(stderr, "load: %s\n", err);
  if (rc == 0 && r.n_defs == 4) {
    /* option runs, per dialect */
    bool ok[] = {true, true, true, false, true, true, true, false};
    sbt_toolchain t = make_tc(&r.defs[0], "11.3.0", ok);
    char *l = sbt_level(&t);
    CHECK_STR(l, "c++98..c++17, gnu++98..gnu++17");
    free(l);
    for (size_t k = 0; k < 8; k++) t.value_ok[0][k] = true; /* a dialect ends a run */
    l = sbt_level(&t);
    CHECK_STR(l, "c++98..c++23, gnu++98..gnu++23");
    free(l);
    for (size_t k = 0; k < 8; k++) t.value_ok[0][k] = ok[k];
    t.value_ok[0][1] = false; /* a hole splits a run */
    l = sbt_level(&t);
    CHECK_STR(l, "c++98, c++17, gnu++98..gnu++17");
    free(l);
    free_tc(&t);
    /* regex group over the version, formatted */
    t = make_tc(&r.defs[1], "17.0.21.1", NULL);
    l = sbt_level(&t);
    CHECK_STR(l, "Java 17");
    free(l);
    t.version = "1.8.0_392";
    l = sbt_level(&t);
    CHECK_STR(l, "Java 8");
    free(l);
    /* libraries: found ones after the join string; none: nothing */
    t.libraries = ":/usr/share/java/x.jar";
    CHECK_STR(main_of(&t, "public class Hello { public static void main(String[] a){} }"),
              "Hello.java | javac -cp /app:/usr/share/java/x.jar Hello");
    t.libraries = NULL;
    /* no public class: the class declared last before main (MultiPL-E) */
    CHECK_STR(main_of(&t, "import java.util.*;\nclass Pair2 {}\nclass Problem {\n  public static void main(String[] a){}\n}\nclass After {}\n"),
              "Problem.java | javac -cp /app Problem");
    /* no main either: the name stays */
    CHECK_STR(main_of(&t, "class A {}\n"), "Main.java | javac -cp /app Main");
    free_tc(&t);
    /* what an argv printed at detection */
    t = make_tc(&r.defs[2], "6.8.0.105", NULL);
    CHECK(sbt_level(&t) == NULL); /* detection found nothing */
    t.level_raw = "7.2";
    l = sbt_level(&t);
    CHECK_STR(l, "C# 7.2");
    free(l);
    free_tc(&t);
    /* a file that does not say */
    t = make_tc(&r.defs[3], "4.3", NULL);
    CHECK(sbt_level(&t) == NULL);
    free_tc(&t);
  }
  CHECK(r.n_defs == 4);
  sbt_registry_free(&r);
  /* mistakes are refused with the field named */
  char path[256];
  snprintf(path, sizeof path, "%s/a.json", dir);
  FILE *f = fopen(path, "w");
  fputs("{\"name\":\"x\",\"language\":\"c\",\"binaries\":[{\"path\":\"/x\",\"name\":\"x\"}],\"version\":{\"argv\":[\"x\"],"
        "\"regex\":\"(.*)\"},\"sources\":[\".c\"],\"default_source\":\"a.c\",\"language_level\":{\"option\":\"nope\",\"format\":\"C {1}\"},"
        "\"run\":[\"x\"]}",
        f);
  fclose(f);
  CHECK(sbt_registry_load(&r, dir, err) != 0 && strstr(err, "language_level"));
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
  return check_exit();
}
