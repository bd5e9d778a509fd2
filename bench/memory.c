/* bench_memory: surgeboxd's resident memory idle, with many jobs queued, and
 * after they drained (VmRSS and VmHWM from /proc/<pid>/status).
 *
 *   bench_memory --bin-dir DIR [--jobs-queued N] [--conns C] [--out FILE]
 *
 * The daemon runs with --jobs 1 --max-queue 2N. A first job (/bin/sleep,
 * on its own connection) holds the only slot; then N small exec requests
 * (/bin/true) go out round-robin over C connections, nothing read back,
 * until the daemon's status says N are queued. Then the long job is
 * cancelled and every response read while the queue drains. --cycles K
 * repeats fill and drain on the same daemon: memory that a second cycle
 * reuses was kept by the allocator, memory that grows again was leaked. */
#include "common.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXC 64

static json_object *status(sbc_conn *s) {
  json_object *q = json_object_new_object();
  json_object_object_add(q, "id", json_object_new_string("status"));
  json_object_object_add(q, "type", json_object_new_string("status"));
  json_object *r = bc_call(s, q);
  json_object_put(q);
  return r;
}

static long status_int(sbc_conn *s, const char *key) {
  json_object *r = status(s);
  json_object *v = bc_jget(r, key);
  long x = v ? (long)json_object_get_int64(v) : -1;
  json_object_put(r);
  return x;
}

static const char *label(char *buf, size_t cap, const char *what, int cycle) {
  if (cycle == 1) snprintf(buf, cap, "%s", what);
  else snprintf(buf, cap, "%s, cycle %d", what, cycle);
  return buf;
}

static json_object *sample(pid_t pid, const char *when, double t) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "when", json_object_new_string(when));
  json_object_object_add(o, "t_s", json_object_new_double(t));
  json_object_object_add(o, "vm_rss_kb", json_object_new_int64(bc_proc_status_kb(pid, "VmRSS")));
  json_object_object_add(o, "vm_hwm_kb", json_object_new_int64(bc_proc_status_kb(pid, "VmHWM")));
  json_object_object_add(o, "rss_anon_kb", json_object_new_int64(bc_proc_status_kb(pid, "RssAnon")));
  json_object_object_add(o, "rss_file_kb", json_object_new_int64(bc_proc_status_kb(pid, "RssFile")));
  json_object_object_add(o, "vm_data_kb", json_object_new_int64(bc_proc_status_kb(pid, "VmData")));
  return o;
}

