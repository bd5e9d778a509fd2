/* The uid range: parsing "FIRST-LAST" and refusing ranges that meet an
 * account, a group or a subordinate-id range (fake etc files written here). */
#include "check.h"
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static void test_parse(void) {
  uid_t first = 0;
  uint32_t count = 0;
  CHECK(sb_uid_range_parse("100-199", &first, &count) == 0 && first == 100 && count == 100);
  CHECK(sb_uid_range_parse("1879048192-1879052287", &first, &count) == 0 && first == 1879048192u && count == 4096);
  CHECK(sb_uid_range_parse("7-7", &first, &count) == 0 && first == 7 && count == 1);
  static const char *const bad[] = {"", "5", "9-3", "-3-4", "a-b", "1-2x", "1 -2", "1-4294967295", "1--2", NULL};
  for (const char *const *b = bad; *b; b++) CHECK(sb_uid_range_parse(*b, &first, &count) == -EINVAL);
}

static void put(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
}

static void test_check(void) {
  char dir[] = "/tmp/sbtest-uids-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  put(dir, "passwd", "root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n\nbroken-line\n");
  put(dir, "group", "root:x:0:\nbuilders:x:2000:\n");
  put(dir, "subuid", "alice:100000:65536\n");
  put(dir, "subgid", "alice:300000:10\n");
  char err[SB_ERR_MAX] = "";
  CHECK(sb_uid_range_check(1000, 10, dir, err) == -EEXIST);
  CHECK(strstr(err, "alice") != NULL && strstr(err, "1000") != NULL);
  CHECK(sb_uid_range_check(1990, 11, dir, err) == -EEXIST && strstr(err, "builders") != NULL);
  CHECK(sb_uid_range_check(1990, 10, dir, err) == 0); /* 1990-1999 meets nothing */
  CHECK(sb_uid_range_check(165535, 6, dir, err) == -EEXIST && strstr(err, "100000-165535") != NULL);
  CHECK(sb_uid_range_check(165536, 100, dir, err) == 0);
  CHECK(sb_uid_range_check(300009, 1, dir, err) == -EEXIST && strstr(err, "subgid") != NULL);
  CHECK(sb_uid_range_check(0, 10, dir, err) == -EINVAL);           /* root */
  CHECK(sb_uid_range_check(65530, 10, dir, err) == -EINVAL);       /* nobody */
  CHECK(sb_uid_range_check(2147483647u, 2, dir, err) == -EINVAL);  /* reaches 2^31 */
  CHECK(sb_uid_range_check(5000, 0, dir, err) == -EINVAL);         /* empty */
  sb_runtime_options o;
  sb_runtime_options_default(&o);
  CHECK(o.uid_first == 1879048192u && o.uid_count == 4096);
  CHECK(sb_uid_range_check(o.uid_first, o.uid_count, dir, err) == 0);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
}

int main(void) {
  test_parse();
  test_check();
  return check_exit();
}
