/* libsbwarm.so: the pages a warm program's process will write, copied in
 * one call instead of one fault each.
 *
 * Why: after the fork every page the child writes is a copy-on-write
 * fault, and a warm check writes about 480 of the zygote's pages. On a VM
 * whose page tables the hypervisor shadows a fault costs 15-17 us, while
 * process_madvise(MADV_POPULATE_WRITE) over the same pages, one call for
 * all of them, costs about 5 us a page (bench/RESULTS.md, stop 46): the
 * fault's entry and exit, not the copy, is the cost.
 *
 * Which pages: once per zygote, before READY, a rehearsal (sbzygote_body.py
 * _rehearse) forks a child that runs a fixed program of ours through the
 * plain protocol's path (start-up of the job's state, the program, its
 * short exit) and, at that exit, reports the pages it holds alone
 * (sbwarm_hot_report: present and exclusively mapped, /proc/self/pagemap).
 * The zygote keeps those that lie in its own private writable mappings
 * (sbwarm_hot_set). No job's code or data takes part: what one job's
 * process is given cannot depend on another job.
 *
 * Where: the program's process populates them (sb_warm_hot_apply) as soon
 * as it has joined the job's cgroup (sbwarm_program), so that the copies
 * are charged to the job's memory and CPU as its faults would have been,
 * before its uid, capabilities and seccomp filter (which refuses
 * process_madvise) are the job's. A page the job would not have written is
 * a copy it did not need (about 2 % of the set for CRUXEval's programs):
 * within what a cold start of the same interpreter holds. A range the
 * zygote has since unmapped fails alone; a kernel without
 * MADV_POPULATE_WRITE (before 5.14) or without process_madvise on itself
 * for it (before 6.13: one madvise a range then) changes nothing but the
 * time. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define HOT_MAX_RANGES 1024 /* UIO_MAXIOV: one process_madvise call */
#define HOT_MAX_PAGES 4096  /* 16 MiB: a warm check writes about 480 */
#define PM_PRESENT (1ull << 63)
#define PM_EXCLUSIVE (1ull << 56)

static struct iovec hot[HOT_MAX_RANGES];
static int n_hot;

#define MAPS_MAX (1u << 20)   /* bytes of /proc/self/maps read: a zygote's are ~30 KB */
#define SPANS_MAX 8192        /* private writable mappings kept */

typedef struct {
  uintptr_t start, end;
} span;

/* The private writable mappings ("rw-p") of /proc/self/maps, in address
 * order, into *out (malloc'd): how many, or -errno. Parsed once per call
 * site, not once per range. */
static int private_writable(span **out) {
  *out = NULL;
  char *maps = malloc(MAPS_MAX);
  span *v = malloc(SPANS_MAX * sizeof *v);
  int got = maps && v ? sb_read_file("/proc/self/maps", maps, MAPS_MAX) : -ENOMEM;
  if (got < 0) {
    free(maps);
    free(v);
    return got;
  }
  if ((size_t)got + 1 >= MAPS_MAX) { /* cut at the cap: a line cut short is no line */
    char *nl = strrchr(maps, '\n');
    if (nl) nl[1] = '\0';
  }
  int n = 0;
  for (const char *p = maps; *p && n < SPANS_MAX;) {
    unsigned long a, b;
    char perms[5];
    if (sscanf(p, "%lx-%lx %4s", &a, &b, perms) == 3 && strcmp(perms, "rw-p") == 0 && a < b)
      v[n++] = (span){(uintptr_t)a, (uintptr_t)b};
    const char *nl = strchr(p, '\n');
    if (!nl) break;
    p = nl + 1;
  }
  free(maps);
  *out = v;
  return n;
}

static int append(uint64_t *out, int n, int max, uintptr_t page, size_t pg) {
  if (n > 0 && out[2 * (n - 1)] + out[2 * (n - 1) + 1] == page) {
    out[2 * (n - 1) + 1] += pg;
    return n;
  }
  if (n == max) return n;
  out[2 * n] = page;
  out[2 * n + 1] = pg;
  return n + 1;
}

/* In the rehearsal's child, at its short exit: every page it holds alone
 * in a private writable mapping, as (start, length) pairs of uint64_t
 * written to fd (a pipe to the zygote). How many pairs, or -errno. */
