/* Syscalls the seccomp policy must deny with EPERM, each called with
 * arguments that would be harmless (bad pointers, bad fds, bad magic numbers)
 * even if the call got through. */
#include "hostile.h"

#include <linux/reboot.h>
#include <sys/syscall.h>

#define TRY(name, ...) result("sys.%s=%s", #name, outcome(syscall(__VA_ARGS__)))

int main(void) {
  void *bad = (void *)-1L;
  TRY(bpf, SYS_bpf, 5 /* BPF_PROG_LOAD */, NULL, 0);
  TRY(perf_event_open, SYS_perf_event_open, NULL, 0, -1, -1, 0);
  TRY(keyctl, SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0);
  TRY(add_key, SYS_add_key, "user", "sbtest", "x", 1, 0 /* invalid keyring */);
  TRY(request_key, SYS_request_key, "user", "sbtest", NULL, 0);
  TRY(userfaultfd, SYS_userfaultfd, 0);
#ifdef SYS_io_uring_setup
  TRY(io_uring_setup, SYS_io_uring_setup, 1, NULL);
  TRY(io_uring_enter, SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0);
  TRY(io_uring_register, SYS_io_uring_register, -1, 0, NULL, 0);
#endif
  /* native AIO: invalid sizes and contexts (EINVAL if they got through) */
  TRY(io_setup, SYS_io_setup, 0, NULL);
  TRY(io_destroy, SYS_io_destroy, 0);
  TRY(io_submit, SYS_io_submit, 0, 0, NULL);
  TRY(io_cancel, SYS_io_cancel, 0, NULL, NULL);
  TRY(io_getevents, SYS_io_getevents, 0, 0, 0, NULL, NULL);
#ifdef SYS_io_pgetevents
  TRY(io_pgetevents, SYS_io_pgetevents, 0, 0, 0, NULL, NULL, NULL);
#endif
  TRY(open_by_handle_at, SYS_open_by_handle_at, -1, NULL, 0);
  TRY(name_to_handle_at, SYS_name_to_handle_at, -1, bad, bad, bad, 0);
  TRY(kexec_load, SYS_kexec_load, 0, 0, NULL, 0xdead0000UL);
#ifdef SYS_kexec_file_load
  TRY(kexec_file_load, SYS_kexec_file_load, -1, -1, 0, NULL, 0xdead0000UL);
#endif
  TRY(init_module, SYS_init_module, NULL, 0, "");
  TRY(finit_module, SYS_finit_module, -1, "", 0);
  TRY(delete_module, SYS_delete_module, bad, 0);
  /* Bad magic: even with CAP_SYS_BOOT this returns EINVAL, never reboots. */
  TRY(reboot, SYS_reboot, 0, 0, 0, NULL);
  TRY(swapon, SYS_swapon, bad, 0);
  TRY(swapoff, SYS_swapoff, bad);
  TRY(acct, SYS_acct, bad);
  TRY(quotactl, SYS_quotactl, 0, bad, 0, NULL);
  TRY(ptrace, SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0);
  TRY(process_vm_readv, SYS_process_vm_readv, 1, NULL, 0, NULL, 0, 0);
  TRY(process_vm_writev, SYS_process_vm_writev, 1, NULL, 0, NULL, 0, 0);
  TRY(unshare, SYS_unshare, 0x10000000 /* CLONE_NEWUSER */);
  TRY(setns, SYS_setns, -1, 0);
  TRY(mount, SYS_mount, bad, bad, bad, 0, NULL);
  TRY(umount2, SYS_umount2, bad, 0);
  TRY(pivot_root, SYS_pivot_root, bad, bad);
#ifdef SYS_fsopen
  TRY(fsopen, SYS_fsopen, bad, 0);
#endif
  TRY(socket_inet, SYS_socket, 2 /* AF_INET */, 1, 0);
  TRY(socket_netlink, SYS_socket, 16 /* AF_NETLINK */, 3, 0);
  (void)LINUX_REBOOT_MAGIC1;
  return 0;
}
