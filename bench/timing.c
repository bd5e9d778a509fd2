/* bench_timing: how stable is the CPU time the sandbox reports, against the
 * same binary run unsandboxed by this process (getrusage(RUSAGE_CHILDREN)
 * before/after its waitpid), interleaved run by run.
 *
 *   bench_timing --burn-time PATH --burn-iter PATH [--runs N] [--seconds S]
 *                [--iters N] [--out FILE]
 *
 * Two programs (bench/progs): burn_time stops when its own
 * CLOCK_PROCESS_CPUTIME_ID reaches S (0.5 s): its spread is start-up, exit
 * and the meter; burn_iter runs a fixed number of iterations (calibrated to
 * about S unsandboxed unless --iters): its spread is the machine's and the
 * meter's. Sandbox runs use sb_run() on one runtime (cgroup accounting). */
#include "common.h"
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static double tv(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

/* Unsandboxed: fork + exec + waitpid; CPU from getrusage(RUSAGE_CHILDREN). */
static int run_raw(const char *path, const char *arg, double *cpu, double *wall) {
  struct rusage before, after;
  getrusage(RUSAGE_CHILDREN, &before);
  double t0 = sbu_now_s();
  pid_t pid = fork();
  if (pid == 0) {
    execl(path, path, arg, (char *)NULL);
    _exit(127);
  }
  if (pid < 0) return -1;
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  *wall = sbu_now_s() - t0;
  getrusage(RUSAGE_CHILDREN, &after);
  *cpu = tv(after.ru_utime) - tv(before.ru_utime) + tv(after.ru_stime) - tv(before.ru_stime);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int run_sandboxed(sb_runtime *rt, sb_workspace *ws, const char *prog, const char *arg, double *cpu,
                         double *wall, const char **source) {
  const char *argv[] = {prog, arg, NULL};
  sb_spec spec;
  sb_spec_init(&spec);
  spec.argv = argv;
  spec.workspace = ws;
  sb_result r;
  sb_run(rt, &spec, &r);
  *cpu = r.cpu_time_s;
  *wall = r.wall_time_s;
  *source = r.cpu_source;
  int rc = r.status == SB_OK && r.exit_code == 0 ? 0 : -1;
  if (rc) fprintf(stderr, "bench_timing: %s: %s %s\n", prog, sb_status_name(r.status), r.error);
  sb_result_free(&r);
  return rc;
}

typedef struct {
  const char *id, *what, *host_path, *app_path;
  char arg[64];
  bc_vec sb_cpu, sb_wall, raw_cpu, raw_wall, diff;
} variant;

static json_object *variant_json(variant *v) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "id", json_object_new_string(v->id));
  json_object_object_add(o, "what", json_object_new_string(v->what));
  json_object_object_add(o, "arg", json_object_new_string(v->arg));
  json_object_object_add(o, "sandbox_cpu_s", bc_summary(&v->sb_cpu));
  json_object_object_add(o, "sandbox_wall_s", bc_summary(&v->sb_wall));
  json_object_object_add(o, "raw_cpu_s", bc_summary(&v->raw_cpu));
  json_object_object_add(o, "raw_wall_s", bc_summary(&v->raw_wall));
  json_object_object_add(o, "paired_diff_s", bc_summary(&v->diff));
  return o;
}

