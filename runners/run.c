/* sb_run(): the blocking driver of one run, for the CLI and tests. The
 * daemon drives the same sb_proc_* calls from its event loop instead. */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

int sb_run(sb_runtime *rt, const sb_spec *spec, sb_result *out) {
  sb_proc *p;
  char err[SB_ERR_MAX] = "";
  sb_runtime_slot_wait(rt, spec->netns_slot); /* the slot's previous run is still being cleaned */
  int rc = sb_proc_start(rt, spec, &p, err);
  if (rc < 0) {
    memset(out, 0, sizeof *out);
    out->status = SB_INTERNAL_ERROR;
    out->exit_code = -1;
    out->limits = spec->limits;
    out->cgroup = sb_runtime_cgroup(rt);
    out->uid = -1;
    out->output_base64 = spec->output_base64;
    snprintf(out->error, sizeof out->error, "%s", err);
    return rc;
  }
  while (!sb_proc_done(p)) {
    struct pollfd fds[5];
    int n = 0;
    int watch[5] = {sb_proc_pidfd(p), sb_proc_control_fd(p), sb_proc_stdout_fd(p), sb_proc_stderr_fd(p),
                    sb_proc_trace_fd(p)};
    for (int i = 0; i < 5; i++)
      if (watch[i] >= 0) fds[n++] = (struct pollfd){.fd = watch[i], .events = POLLIN};
    int timeout = sb_proc_tick(p);
    if (poll(fds, (nfds_t)n, timeout) < 0 && errno != EINTR) break;
    for (int i = 0; i < n; i++) {
      if (!fds[i].revents) continue;
      int fd = fds[i].fd;
      if (fd == sb_proc_control_fd(p)) sb_proc_on_control(p);
      else if (fd == sb_proc_stdout_fd(p) || fd == sb_proc_stderr_fd(p) || fd == sb_proc_trace_fd(p))
        sb_proc_on_output(p, fd);
      else if (fd == sb_proc_pidfd(p)) sb_proc_on_exit(p);
    }
  }
  sb_proc_finish(p, out);
  return out->status == SB_INTERNAL_ERROR ? -EIO : 0;
}
