/* dataset/shard.c: --shard parsing (I/N and auto from the schedulers'
 * variables), the keys, the longest-processing-time assignment. Expected
 * values worked out by hand (keys: Python's hashlib). */
#include "check.h"
#include "shard.h"

#include <stdlib.h>
#include <string.h>

static void clear_env(void) {
  const char *v[] = {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_STEP",
                     "JOB_COMPLETION_INDEX", "SURGEBOX_SHARDS"};
  for (size_t i = 0; i < sizeof v / sizeof *v; i++) unsetenv(v[i]);
}

static int parse(const char *arg, unsigned shards, sbr_shard *s) {
  char err[256];
  return sbr_shard_parse(arg, shards, s, err, sizeof err);
}

static void test_parse(void) {
  sbr_shard s;
  CHECK(parse("2/4", 0, &s) == 0 && s.index == 2 && s.count == 4);
  CHECK(parse("0/1", 0, &s) == 0 && s.index == 0 && s.count == 1);
  CHECK(parse("4/4", 0, &s) < 0);
  CHECK(parse("0/0", 0, &s) < 0);
  CHECK(parse("-1/4", 0, &s) < 0);
  CHECK(parse("1/4x", 0, &s) < 0);
  CHECK(parse("1", 0, &s) < 0);
  CHECK(parse("/4", 0, &s) < 0);
  CHECK(parse("1/4", 3, &s) < 0); /* disagrees with --shards */
  CHECK(parse("1/4", 4, &s) == 0);
}

static void test_auto(void) {
  sbr_shard s;
  clear_env();
  CHECK(parse("auto", 0, &s) < 0); /* no scheduler */
  setenv("SLURM_ARRAY_TASK_ID", "3", 1);
  setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
  setenv("SLURM_ARRAY_TASK_MIN", "0", 1);
  CHECK(parse("auto", 0, &s) == 0 && s.index == 3 && s.count == 4);
  CHECK(parse("auto", 8, &s) < 0); /* --shards disagrees with the array */
  /* --array=1-4: task ids 1..4 are shards 0..3 */
  setenv("SLURM_ARRAY_TASK_ID", "1", 1);
  setenv("SLURM_ARRAY_TASK_MIN", "1", 1);
  CHECK(parse("auto", 0, &s) == 0 && s.index == 0 && s.count == 4);
  /* --array=10-16:2: ids 10,12,14,16 */
  setenv("SLURM_ARRAY_TASK_ID", "14", 1);
  setenv("SLURM_ARRAY_TASK_MIN", "10", 1);
  setenv("SLURM_ARRAY_TASK_STEP", "2", 1);
  CHECK(parse("auto", 0, &s) == 0 && s.index == 2 && s.count == 4);
  setenv("SLURM_ARRAY_TASK_ID", "13", 1);
  CHECK(parse("auto", 0, &s) < 0); /* not on the step */
  clear_env();
  setenv("JOB_COMPLETION_INDEX", "5", 1);
  CHECK(parse("auto", 0, &s) < 0); /* N unknown */
  CHECK(parse("auto", 8, &s) == 0 && s.index == 5 && s.count == 8);
  setenv("SURGEBOX_SHARDS", "6", 1);
  CHECK(parse("auto", 0, &s) == 0 && s.index == 5 && s.count == 6);
  setenv("SURGEBOX_SHARDS", "5", 1);
  CHECK(parse("auto", 0, &s) < 0); /* index 5 of 5 */
  clear_env();
}

static void test_key(void) {
  /* hashlib.sha256(b"tc\0{}").hexdigest()[:16] */
  CHECK(sbr_shard_key("tc", 2, "{}", 2) == 0x435d5c87e7367f4eULL);
  CHECK(sbr_shard_key("t", 1, "c{}", 3) != sbr_shard_key("tc", 2, "{}", 2));
  char hex[65];
  sbu_sha256_hex("abc", 3, hex);
  CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_assign(void) {
  /* LPT by hand: A5 -> 0, B4 -> 1, C3 -> 1 (7), D3 -> 0 (8), E2 -> 1 (9), F1 -> 0 (9) */
  sbr_shard_item it[] = {{1, 5}, {2, 4}, {4, 3}, {3, 3}, {5, 2}, {6, 1}};
  unsigned owner[6];
  double load[2];
  sbr_shard_assign(it, 6, 2, owner, load);
  unsigned want[] = {0, 1, 0, 1, 1, 0}; /* it[2] has key 4 (D), it[3] key 3 (C) */
  for (int i = 0; i < 6; i++) CHECK(owner[i] == want[i]);
  CHECK_NEAR(load[0], 9, 1e-9);
  CHECK_NEAR(load[1], 9, 1e-9);
  /* equal costs: round robin in key order, position does not matter */
  sbr_shard_item eq[] = {{40, 1}, {10, 1}, {30, 1}, {20, 1}};
  unsigned o2[4];
  sbr_shard_assign(eq, 4, 2, o2, NULL);
  CHECK(o2[1] == 0 && o2[3] == 1 && o2[2] == 0 && o2[0] == 1);
  sbr_shard_item eq2[] = {{20, 1}, {30, 1}, {10, 1}, {40, 1}}; /* same items, other order */
  sbr_shard_assign(eq2, 4, 2, o2, NULL);
  CHECK(o2[2] == 0 && o2[0] == 1 && o2[1] == 0 && o2[3] == 1);
  /* more shards than items: the rest stay empty */
  sbr_shard_item one[] = {{7, 2}};
  double l3[3];
  sbr_shard_assign(one, 1, 3, o2, l3);
  CHECK(o2[0] == 0 && l3[0] == 2 && l3[1] == 0 && l3[2] == 0);
}

int main(void) {
  test_parse();
  test_auto();
  test_key();
  test_assign();
  return check_exit();
}
