/* Evicts, or asks about, the cached pages of files of the read-only binds.
 *   pagecache PATH...
 * For each path: a read-only mapping of it touched and given MADV_PAGEOUT and
 * MADV_COLD, then (unmapped) posix_fadvise(POSIX_FADV_DONTNEED) over the
 * whole file, then cachestat (6.5+). Each outcome is reported; whether the host's cached
 * pages survived is what the driver checks from outside. */
#include "hostile.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif

struct cs_range {
  uint64_t off, len;
};
struct cs {
  uint64_t cache, dirty, writeback, evicted, recently_evicted;
};

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      result("open.%d=%s", i, errname(errno));
      continue;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
      volatile const char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
      if (m == MAP_FAILED) {
        result("mmap.%d=%s", i, errname(errno));
      } else {
        unsigned sum = 0;
        for (off_t o = 0; o < st.st_size; o += 4096) sum += (unsigned)m[o];
        result("touched.%d=%u", i, sum);
        result("pageout.%d=%s", i, outcome(madvise((void *)m, (size_t)st.st_size, MADV_PAGEOUT)));
        result("cold.%d=%s", i, outcome(madvise((void *)m, (size_t)st.st_size, MADV_COLD)));
        munmap((void *)m, (size_t)st.st_size);
      }
    }
    /* last, with no mapping left: DONTNEED skips mapped pages */
    int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); /* returns the error, not -1 */
    result("fadvise.%d=%s", i, errname(e));
    struct cs_range r = {0, 0};
    struct cs c;
    memset(&c, 0, sizeof c);
    long rc = syscall(SYS_cachestat, fd, &r, &c, 0);
    result("cachestat.%d=%s", i, outcome(rc));
    if (rc == 0) result("cached.%d=%llu", i, (unsigned long long)c.cache);
    close(fd);
  }
  return 0;
}
