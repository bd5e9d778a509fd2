/* seccomp policy: built once in the parent with libseccomp, exported as
 * classic BPF, and only loaded in the child (building costs ~0.2 ms, loading
 * ~0.07 ms; see PERF-NOTES.md). Denials return EPERM, not a kill, so a
 * program sees an ordinary error it can print.
 *
 * The policy is data: a default deny list of syscall names (below), plus
 * names a runtime or toolchain adds (extra_deny) or removes (extra_allow). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>

const char *const sb_seccomp_default_deny[] = {
    /* inspecting or writing other processes */
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise", "kcmp",
    /* the mount API, old and new */
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr",
    /* namespaces (clone's namespace flags are filtered separately below) */
    "unshare", "setns",
    /* the kernel itself */
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "bpf",
    "perf_event_open", "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
    "syslog", "iopl", "ioperm", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "vhangup", "lookup_dcookie", "uselib", "nfsservctl", "fanotify_init",
    /* kernel keyring */
    "keyctl", "add_key", "request_key",
    /* large attack surface, never needed by benchmark programs */
    "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    /* native AIO: io_setup takes from the host-wide fs.aio-max-nr budget, which
     * one job could exhaust for the host (glibc's POSIX aio uses threads) */
    "io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents",
    /* which pages of a file are cached (6.5+): a side channel on the host's
     * and other jobs' reads of the shared read-only files; no toolchain uses it */
    "cachestat",
    "open_by_handle_at", "name_to_handle_at",
    NULL,
};

static bool in_list(const char *const *list, const char *name) {
  for (; list && *list; list++)
    if (strcmp(*list, name) == 0) return true;
  return false;
}

static int deny_name(scmp_filter_ctx ctx, const char *name, char err[SB_ERR_MAX]) {
  int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) return 0; /* not on this architecture (e.g. create_module) */
  int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
  if (rc < 0 && rc != -EEXIST) {
    sb_err(err, "seccomp: cannot deny %s: %s", name, strerror(-rc));
    return rc;
  }
  return 0;
}

/* libseccomp's SCMP_A*() macros leave the comparison's datum_b implicit. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* Advice that evicts or ages cached pages of a file is made a no-op (the call
 * returns 0, nothing done): on the read-only binds those pages are the host's
 * and every job's (an overlay passes fadvise and the mapping through to the
 * real file). All advice is a hint, so a no-op is correct for a program's own
 * files too. Compared on the low 32 bits: the kernel takes an int. */
static int add_page_cache_rules(scmp_filter_ctx ctx) {
  int rc = 0;
#if ULONG_MAX > 0xffffffffUL
  /* fadvise64(fd, offset, len, advice) on every 64-bit ABI */
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(0), SCMP_SYS(fadvise64), 1,
                         SCMP_A3(SCMP_CMP_MASKED_EQ, 0xffffffffu, POSIX_FADV_DONTNEED));
#else
  /* 32-bit ABIs split the offsets and move advice (fadvise64_64, arm_fadvise64_64): every call a no-op */
  static const char *const fadvise[] = {"fadvise64", "fadvise64_64", "arm_fadvise64_64", NULL};
  for (const char *const *n = fadvise; *n; n++) {
    int nr = seccomp_syscall_resolve_name(*n);
    if (nr != __NR_SCMP_ERROR) rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(0), nr, 0);
  }
#endif
  /* MADV_PAGEOUT reclaims, MADV_COLD deactivates; the kernel checks ownership
   * for a file's pageout only, and a job's uid 0 in user-namespace mode owns
   * the caller's files. process_madvise is denied outright. */
  static const unsigned advice[] = {MADV_PAGEOUT, MADV_COLD};
  for (size_t i = 0; i < sizeof advice / sizeof advice[0]; i++)
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(0), SCMP_SYS(madvise), 1,
                           SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffu, advice[i]));
  return rc;
}

