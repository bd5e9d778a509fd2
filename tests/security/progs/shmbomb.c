/* Shared-memory bomb: memory RLIMIT_DATA does not see.
 *   shmbomb anon TOTAL_MIB       MAP_SHARED|MAP_ANONYMOUS, 8 MiB at a time, touched
 *   shmbomb file DIR TOTAL_MIB   8 MiB files written into DIR (a tmpfs: /dev/shm)
 *   shmbomb heap TOTAL_MIB       honest: malloc'd and touched
 *   shmbomb dontneed TOTAL_MIB   like anon, then MADV_DONTNEED: the pages stay in
 *                                the shared object but leave the process's RSS
 *   shmbomb memfd TOTAL_MIB      8 MiB memfds, written, kept open, never mapped
 *   shmbomb sysv TOTAL_MIB       8 MiB SysV segments, attached and touched
 *   shmbomb many COUNT           COUNT one-page MAP_SHARED|MAP_ANONYMOUS objects
 *                                (each a stat for the poller; COUNT capped at 65536)
 * Reports touched_mib / written_mib after every chunk (and write_errno when a
 * write fails, e.g. ENOSPC at the tmpfs cap), then holds everything for 3 s
 * (so a poller has time to see it) and reports held_mib=N before exiting 0.
 * TOTAL_MIB is capped at 1024. */
#include "hostile.h"

#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/shm.h>

#define CHUNK (8u << 20)
#define CAP_MIB 1024

static size_t anon(size_t total, bool dontneed) {
  size_t done = 0;
  while (done < total) {
    char *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      result("mmap_errno=%s", errname(errno));
      break;
    }
    memset(p, 0x5a, CHUNK);
    if (dontneed && madvise(p, CHUNK, MADV_DONTNEED) < 0) result("madvise_errno=%s", errname(errno));
    done += CHUNK >> 20;
    result("touched_mib=%zu", done);
  }
  return done;
}

/* CHUNK bytes into fd, 1 MiB at a time, counted into *done_mib. */
static bool write_chunk(int fd, size_t *done_mib) {
  static char buf[1 << 20];
  memset(buf, 0x5a, sizeof buf);
  for (size_t k = 0; k < CHUNK / sizeof buf; k++) {
    if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) {
      result("write_errno=%s", errname(errno));
      return false;
    }
    (*done_mib)++;
  }
  result("written_mib=%zu", *done_mib);
  return true;
}

static size_t files(const char *dir, size_t total) {
  size_t done = 0;
  for (int i = 0; done < total; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/shmbomb.%d", dir, i);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
      result("open_errno=%s", errname(errno));
      return done;
    }
    bool ok = write_chunk(fd, &done);
    close(fd);
    if (!ok) return done;
  }
  return done;
}

static size_t memfds(size_t total) {
  size_t done = 0;
  while (done < total) {
    int fd = memfd_create("shmbomb", 0);
    if (fd < 0) {
      result("memfd_errno=%s", errname(errno));
      return done;
    }
    if (!write_chunk(fd, &done)) return done; /* the memfds stay open */
  }
  return done;
}

static size_t many(size_t count) {
  size_t done = 0;
  for (; done < count; done++) {
    char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      result("mmap_errno=%s", errname(errno));
      break;
    }
    p[0] = 1;
  }
  result("mapped=%zu", done);
  return done;
}

static size_t sysv(size_t total) {
  size_t done = 0;
  while (done < total) {
    int id = shmget(IPC_PRIVATE, CHUNK, IPC_CREAT | 0600);
    char *p = id < 0 ? (void *)-1 : shmat(id, NULL, 0);
    if (p == (void *)-1) {
      result("shm_errno=%s", errname(errno));
      break;
    }
    memset(p, 0x5a, CHUNK);
    done += CHUNK >> 20;
    result("touched_mib=%zu", done);
  }
  return done;
}

static size_t heap(size_t total) {
  char *p = malloc(total << 20);
  if (!p) {
    result("alloc_errno=%s", errname(errno));
    return 0;
  }
  memset(p, 0x5a, total << 20);
  __asm__ volatile("" : : "r"(p) : "memory"); /* else the compiler drops the unread memset */
  result("touched_mib=%zu", total);
  return total;
}

int main(int argc, char **argv) {
  alarm(60);
  if (argc < 3) return 2;
  const char *mode = argv[1];
  size_t total = strtoul(argv[argc - 1], NULL, 10), done;
  if (strcmp(mode, "many") == 0) {
    done = many(total > 65536 ? 65536 : total);
  } else {
    if (total > CAP_MIB) total = CAP_MIB;
    if (strcmp(mode, "anon") == 0) done = anon(total, false);
    else if (strcmp(mode, "dontneed") == 0) done = anon(total, true);
    else if (strcmp(mode, "memfd") == 0) done = memfds(total);
    else if (strcmp(mode, "sysv") == 0) done = sysv(total);
    else if (strcmp(mode, "file") == 0 && argc == 4) done = files(argv[2], total);
    else if (strcmp(mode, "heap") == 0) done = heap(total);
    else return 2;
  }
  sleep(3);
  result("held_mib=%zu", done);
  return 0;
}
