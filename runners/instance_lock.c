/* An instance's directories (its state directory, its cgroups) are locked
 * for its whole life: an flock taken here, and judged stale by whether that
 * lock can be taken (internal.h, SB_INSTANCE_PREFIX). Used by runtime.c and
 * cgroup_fs.c alike; calls neither. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>

int sb_lock_dir(const char *dir, bool wait) {
  SBU_AUTOCLOSE int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return -errno;
  if (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0) return -errno;
  return sbu_take_fd(&fd);
}

/* "...-x<hex>": a name whose directory carries its own lock. */
bool sb_instance_locks_itself(const char *name) { return strstr(name + strlen(SB_INSTANCE_PREFIX), "-x") != NULL; }

bool sb_instance_is_stale(const char *parent, const char *name, const char *lock_dir) {
  char path[PATH_MAX];
  if (sb_instance_locks_itself(name)) {
    if (snprintf(path, sizeof path, "%s/%s", parent, name) >= (int)sizeof path) return false;
    SBU_AUTOCLOSE int fd = sb_lock_dir(path, false); /* the close releases the probe lock */
    return fd >= 0; /* else held (alive), or not a directory we can judge */
  }
  if (snprintf(path, sizeof path, "%s/%s.lock", lock_dir, name) >= (int)sizeof path) return false;
  SBU_AUTOCLOSE int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false; /* no lock file: not ours to judge */
  return flock(fd, LOCK_EX | LOCK_NB) == 0;
}