int main(int argc, char **argv) {
  static const struct option opts[] = {{"burn-time", required_argument, 0, 't'}, {"burn-iter", required_argument, 0, 'i'},
                                       {"runs", required_argument, 0, 'r'},      {"seconds", required_argument, 0, 's'},
                                       {"iters", required_argument, 0, 'n'},     {"out", required_argument, 0, 'O'},
                                       {0, 0, 0, 0}};
  const char *burn_time = NULL, *burn_iter = NULL, *out = NULL;
  int runs = 20, c;
  double seconds = 0.5;
  unsigned long long iters = 0;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 't': burn_time = optarg; break;
    case 'i': burn_iter = optarg; break;
    case 'r': runs = atoi(optarg); break;
    case 's': seconds = atof(optarg); break;
    case 'n': iters = strtoull(optarg, NULL, 10); break;
    case 'O': out = optarg; break;
    default: return 1;
    }
  }
  if (!burn_time || !burn_iter || runs < 1 || !(seconds > 0)) {
    fprintf(stderr, "usage: bench_timing --burn-time PATH --burn-iter PATH [--runs N] [--seconds S] [--iters N] [--out FILE]\n");
    return 1;
  }
  bc_require_wrapper("bench_timing");

  /* Calibrate burn_iter to about `seconds` of CPU unsandboxed (median of 3). */
  bc_vec cal = {0};
  unsigned long long cal_iters = 100000000ull;
  char arg[64];
  if (!iters) {
    snprintf(arg, sizeof arg, "%llu", cal_iters);
    for (int i = 0; i < 3; i++) {
      double cpu, wall;
      if (run_raw(burn_iter, arg, &cpu, &wall) < 0) {
        fprintf(stderr, "bench_timing: %s failed\n", burn_iter);
        return 2;
      }
      bc_vec_push(&cal, cpu);
    }
    iters = (unsigned long long)((double)cal_iters * seconds / bc_quantile(&cal, 0.5));
  }

  sb_runtime_options ro;
  sb_runtime_options_default(&ro);
  sb_runtime *rt;
  sb_workspace *ws;
  char err[SB_ERR_MAX] = "";
  if (sb_runtime_open(&ro, &rt, err) < 0 || sb_workspace_create(rt, 512, &ws, err) < 0) {
    fprintf(stderr, "bench_timing: %s\n", err);
    return 2;
  }
  variant v[2] = {
      {.id = "burn_time", .what = "burns until its own CLOCK_PROCESS_CPUTIME_ID reaches the target", .host_path = burn_time,
       .app_path = "/app/burn_time"},
      {.id = "burn_iter", .what = "a fixed number of iterations", .host_path = burn_iter, .app_path = "/app/burn_iter"},
  };
  snprintf(v[0].arg, sizeof v[0].arg, "%g", seconds);
  snprintf(v[1].arg, sizeof v[1].arg, "%llu", iters);
  for (int i = 0; i < 2; i++) {
    size_t len;
    unsigned char *data = bc_read_file(v[i].host_path, &len);
    if (!data || sb_workspace_write(ws, v[i].app_path + 5, data, len, 0755, err) < 0) {
      fprintf(stderr, "bench_timing: %s: %s\n", v[i].host_path, err[0] ? err : strerror(errno));
      return 2;
    }
    free(data);
  }
  const char *source = NULL;
  int failures = 0;
  double t_start = sbu_now_s();
  for (int r = 0; r < runs; r++) {
    for (int i = 0; i < 2; i++) {
      double scpu = NAN, swall = NAN, rcpu = NAN, rwall = NAN;
      /* alternate which goes first, so neither always runs on a warmer cache */
      for (int k = 0; k < 2; k++) {
        bool sandbox_now = (k == 0) == (r % 2 == 0);
        int rc = sandbox_now ? run_sandboxed(rt, ws, v[i].app_path, v[i].arg, &scpu, &swall, &source)
                             : run_raw(v[i].host_path, v[i].arg, &rcpu, &rwall);
        if (rc < 0) failures++;
      }
      bc_vec_push(&v[i].sb_cpu, scpu);
      bc_vec_push(&v[i].sb_wall, swall);
      bc_vec_push(&v[i].raw_cpu, rcpu);
      bc_vec_push(&v[i].raw_wall, rwall);
      bc_vec_push(&v[i].diff, scpu - rcpu);
    }
    fprintf(stderr, "bench_timing: run %d/%d (%.0f s)\n", r + 1, runs, sbu_now_s() - t_start);
  }
  json_object *doc = json_object_new_object();
  json_object_object_add(doc, "benchmark", json_object_new_string("timing"));
  json_object_object_add(doc, "argv", bc_cmdline_json(argc, argv));
  json_object_object_add(doc, "runs", json_object_new_int(runs));
  json_object_object_add(doc, "seconds", json_object_new_double(seconds));
  json_object_object_add(doc, "iters", json_object_new_int64((int64_t)iters));
  if (cal.n) json_object_object_add(doc, "calibration_cpu_s", bc_summary(&cal));
  json_object_object_add(doc, "failures", json_object_new_int(failures));
  json_object_object_add(doc, "cpu_source", source ? json_object_new_string(source) : NULL);
  json_object_object_add(doc, "cgroup", json_object_new_string(sb_cgroup_kind_name(sb_runtime_cgroup(rt))));
  json_object_object_add(doc, "duration_s", json_object_new_double(sbu_now_s() - t_start));
  json_object *arr = json_object_new_array();
  for (int i = 0; i < 2; i++) json_object_array_add(arr, variant_json(&v[i]));
  json_object_object_add(doc, "variants", arr);
  int rc = bc_emit(doc, out);
  json_object_put(doc);
  sb_workspace_destroy(ws);
  sb_runtime_close(rt);
  return rc < 0 || failures ? 2 : 0;
}
