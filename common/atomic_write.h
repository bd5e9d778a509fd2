/* The one atomic file writer: a temporary file beside the target (same
 * directory, so rename(2) is atomic), written, flushed, fsync'd, then renamed
 * over it. Readers see the old file or the new one, never a part; a failure
 * leaves the old file and no temporary. Prefix sbu_. */
#ifndef SURGEBOX_ATOMIC_WRITE_H
#define SURGEBOX_ATOMIC_WRITE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

/* A file being written: write to f, then commit or abort. */
typedef struct {
  FILE *f;
  char path[PATH_MAX];
  char tmp[PATH_MAX + 32]; /* "<path>.tmp.<pid>.<n>" */
} sbu_atomic;

/* Open the temporary for path, created with mode (the umask applies, as for
 * open(2)): 0, or -1 with errno. */
int sbu_atomic_open(sbu_atomic *a, const char *path, mode_t mode);
/* Flush, fsync, close, rename over the path: 0, or -1 with errno (the
 * temporary removed). */
int sbu_atomic_commit(sbu_atomic *a);
/* Close and remove the temporary; the target is untouched. */
void sbu_atomic_abort(sbu_atomic *a);

/* The whole file at once: len bytes of data, or json as json-c prints it
 * with flags (JSON_C_TO_STRING_*), no final newline (as
 * json_object_to_file_ext), mode 0644 less the umask. 0, or -1 with errno. */
int sbu_write_atomic(const char *path, const void *data, size_t len, mode_t mode);
int sbu_write_json_atomic(const char *path, json_object *o, int flags);

#endif