int main(int argc, char **argv) {
  static const struct option opts[] = {{"bin-dir", required_argument, 0, 'b'}, {"jobs-queued", required_argument, 0, 'n'},
                                       {"conns", required_argument, 0, 'c'},   {"out", required_argument, 0, 'O'},
                                       {"cycles", required_argument, 0, 'y'},
                                       {0, 0, 0, 0}};
  const char *bin_dir = NULL, *out = NULL;
  long n = 10000;
  int nconn = 4, cycles = 2, c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 'b': bin_dir = optarg; break;
    case 'n': n = atol(optarg); break;
    case 'c': nconn = atoi(optarg); break;
    case 'O': out = optarg; break;
    case 'y': cycles = atoi(optarg); break;
    default: return 1;
    }
  }
  if (!bin_dir || n < 1 || nconn < 1 || nconn > MAXC || cycles < 1) {
    fprintf(stderr, "usage: bench_memory --bin-dir DIR [--jobs-queued N] [--conns C] [--cycles K] [--out FILE]\n");
    return 1;
  }
  bc_require_wrapper("bench_memory");
  char maxq[32];
  snprintf(maxq, sizeof maxq, "%ld", 2 * n);
  const char *extra[] = {"--jobs", "1", "--max-queue", maxq, NULL};
  bc_daemon d;
  if (bc_daemon_start(&d, bin_dir, extra, true) < 0) return 2;
  pid_t pid = d.pid;
  json_object *doc = json_object_new_object(), *samples = json_object_new_array();
  json_object_object_add(doc, "benchmark", json_object_new_string("memory"));
  json_object_object_add(doc, "argv", bc_cmdline_json(argc, argv));
  json_object_object_add(doc, "daemon", json_object_new_string(d.cmdline));
  json_object_object_add(doc, "jobs_queued", json_object_new_int64(n));
  json_object_object_add(doc, "connections", json_object_new_int(nconn));
  json_object_object_add(doc, "cycles_run", json_object_new_int(cycles));
  int rc = 0;
  double t0 = sbu_now_s();
  sbc_conn st, lc, conns[MAXC];
  if (bc_connect(&st, d.sock) < 0 || bc_connect(&lc, d.sock) < 0) {
    bc_daemon_stop(&d);
    return 2;
  }
  bc_sleep(0.5);
  json_object_put(status(&st));
  json_object_array_add(samples, sample(pid, "idle (started, one status request)", sbu_now_s() - t0));

  /* one small job, so that the idle figure after work is known too */
  static const char small_fmt[] = "{\"id\":%ld,\"type\":\"exec\",\"steps\":[{\"argv\":[\"/bin/true\"]}]}\n";
  char line[256];
  int len = snprintf(line, sizeof line, small_fmt, -1L);
  bc_send_raw(lc.fd, line, (size_t)len);
  json_object *r = sbc_recv(&lc);
  if (!r || !bc_jstr(r, "status") || strcmp(bc_jstr(r, "status"), "ok") != 0) {
    fprintf(stderr, "bench_memory: a small job failed: %s\n", r ? json_object_to_json_string(r) : "no response");
    rc = 2;
  }
  json_object_put(r);
  bc_sleep(0.3);
  json_object_array_add(samples, sample(pid, "idle (after one job)", sbu_now_s() - t0));

  for (int i = 0; i < nconn; i++)
    if (bc_connect(&conns[i], d.sock) < 0) return 2;
  json_object *cycles_arr = json_object_new_array();
  char lbl[128];
  for (int cycle = 1; cycle <= cycles; cycle++) {
    json_object *cy = json_object_new_object();
    json_object_object_add(cy, "cycle", json_object_new_int(cycle));
    static const char long_req[] =
        "{\"id\":\"long\",\"type\":\"exec\",\"steps\":[{\"argv\":[\"/bin/sleep\",\"3600\"],\"limits\":{\"time_s\":7200}}]}\n";
    bc_send_raw(lc.fd, long_req, sizeof long_req - 1);
    while (status_int(&st, "running") < 1 && sbu_now_s() - t0 < 30) bc_sleep(0.01);

    double t_submit = sbu_now_s();
    for (long i = 0; i < n; i++) {
      len = snprintf(line, sizeof line, small_fmt, i);
      if (bc_send_raw(conns[i % nconn].fd, line, (size_t)len) < 0) {
        fprintf(stderr, "bench_memory: send: %s\n", strerror(errno));
        return 2;
      }
    }
    long queued = 0;
    while ((queued = status_int(&st, "queued")) < n && sbu_now_s() - t_submit < 300) bc_sleep(0.02);
    double t_queued = sbu_now_s();
    json_object_object_add(cy, "queued_seen", json_object_new_int64(queued));
    json_object_object_add(cy, "submit_s", json_object_new_double(t_queued - t_submit));
    bc_sleep(0.3);
    json_object_array_add(samples, sample(pid, label(lbl, sizeof lbl, "queued", cycle), sbu_now_s() - t0));

    /* cancel the long job; read everything while the queue drains */
    static const char cancel[] = "{\"id\":\"cancel\",\"type\":\"cancel\",\"target\":\"long\"}\n";
    bc_send_raw(lc.fd, cancel, sizeof cancel - 1);
    double t_drain = sbu_now_s();
    long got = 0, ok = 0, peak_rss = 0;
    char first_bad[512] = "";
    double last_sample = 0;
    while (got < n) {
      struct pollfd pfd[MAXC];
      for (int i = 0; i < nconn; i++) pfd[i] = (struct pollfd){.fd = conns[i].fd, .events = POLLIN};
      int pr = poll(pfd, (nfds_t)nconn, 100);
      if (pr < 0 && errno != EINTR) break;
      for (int i = 0; i < nconn && pr > 0; i++) {
        if (!pfd[i].revents) continue;
        json_object *resp = sbc_recv(&conns[i]);
        if (!resp) {
          fprintf(stderr, "bench_memory: connection %d closed\n", i);
          got = n;
          rc = 2;
          break;
        }
        got++;
        const char *s = bc_jstr(resp, "status");
        if (s && strcmp(s, "ok") == 0) ok++;
        else if (!first_bad[0]) snprintf(first_bad, sizeof first_bad, "%.500s", json_object_to_json_string(resp));
        json_object_put(resp);
        /* lines already buffered need no poll */
        while (got < n && conns[i].len && memchr(conns[i].buf, '\n', conns[i].len)) {
          resp = sbc_recv(&conns[i]);
          got++;
          s = bc_jstr(resp, "status");
          if (s && strcmp(s, "ok") == 0) ok++;
          json_object_put(resp);
        }
      }
      if (sbu_now_s() - last_sample > 0.1) {
        long rss = bc_proc_status_kb(pid, "VmRSS");
        if (rss > peak_rss) peak_rss = rss;
        last_sample = sbu_now_s();
      }
      if (sbu_now_s() - t_drain > 1800) {
        fprintf(stderr, "bench_memory: drain took more than 30 min\n");
        rc = 2;
        break;
      }
    }
    double drain_s = sbu_now_s() - t_drain;
    json_object_object_add(cy, "drain_s", json_object_new_double(drain_s));
    json_object_object_add(cy, "drain_jobs_per_s", json_object_new_double((double)got / drain_s));
    json_object_object_add(cy, "responses", json_object_new_int64(got));
    json_object_object_add(cy, "responses_ok", json_object_new_int64(ok));
    json_object_object_add(cy, "first_not_ok", first_bad[0] ? json_object_new_string(first_bad) : NULL);
    json_object_object_add(cy, "peak_rss_sampled_kb", json_object_new_int64(peak_rss));
    json_object_put(sbc_recv(&lc)); /* the cancel's answer and the long job's */
    json_object_put(sbc_recv(&lc));
    while (status_int(&st, "running") + status_int(&st, "queued") > 0 && sbu_now_s() - t_drain < 1900) bc_sleep(0.05);
    bc_sleep(1.0);
    json_object_array_add(samples, sample(pid, label(lbl, sizeof lbl, "drained (1 s after the last response)", cycle), sbu_now_s() - t0));
    if (ok != n) rc = 2;
    json_object_array_add(cycles_arr, cy);
  }
  json_object_object_add(doc, "cycles", cycles_arr);
  for (int i = 0; i < nconn; i++) sbc_close(&conns[i]);
  bc_sleep(1.0);
  json_object_array_add(samples, sample(pid, "drained, client connections closed", sbu_now_s() - t0));
  json_object_object_add(doc, "samples", samples);
  sbc_close(&lc);
  sbc_close(&st);
  bc_daemon_stop(&d);
  if (bc_emit(doc, out) < 0) rc = 2;
  json_object_put(doc);
  return rc;
}
