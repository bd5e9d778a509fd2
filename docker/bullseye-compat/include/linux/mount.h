/* Stands in for Linux 5.10's <linux/mount.h> when building on bullseye
 * (see ../../compat.h). That header defines MS_* as macros, which breaks
 * glibc 2.31's <sys/mount.h> (an enum of the same names) when both are
 * included, and it predates mount_setattr(2). This one takes MS_* from
 * glibc and adds what runners/ uses from Linux 5.2-5.12's UAPI: the mount
 * API's open_tree and move_mount flags (5.2; the real 5.10 header has them,
 * but it is the one this file replaces) and mount_setattr (5.12). */
#ifndef SURGEBOX_COMPAT_LINUX_MOUNT_H
#define SURGEBOX_COMPAT_LINUX_MOUNT_H

#include <fcntl.h>
#include <linux/types.h>
#include <sys/mount.h>

#define OPEN_TREE_CLONE 1
#define OPEN_TREE_CLOEXEC O_CLOEXEC

#define MOVE_MOUNT_F_SYMLINKS 0x00000001
#define MOVE_MOUNT_F_AUTOMOUNTS 0x00000002
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#define MOVE_MOUNT_T_SYMLINKS 0x00000010
#define MOVE_MOUNT_T_AUTOMOUNTS 0x00000020
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040

/* fsopen/fsconfig/fsmount (5.2; runners/ipcns.c mounts a private mqueue) */
#define FSOPEN_CLOEXEC 0x00000001
#define FSMOUNT_CLOEXEC 0x00000001
#define FSCONFIG_SET_FLAG 0
#define FSCONFIG_SET_STRING 1
#define FSCONFIG_SET_BINARY 2
#define FSCONFIG_SET_PATH 3
#define FSCONFIG_SET_PATH_EMPTY 4
#define FSCONFIG_SET_FD 5
#define FSCONFIG_CMD_CREATE 6
#define FSCONFIG_CMD_RECONFIGURE 7

#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
#define MOUNT_ATTR_NOEXEC 0x00000008

struct mount_attr {
  __u64 attr_set;
  __u64 attr_clr;
  __u64 propagation;
  __u64 userns_fd;
};
#define MOUNT_ATTR_SIZE_VER0 32

#endif
