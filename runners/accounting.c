/* Accounting (parent side, after the sandbox init was reaped): decide the
 * status and collect CPU, wall and memory figures from the best source.
 *
 *   CPU   cgroup (v1 cpuacct.usage*, v2 cpu.stat): the whole process tree,
 *         including what ran when we killed it; attached after set-up, so
 *         mounts are not counted. Without a cgroup: the init's
 *         RUSAGE_CHILDREN (every descendant it reaped), or, when the init
 *         was killed, wait4()'s rusage of the init.
 *   wall  from the init's monotonic stamps around the program's life
 *         (fork to reap), else GO to reap as the supervisor saw it.
 *   RSS   max_rss_kb: the largest single process (rusage, like time(1));
 *         cgroup_peak_kb: the whole tree, page cache and tmpfs included. */
#include "proc_internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>


static double tv_s(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

static void fill_cpu(sb_proc *p, const sb_cg_stats *cg, sb_result *r) {
  if (cg->has_cpu) {
    r->cpu_time_s = (double)cg->cpu_ns / 1e9;
    r->user_time_s = (double)cg->user_ns / 1e9;
    r->sys_time_s = (double)cg->sys_ns / 1e9;
    r->cpu_source = p->rt->cg.kind == SB_CGROUP_V1 ? "cgroup v1 cpuacct" : "cgroup v2 cpu.stat";
    return;
  }
  const struct rusage *ru = p->have_done ? &p->done.children : &p->init_ru;
  r->user_time_s = tv_s(ru->ru_utime);
  r->sys_time_s = tv_s(ru->ru_stime);
  r->cpu_time_s = r->user_time_s + r->sys_time_s;
  r->cpu_source = p->have_done ? "rusage of the reaped process tree" : "rusage of the killed sandbox";
  /* Killed by us (the CPU limit, mempoll.c's tree poll): the processes died
   * with the init unreaped, so its rusage lacks them; the poll's last
   * reading of the tree has them (at most one poll old). */
  uint64_t polled;
  if (!p->have_done && sb_mempoll_cpu_ns(p, &polled) && (double)polled / 1e9 > r->cpu_time_s) {
    r->user_time_s = (double)p->mem.cpu_user_ns / 1e9;
    r->sys_time_s = (double)p->mem.cpu_sys_ns / 1e9;
    r->cpu_time_s = (double)polled / 1e9;
    r->cpu_source = "supervisor poll of the process tree (/proc), its last reading before the kill";
    r->cpu_resolution_s = 1.0 / (double)sysconf(_SC_CLK_TCK); /* /proc counts clock ticks */
  }
}

/* An OOM kill in the job's cgroup while the cgroup never reached its own
 * limit (its own counters, not the kill signal, decide): the host's OOM
 * killer (or an ancestor cgroup's) chose a process of this job. Its own
 * limit: v2's memory.events oom; v1's failcnt where the kernel counts it
 * (6.x kernels may not: 0 even at the limit), else its peak within 1/16 of
 * the limit (a cgroup OOM leaves the peak at the limit; a host kill of the
 * issue's runs left it at 9-14 MB of 2 GiB). */
static bool host_oom_kill(const sb_proc *p, const sb_cg_stats *cg) {
  if (!cg->oom_kills || !cg->has_own || cg->own_limit_hits) return false;
  uint64_t limit = p->limits.memory_mib << 20;
  /* The limit counts what a reused slot's last job left charged (clean page
   * cache, up to 8 MB) until the kernel reclaims it: the peak against the
   * limit is the cgroup's whole, not the job's own (cases.verdicts' 32 MiB
   * case read 1 in 10 as a host kill with a few MB left over). */
  if (p->rt->cg.kind == SB_CGROUP_V1 && (!cg->has_peak || cg->mem_peak_charged_bytes + limit / 16 >= limit))
    return false;
  return true;
}

static void say_host_kill(const sb_cg_stats *cg, sb_result *r) {
  r->status = SB_HOST_KILLED;
  r->limit_hit = NULL;
  snprintf(r->error, sizeof r->error,
           "killed by an out-of-memory kill outside this job's limit (the host's OOM killer, or a parent cgroup's): "
           "the job's cgroup counted %llu OOM kill(s) and never reached its own memory limit; a failure of the "
           "machine, not the program's: run it again",
           (unsigned long long)cg->oom_kills);
}

static void classify(sb_proc *p, const sb_cg_stats *cg, sb_result *r) {
  r->exit_code = -1;
  r->signal = 0;
  if (p->internal_error) {
    r->status = SB_INTERNAL_ERROR;
    return;
  }
  if (p->have_done) {
    int st = p->done.wstatus;
    if (WIFEXITED(st)) r->exit_code = WEXITSTATUS(st);
    if (WIFSIGNALED(st)) r->signal = WTERMSIG(st);
    if (p->done.exec_errno) {
      const char *what = p->done.text;
      if (strcmp(what, "exec") == 0 || !what[0])
        snprintf(r->error, sizeof r->error, "cannot execute %s: %s", p->argv0, strerror(p->done.exec_errno));
      else
        snprintf(r->error, sizeof r->error, "cannot start %s: %s failed: %s", p->argv0, what,
                 strerror(p->done.exec_errno));
    }
  } else if (p->killed) {
    r->signal = SIGKILL;
  } else if (cg->oom_kills > 0) {
    /* The init died unreported, but the job's cgroup counted an OOM kill:
     * the kernel chose the init as the victim (user mode cannot protect
     * it). The program hit its memory limit; it is not a sandbox failure. */
    r->signal = WIFSIGNALED(p->init_status) ? WTERMSIG(p->init_status) : SIGKILL;
  } else {
    /* The init died without reporting and we did not kill it: someone
     * outside killed the sandbox (or the kernel did). Not the program's doing. */
    r->status = SB_INTERNAL_ERROR;
    if (WIFSIGNALED(p->init_status))
      snprintf(r->error, sizeof r->error, "the sandbox init died of %s before the program finished (killed from outside?)",
               sigabbrev_np(WTERMSIG(p->init_status)) ? sigabbrev_np(WTERMSIG(p->init_status)) : "a signal");
    else
      snprintf(r->error, sizeof r->error, "the sandbox init exited (%d) without a report", WEXITSTATUS(p->init_status));
    return;
  }
  if (p->killed && p->kill_reason) {
    r->limit_hit = p->kill_reason;
    if (strcmp(p->kill_reason, "output") == 0) r->status = SB_OUTPUT_LIMIT;
    else if (strcmp(p->kill_reason, "cancel") == 0) r->status = SB_SIGNALED;
    else if (strcmp(p->kill_reason, "memory") == 0) r->status = SB_MEMORY_LIMIT; /* mempoll.c */
    else r->status = SB_TIMEOUT;
    return;
  }
  /* Any OOM kill in the job's cgroup is the memory limit, even when the
   * program itself survived it (a child was the victim). */
  if (host_oom_kill(p, cg)) {
    say_host_kill(cg, r);
  } else if (cg->oom_kills > 0) {
    r->status = SB_MEMORY_LIMIT;
    r->limit_hit = "memory";
  } else if (r->signal == SIGXCPU || (r->signal == SIGKILL && r->cpu_time_s >= p->limits.cpu_time_s)) {
    r->status = SB_TIMEOUT; /* RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL at the hard one */
    r->limit_hit = "cpu_time";
  } else if (r->signal) {
    r->status = SB_SIGNALED;
    if (r->signal == SIGXFSZ) r->limit_hit = "file_size";
    if (r->signal == SIGKILL && p->rt->cg.kind == SB_CGROUP_NONE) /* what can be known without a memory cgroup */
      snprintf(r->error, sizeof r->error,
               "SIGKILL not sent by surgebox: the program, another process or the host's OOM killer (without a "
               "cgroup surgebox cannot tell which)");
  } else if (r->exit_code != 0) {
    r->status = SB_RUNTIME_ERROR;
  } else {
    r->status = SB_OK;
  }
}

void sb_proc_finish(sb_proc *p, sb_result *r) {
  memset(r, 0, sizeof *r);
  sb_cg_stats cg;
  sb_cg_job_stats(&p->rt->cg, &p->cg, &cg);
  sb_cg_job_destroy(&p->rt->cg, &p->cg);
  r->limits = p->limits;
  r->cgroup = p->rt->cg.kind;
  r->uid = (int64_t)p->uid;
  snprintf(r->pool, sizeof r->pool, "%s", p->pool_note);
  snprintf(r->start, sizeof r->start, "%s", p->start_note);
  r->warm = p->warm.on;
  r->warm_seeded = p->warm.seeded;
  r->warm_seed = p->warm.seed;
  r->warm_lost = p->warm_lost && p->internal_error && !p->kill_reason; /* a limit or a cancel is its own end */
  r->output_base64 = p->output_base64;
  fill_cpu(p, &cg, r);
  classify(p, &cg, r);
  if (p->internal_error) snprintf(r->error, sizeof r->error, "%s", p->error);
  else if (!p->have_done && !p->killed && !cg.oom_kills) r->status = SB_INTERNAL_ERROR; /* error set by classify */
  uint64_t end = sbu_now_ns();
  if (p->have_done && p->done.end_ns > p->done.start_ns)
    r->wall_time_s = (double)(p->done.end_ns - p->done.start_ns) / 1e9;
  else if (p->t_go)
    r->wall_time_s = (double)(end - p->t_go) / 1e9;
  r->setup_time_s = (double)((p->t_go ? p->t_go : end) - p->t_start) / 1e9;
  r->wall_excused_s = (double)p->wall_excused_ns / 1e9;
  r->wall_waiting = p->wall_waiting;
  const struct rusage *ru = p->have_done ? &p->done.children : &p->init_ru;
  r->max_rss_kb = (uint64_t)ru->ru_maxrss;
  r->cgroup_peak_kb = cg.has_peak ? cg.mem_peak_bytes / 1024 : 0;
  r->pids_limit_hit = cg.pids_max_events > 0;
  r->out = p->out;
  r->err = p->err;
  p->out = (sb_buf){0};
  p->err = (sb_buf){0};
  if (p->traced) {
    r->traced = true;
    r->trace_bytes = p->trace_cap;
    r->trace = p->trace;
    p->trace = (sb_buf){0};
    sb_trace_finalize(r, &p->trace_scan);
  }
  sb_proc_free(p);
}

void sb_result_free(sb_result *r) {
  free(r->out.data);
  free(r->err.data);
  free(r->trace.data);
  r->trace = (sb_buf){0};
  r->out = (sb_buf){0};
  r->err = (sb_buf){0};
}
