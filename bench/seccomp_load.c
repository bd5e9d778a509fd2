/* bench_seccomp_load: what loading the jobs' seccomp filter costs (every
 * job, cold and warm, loads it once), against a one-instruction filter
 * loaded the same way in the same run.
 *
 *   bench_seccomp_load [--loads N] [--rounds R] [--out FILE]
 *
 * Each load happens in a fresh child (filters stack, and a job's process
 * loads one), timed around the prctl alone; the rounds alternate the two
 * filters. Most of a load is the kernel's seccomp_cache_prepare, which
 * emulates the filter for every syscall number (runners/seccomp.c says why
 * the filter is a binary tree). Prints µs per load and the ratio; asserts
 * nothing. */
#include "common.h"
#include "../runners/internal.h" /* sb_seccomp_build: the filter every job loads */

#include <getopt.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* µs of one load of prog in a fresh child; < 0 on failure */
static double one_load(const struct sock_fprog *prog) {
  int p[2];
  if (pipe(p) < 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    double dt = -1;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) {
      double t0 = sbu_now_s();
      if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) == 0) dt = (sbu_now_s() - t0) * 1e6;
    }
    _exit(write(p[1], &dt, sizeof dt) == (ssize_t)sizeof dt ? 0 : 1);
  }
  close(p[1]);
  double dt = -1;
  if (pid < 0 || read(p[0], &dt, sizeof dt) != (ssize_t)sizeof dt) dt = -1;
  close(p[0]);
  if (pid > 0) waitpid(pid, NULL, 0);
  return dt;
}

int main(int argc, char **argv) {
  int loads = 500, rounds = 6;
  const char *out = NULL;
  static const struct option opts[] = {
      {"loads", required_argument, NULL, 'n'}, {"rounds", required_argument, NULL, 'r'}, {"out", required_argument, NULL, 'o'}, {0}};
  for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
    if (c == 'n') loads = atoi(optarg);
    else if (c == 'r') rounds = atoi(optarg);
    else if (c == 'o') out = optarg;
    else {
      fprintf(stderr, "usage: bench_seccomp_load [--loads N] [--rounds R] [--out FILE]\n");
      return 2;
    }
  }
  if (loads < 1 || rounds < 1) {
    fprintf(stderr, "bench_seccomp_load: --loads and --rounds must be at least 1\n");
    return 2;
  }
  sb_bpf job;
  char err[SB_ERR_MAX];
  if (sb_seccomp_build(NULL, NULL, NULL, &job, err) < 0) {
    fprintf(stderr, "bench_seccomp_load: %s\n", err);
    return 1;
  }
  struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  const struct sock_fprog progs[2] = {{.len = 1, .filter = allow}, {.len = (unsigned short)job.len, .filter = job.insns}};
  const char *names[2] = {"one_instruction", "job_filter"};
  bc_vec us[2] = {{0}}, ratio = {0};
  for (int r = 0; r < rounds; r++) {
    double mean[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
      int which = (r + k) % 2; /* order alternated from round to round */
      double sum = 0;
      for (int i = 0; i < loads; i++) {
        double dt = one_load(&progs[which]);
        if (dt < 0) {
          fprintf(stderr, "bench_seccomp_load: a load of the %s failed\n", names[which]);
          return 1;
        }
        sum += dt;
      }
      mean[which] = sum / loads;
      bc_vec_push(&us[which], mean[which]);
    }
    bc_vec_push(&ratio, mean[1] / mean[0]);
  }
  json_object *doc = json_object_new_object();
  json_object_object_add(doc, "benchmark", json_object_new_string("seccomp_load"));
  json_object_object_add(doc, "argv", bc_cmdline_json(argc, argv));
  json_object_object_add(doc, "job_filter_instructions", json_object_new_int((int)job.len));
  json_object_object_add(doc, "loads_per_round", json_object_new_int(loads));
  for (int k = 0; k < 2; k++) {
    char key[64];
    snprintf(key, sizeof key, "%s_us_per_load", names[k]);
    json_object_object_add(doc, key, bc_summary(&us[k]));
  }
  json_object_object_add(doc, "job_filter_over_one_instruction", bc_summary(&ratio));
  printf("job filter (%u instructions): %.1f us per load; one instruction: %.1f us; ratio %.2f (medians of %d rounds)\n",
         (unsigned)job.len, bc_quantile(&us[1], 0.5), bc_quantile(&us[0], 0.5), bc_quantile(&ratio, 0.5), rounds);
  int rc = out ? bc_emit(doc, out) : 0;
  json_object_put(doc);
  sb_seccomp_free(&job);
  return rc;
}