SBWARM_API int sbwarm_hot_report(int fd) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  span *spans;
  int n_spans = private_writable(&spans);
  int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  uint64_t *out = malloc(2 * HOT_MAX_RANGES * sizeof *out);
  int n = 0, rc = 0;
  if (n_spans < 0) rc = n_spans;
  else if (pm < 0 || !out) rc = -(errno ? errno : ENOMEM);
  uint64_t e[512];
  for (int k = 0; !rc && k < n_spans; k++)
    for (uintptr_t page = spans[k].start, end = spans[k].end; page < end;) {
      size_t want = (end - page) / pg < 512 ? (end - page) / pg : 512;
      ssize_t got = pread(pm, e, want * sizeof *e, (off_t)(page / pg * sizeof *e));
      if (got <= 0) break;
      for (size_t i = 0; i < (size_t)got / sizeof *e; i++, page += pg)
        if ((e[i] & PM_PRESENT) && (e[i] & PM_EXCLUSIVE)) n = append(out, n, HOT_MAX_RANGES, page, pg);
    }
  for (size_t off = 0, len = (size_t)n * 2 * sizeof *out; !rc && off < len;) {
    ssize_t w = write(fd, (char *)out + off, len - off);
    if (w < 0 && errno != EINTR) rc = -errno;
    if (w > 0) off += (size_t)w;
  }
  if (pm >= 0) close(pm);
  free(spans);
  free(out);
  return rc ? rc : n;
}

/* In the zygote, once: the rehearsal's report (len bytes of pairs), each
 * range clipped to the zygote's own private writable mappings, at most
 * HOT_MAX_PAGES pages. How many ranges are kept, or -errno. */
SBWARM_API int sbwarm_hot_set(const void *report, size_t len) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  span *spans;
  int n_spans = private_writable(&spans);
  if (n_spans < 0) return n_spans;
  const uint64_t *pairs = report;
  size_t n_pairs = len / (2 * sizeof *pairs), pages = 0;
  n_hot = 0;
  for (size_t i = 0; i < n_pairs && n_hot < HOT_MAX_RANGES && pages < HOT_MAX_PAGES; i++) {
    uint64_t a = pairs[2 * i], b = a + pairs[2 * i + 1];
    if (a % pg || b % pg || b <= a) continue;
    for (int k = 0; k < n_spans && n_hot < HOT_MAX_RANGES && pages < HOT_MAX_PAGES; k++) {
      uint64_t lo = a > spans[k].start ? a : spans[k].start, hi = b < spans[k].end ? b : spans[k].end;
      if (lo >= hi) continue;
      if (pages + (hi - lo) / pg > HOT_MAX_PAGES) hi = lo + (HOT_MAX_PAGES - pages) * pg;
      hot[n_hot].iov_base = (void *)(uintptr_t)lo;
      hot[n_hot].iov_len = (size_t)(hi - lo);
      n_hot++;
      pages += (hi - lo) / pg;
    }
  }
  free(spans);
  return n_hot;
}

/* The set, as (start, length) pairs in out (max pairs at most): how many
 * pairs (tests/warm/test_hot_pages.py, from a program's own process). */
SBWARM_API int sbwarm_hot_ranges(uint64_t *out, int max) {
  int n = 0;
  for (; n < n_hot && n < max; n++) {
    out[2 * n] = (uint64_t)(uintptr_t)hot[n].iov_base;
    out[2 * n + 1] = hot[n].iov_len;
  }
  return n;
}

/* One madvise a range: a kernel without process_madvise's advice on
 * itself. Two refused as invalid: no MADV_POPULATE_WRITE at all (5.14). */
static void populate_each(int from) {
  int einval = 0;
  for (int i = from; i < n_hot && einval < 2; i++)
    if (madvise(hot[i].iov_base, hot[i].iov_len, MADV_POPULATE_WRITE) < 0 && errno == EINVAL) einval++;
}

/* In the program's process, once it is in the job's cgroup: the set
 * written in (each page its own copy). Errors change nothing but time. */
void sb_warm_hot_apply(void) {
  if (!n_hot) return;
  int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  if (pidfd < 0) {
    populate_each(0);
    return;
  }
  for (int i = 0, again = 0; i < n_hot;) {
    ssize_t done = syscall(SYS_process_madvise, pidfd, &hot[i], (size_t)(n_hot - i), MADV_POPULATE_WRITE, 0u);
    if (done < 0) {
      if ((errno == EINTR || errno == EAGAIN) && ++again < 8) continue;
      if (errno == EINVAL || errno == ENOSYS || errno == EPERM) { /* not on this kernel: each range alone */
        populate_each(i);
        break;
      }
      i++; /* (ENOMEM: that range is no longer mapped) */
      continue;
    }
    /* the ranges done whole; one cut short failed: skip it */
    while (i < n_hot && (size_t)done >= hot[i].iov_len) done -= (ssize_t)hot[i++].iov_len;
    if (i < n_hot && done >= 0) i++;
  }
  close(pidfd);
}

/* The plain protocol's child (tests, bench/warm_python.py), which joins no
 * cgroup: the same, from Python. */
SBWARM_API void sbwarm_hot_apply(void) { sb_warm_hot_apply(); }
