/* The sandbox's plan through its one marshal/unmarshal pair (runners/plan.c):
 * every field back as written by hand here; and the reader, which runs as
 * root in the spawner, refusing without a crash every truncation, a forged
 * count, a missing string, and random byte flips (run it under ASan: the
 * sanitizer build, to see a read out of bounds). */
#include "check.h"
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

static void *copy(const void *blob, size_t len) {
  void *c = malloc(len ? len : 1);
  memcpy(c, blob, len);
  return c;
}

int main(void) {
  static const char *const argv[] = {"python3", "-c", "print(1)", NULL};
  static const char *const envp[] = {"PATH=/usr/bin", "HOME=/tmp", NULL};
  static const char *const subs[] = {"/usr/lib/x", NULL};
  static const sb_mount extra[] = {{"/host/a", "/data/a", true}, {"/host/b", "/data/b", false}};
  struct sock_filter insns[3] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {0x06, 0, 0, 0x7fff0000}};
  sb_bpf bpf = {insns, 3};
  sb_limits lim;
  memset(&lim, 0, sizeof lim);
  lim.wall_time_s = 7.5;
  lim.pids = 33;
  sb_plan p;
  sb_plan_init(&p);
  CHECK(p.ctl_fd == -1 && p.procs_fd[3] == -1 && p.fds[SB_PLAN_NFD - 1] == -1);
  CHECK(SB_PLAN_FD(ctl_fd) == 0 && SB_PLAN_FD(procs_fd) == SB_PLAN_NFD - SB_PLAN_PROCS);
  p.userns = true;
  p.ctl_fd = 9; /* descriptors are not in the blob */
  p.mounts.root = "";
  p.mounts.newroot = "/run/surgebox/root";
  p.mounts.empty_file = "/run/surgebox/empty";
  p.mounts.etc_group = "/run/surgebox/group";
  p.mounts.tmp_mib = 512;
  p.mounts.app_mib = 64;
  p.mounts.uid = 60001;
  p.mounts.gid = 60002;
  p.mounts.extra = extra;
  p.mounts.n_extra = 2;
  p.mounts.submounts = subs;
  p.uid = 60003;
  p.gid = 60004;
  p.limits = &lim;
  p.rlimits.pids_by_rlimit = true;
  p.filter = &bpf;
  p.argv = argv;
  p.envp = envp;
  p.cwd = "/app";

  void *blob;
  size_t len;
  CHECK(sb_plan_marshal(&p, &blob, &len) == 0);
  void *c = copy(blob, len);
  sb_plan q;
  CHECK(sb_plan_unmarshal(c, len, &q) == 0);
  CHECK(q.userns);
  CHECK(q.ctl_fd == -1 && q.stdin_fd == -1 && q.procs_fd[0] == -1);
  CHECK_STR(q.mounts.root, "");
  CHECK_STR(q.mounts.newroot, "/run/surgebox/root");
  CHECK_STR(q.mounts.empty_file, "/run/surgebox/empty");
  CHECK(q.mounts.workspace == NULL && q.mounts.etc_passwd == NULL);
  CHECK_STR(q.mounts.etc_group, "/run/surgebox/group");
  CHECK(q.mounts.tmp_mib == 512 && q.mounts.app_mib == 64);
  CHECK(q.mounts.uid == 60001 && q.mounts.gid == 60002);
  CHECK(q.mounts.n_extra == 2);
  CHECK_STR(q.mounts.extra[0].source, "/host/a");
  CHECK_STR(q.mounts.extra[0].target, "/data/a");
  CHECK(q.mounts.extra[0].writable);
  CHECK_STR(q.mounts.extra[1].target, "/data/b");
  CHECK(!q.mounts.extra[1].writable);
  CHECK(q.mounts.submounts && q.mounts.submounts[1] == NULL);
  CHECK_STR(q.mounts.submounts[0], "/usr/lib/x");
  CHECK(!q.mounts.template);
  CHECK(q.uid == 60003 && q.gid == 60004);
  CHECK_NEAR(q.limits->wall_time_s, 7.5, 1e-12);
  CHECK(q.limits->pids == 33);
  CHECK(q.rlimits.pids_by_rlimit && !q.rlimits.memory_by_rlimit);
  CHECK(q.filter->len == 3 && q.filter->insns[2].code == 0x06 && q.filter->insns[2].k == 0x7fff0000);
  CHECK(q.filter->insns[0].jt == 2 && q.filter->insns[1].k == 8);
  CHECK_STR(q.argv[0], "python3");
  CHECK_STR(q.argv[2], "print(1)");
  CHECK(q.argv[3] == NULL);
  CHECK_STR(q.envp[1], "HOME=/tmp");
  CHECK(q.envp[2] == NULL);
  CHECK_STR(q.cwd, "/app");
  free(c);

  /* every truncation refused */
  for (size_t n = 0; n < len; n++) {
    c = copy(blob, n);
    CHECK(sb_plan_unmarshal(c, n, &q) == -EINVAL);
    free(c);
  }
  /* forged counts (argc is the third 32-bit word), the last NUL gone, a required string absent */
  const uint32_t forged[] = {4, 5, 0xffffff, 0x1000000, 0xffffffff};
  for (size_t i = 0; i < sizeof forged / sizeof *forged; i++) {
    c = copy(blob, len);
    memcpy((char *)c + 8, &forged[i], sizeof forged[i]);
    CHECK(sb_plan_unmarshal(c, len, &q) == -EINVAL);
    free(c);
  }
  c = copy(blob, len);
  ((char *)c)[len - 1] = 'x';
  CHECK(sb_plan_unmarshal(c, len, &q) == -EINVAL);
  free(c);
  c = copy(blob, len);
  ((unsigned char *)c)[4] &= (unsigned char)~8u; /* cwd's presence bit */
  CHECK(sb_plan_unmarshal(c, len, &q) == -EINVAL);
  free(c);
  /* random flips: refused or read within bounds (ASan says which) */
  srand(40);
  int refused = 0;
  for (int round = 0; round < 20000; round++) {
    c = copy(blob, len);
    for (int k = 0; k < 1 + round % 4; k++) ((unsigned char *)c)[(size_t)rand() % len] ^= (unsigned char)(1u << (rand() % 8));
    int rc = sb_plan_unmarshal(c, len, &q);
    CHECK(rc == 0 || rc == -EINVAL);
    if (rc == 0) { /* what it gave must lie within the blob */
      const char *lo = c, *hi = lo + len;
      for (int i = 0; q.argv[i]; i++) CHECK(q.argv[i] >= lo && q.argv[i] + strlen(q.argv[i]) < hi);
      CHECK(q.cwd >= lo && q.cwd + strlen(q.cwd) < hi);
    } else {
      refused++;
    }
    free(c);
  }
  CHECK(refused > 0);
  free(blob);

  /* a plan with no filter, no limits, no argv (the template builder's) */
  sb_plan_init(&p);
  p.mounts.root = p.mounts.newroot = p.mounts.empty_file = "";
  p.cwd = "/";
  p.mounts.template = true;
  CHECK(sb_plan_marshal(&p, &blob, &len) == 0);
  c = copy(blob, len);
  CHECK(sb_plan_unmarshal(c, len, &q) == 0);
  CHECK(q.argv[0] == NULL && q.envp[0] == NULL && q.mounts.submounts == NULL && q.mounts.n_extra == 0);
  CHECK(q.filter->len == 0 && q.limits->pids == 0 && q.mounts.template);
  free(c);
  free(blob);
  return check_exit();
}