static int add_conditional_rules(scmp_filter_ctx ctx, const char *const *allow, char err[SB_ERR_MAX]) {
  int rc = 0;
  /* socket(): only AF_UNIX (pipes between a program's own processes). */
  if (!in_list(allow, "socket"))
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
                           SCMP_A0(SCMP_CMP_NE, AF_UNIX));
  /* clone() with any namespace flag: an unprivileged user namespace would hand
   * the program capabilities over its own mounts. One rule per bit, since
   * libseccomp only has masked equality. */
  static const unsigned long ns_flags[] = {CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER,
                                           CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP};
  if (!in_list(allow, "unshare"))
    for (size_t i = 0; i < sizeof ns_flags / sizeof ns_flags[0]; i++)
      rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
  /* clone3 passes its flags in memory, which seccomp cannot read: ENOSYS makes
   * glibc (>= 2.34) fall back to clone(), where the rule above applies. */
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  /* Faking terminal input. */
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                         SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI));
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                         SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX));
  rc |= add_page_cache_rules(ctx);
  if (rc < 0) sb_err(err, "seccomp: cannot add conditional rules");
  return rc < 0 ? -EINVAL : 0;
}

static int export_bpf(scmp_filter_ctx ctx, sb_bpf *out, char err[SB_ERR_MAX]) {
  /* libseccomp 2.5 exports only to an fd: go through a memfd. */
  SBU_AUTOCLOSE int fd = memfd_create("surgebox-bpf", MFD_CLOEXEC);
  if (fd < 0) {
    sb_err(err, "seccomp: memfd_create: %s", strerror(errno));
    return -errno;
  }
  int rc = seccomp_export_bpf(ctx, fd);
  off_t len = rc == 0 ? lseek(fd, 0, SEEK_END) : -1;
  if (rc < 0 || len <= 0 || len % (off_t)sizeof(struct sock_filter) != 0 ||
      len / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS) {
    sb_err(err, "seccomp: cannot export the filter (%s)", rc < 0 ? strerror(-rc) : "bad size");
    return -EINVAL;
  }
  out->insns = malloc((size_t)len);
  if (!out->insns) {
    sb_err(err, "seccomp: out of memory");
    return -ENOMEM;
  }
  ssize_t n = pread(fd, out->insns, (size_t)len, 0);
  if (n != len) {
    free(out->insns);
    out->insns = NULL;
    sb_err(err, "seccomp: short read of the exported filter");
    return -EIO;
  }
  out->len = (unsigned short)(len / (off_t)sizeof(struct sock_filter));
  return 0;
}

int sb_seccomp_build(const char *const *extra_deny, const char *const *extra_allow,
                     const char *const *extra_deny2, sb_bpf *out, char err[SB_ERR_MAX]) {
  memset(out, 0, sizeof *out);
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) {
    sb_err(err, "seccomp: seccomp_init failed");
    return -ENOMEM;
  }
  /* Foreign-ABI syscalls (i386 int 0x80) would bypass rules written for the
   * native ABI: refuse them all. libseccomp also refuses x32 numbers. */
  int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS));
  /* We set no_new_privs ourselves right before loading. */
  if (rc == 0) rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
  /* A binary tree of syscall numbers instead of a list: the same verdicts,
   * but the kernel's load of the filter emulates it for every syscall
   * number (seccomp_cache_prepare, with interrupts off) and each walk is
   * shorter: 71 instead of 118 us per job here, 137 instructions instead of
   * 120. Best effort: libseccomp < 2.5 refuses it and keeps the list. */
  if (rc == 0) (void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  for (const char *const *p = sb_seccomp_default_deny; rc == 0 && *p; p++)
    if (!in_list(extra_allow, *p)) rc = deny_name(ctx, *p, err);
  for (const char *const *p = extra_deny; rc == 0 && p && *p; p++) rc = deny_name(ctx, *p, err);
  for (const char *const *p = extra_deny2; rc == 0 && p && *p; p++) rc = deny_name(ctx, *p, err);
  if (rc == 0) rc = add_conditional_rules(ctx, extra_allow, err);
  if (rc == 0) rc = export_bpf(ctx, out, err);
  seccomp_release(ctx);
  return rc;
}

void sb_seccomp_free(sb_bpf *b) {
  free(b->insns);
  b->insns = NULL;
  b->len = 0;
}

int sb_seccomp_load(const sb_bpf *b) {
  struct sock_fprog prog = {.len = b->len, .filter = b->insns};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) return -errno;
  return 0;
}
