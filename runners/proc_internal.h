/* The parent-side state of one run, shared by proc.c (driving it) and
 * accounting.c (turning it into a result). */
#ifndef SURGEBOX_PROC_INTERNAL_H
#define SURGEBOX_PROC_INTERNAL_H
#include "internal.h"

typedef enum { PHASE_SETUP, PHASE_RUNNING, PHASE_EXITED } phase;

struct sb_proc {
  sb_runtime *rt;
  sb_limits limits;
  phase phase;
  pid_t pid;
  int pidfd, ctl_fd, out_fd, err_fd;
  sb_cg_job cg;
  sb_bpf own_filter; /* when the spec extends the runtime's policy */
  uint64_t t_start, t_go, setup_deadline, wall_deadline, next_cpu_check;
  sb_buf out, err;
  const char *kill_reason; /* limit_hit, or "cancel" */
  bool killed, reaped, have_done, internal_error;
  sb_msg done;
  int init_status;
  struct rusage init_ru;
  char error[SB_ERR_MAX];
  char argv0[256];
  char **argv, **envp;  /* our own copies: the init wipes the supervisor's argv area */
  char *cwd;
  char *root;           /* profile root, or NULL for the host */
  sb_mount *mounts;
  size_t n_mounts;
  sb_uid_lease *own_lease; /* taken for this run alone (no workspace, no lease in the spec) */
  uid_t uid;
  gid_t gid;
  bool output_base64;
  char etc_passwd[512], etc_group[256]; /* the sandbox's identity files (mounts.c) */
};

void sb_proc_free(sb_proc *p);

#endif
