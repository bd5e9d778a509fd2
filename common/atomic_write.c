/* The atomic writer: see atomic_write.h. */
#include "atomic_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/* Unique within this process; O_EXCL catches another process's (or a
 * crashed one's with our pid) leftover. */
static atomic_uint next_tmp;

int sbu_atomic_open(sbu_atomic *a, const char *path, mode_t mode) {
  memset(a, 0, sizeof *a);
  if (strlen(path) >= sizeof a->path) return errno = ENAMETOOLONG, -1;
  strcpy(a->path, path);
  for (int tries = 0; tries < 100; tries++) {
    snprintf(a->tmp, sizeof a->tmp, "%s.tmp.%d.%u", path, (int)getpid(), atomic_fetch_add(&next_tmp, 1));
    int fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) return -1;
    if (!(a->f = fdopen(fd, "w"))) {
      int e = errno;
      close(fd);
      unlink(a->tmp);
      return errno = e, -1;
    }
    return 0;
  }
  return errno = EEXIST, -1;
}

int sbu_atomic_commit(sbu_atomic *a) {
  int rc = 0, e = 0;
  if (fflush(a->f) != 0 || ferror(a->f) || fsync(fileno(a->f)) != 0) rc = -1, e = errno ? errno : EIO;
  if (fclose(a->f) != 0 && !rc) rc = -1, e = errno;
  a->f = NULL;
  if (!rc && rename(a->tmp, a->path) != 0) rc = -1, e = errno;
  if (rc) {
    unlink(a->tmp);
    errno = e;
  }
  return rc;
}

void sbu_atomic_abort(sbu_atomic *a) {
  int e = errno;
  if (a->f) fclose(a->f);
  a->f = NULL;
  unlink(a->tmp);
  errno = e;
}

int sbu_write_atomic(const char *path, const void *data, size_t len, mode_t mode) {
  sbu_atomic a;
  if (sbu_atomic_open(&a, path, mode) < 0) return -1;
  if (len && fwrite(data, 1, len, a.f) != len) {
    sbu_atomic_abort(&a);
    return -1;
  }
  return sbu_atomic_commit(&a);
}

int sbu_write_json_atomic(const char *path, json_object *o, int flags) {
  size_t len;
  const char *text = json_object_to_json_string_length(o, flags, &len);
  if (!text) return errno = ENOMEM, -1;
  sbu_atomic a;
  if (sbu_atomic_open(&a, path, 0644) < 0) return -1;
  if (fwrite(text, 1, len, a.f) != len) {
    sbu_atomic_abort(&a);
    return -1;
  }
  return sbu_atomic_commit(&a);
}
