/* The plan in a memfd (runners/plan.c: sb_plan_memfd, sb_plan_map,
 * sb_plan_read_userns), as the spawner and a warm zygote's child read it:
 * every field back as written by hand here; the mapping private (the
 * reader's pointer arrays never reach the memfd another reader maps); and
 * every memfd that is not exactly one whole plan refused with nothing
 * mapped: empty, short, a byte too many, a size other than the one the
 * request announced, garbage, the wrong magic, no descriptor. The mode
 * reader (what a zygote reads of a job) gives the mode, or refuses. Run it
 * under ASan too (the sanitizer build). */
#include "check.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>

static int memfd_of(const void *bytes, size_t len) {
  int fd = memfd_create("test-plan", MFD_CLOEXEC);
  if (fd >= 0 && len && write(fd, bytes, len) != (ssize_t)len) {
    close(fd);
    return -1;
  }
  return fd;
}

/* sb_plan_map must refuse fd (announced len) with nothing mapped and the plan reset. */
static void refused(int fd, size_t len, const char *what) {
  sb_plan q;
  void *map = (void *)1;
  size_t map_len = 1;
  int rc = sb_plan_map(fd, len, &q, &map, &map_len);
  if (rc != -EINVAL) fprintf(stderr, "not refused: %s (%d)\n", what, rc);
  CHECK(rc == -EINVAL);
  CHECK(map == NULL && map_len == 0);
  CHECK(q.argv == NULL && q.cwd == NULL && q.ctl_fd == -1 && q.stdin_fd == -1);
}

int main(void) {
  static const char *const argv[] = {"/usr/bin/python3", "main.py", "x y", NULL};
  static const char *const envp[] = {"PATH=/usr/bin", "LANG=C.UTF-8", "EMPTY=", NULL};
  struct sock_filter insns[2] = {{0x20, 0, 0, 4}, {0x06, 0, 0, 0x7fff0000}};
  sb_bpf bpf = {insns, 2};
  sb_limits lim;
  memset(&lim, 0, sizeof lim);
  lim.cpu_time_s = 3.25;
  lim.pids = 17;
  sb_plan p;
  sb_plan_init(&p);
  p.stdin_fd = 0; /* descriptors are not in the memfd */
  p.userns = false;
  p.mounts.root = p.mounts.newroot = p.mounts.empty_file = ""; /* as warm.c sends a job */
  p.uid = 61001;
  p.gid = 61002;
  p.limits = &lim;
  p.rlimits.memory_by_rlimit = true;
  p.filter = &bpf;
  p.argv = argv;
  p.envp = envp;
  p.cwd = "/app/sub dir";

  size_t len = 0;
  int fd = sb_plan_memfd(&p, "test-plan", &len);
  CHECK(fd >= 0 && len > 0);
  CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
  CHECK(lseek(fd, 0, SEEK_END) == (off_t)len);
  unsigned char *orig = malloc(len);
  CHECK(orig && pread(fd, orig, len, 0) == (ssize_t)len);
  CHECK(sb_plan_read_userns(fd) == 0);

  /* the round trip, with the announced size and with none (0: the memfd's) */
  for (int announced = 0; announced < 2; announced++) {
    sb_plan q;
    void *map = NULL;
    size_t map_len = 0;
    CHECK(sb_plan_map(fd, announced ? len : 0, &q, &map, &map_len) == 0);
    CHECK(map != NULL && map_len == len);
    CHECK(!q.userns && q.stdin_fd == -1 && q.ctl_fd == -1);
    CHECK(q.uid == 61001 && q.gid == 61002);
    CHECK_NEAR(q.limits->cpu_time_s, 3.25, 1e-12);
    CHECK(q.limits->pids == 17);
    CHECK(q.rlimits.memory_by_rlimit && !q.rlimits.pids_by_rlimit);
    CHECK(q.filter->len == 2 && q.filter->insns[0].k == 4 && q.filter->insns[1].code == 0x06);
    CHECK_STR(q.argv[0], "/usr/bin/python3");
    CHECK_STR(q.argv[2], "x y");
    CHECK(q.argv[3] == NULL);
    CHECK_STR(q.envp[2], "EMPTY=");
    CHECK(q.envp[3] == NULL);
    CHECK_STR(q.cwd, "/app/sub dir");
    CHECK_STR(q.mounts.newroot, "");
    CHECK(q.mounts.workspace == NULL && q.mounts.n_extra == 0 && q.mounts.submounts == NULL);
    /* pointers into the mapping; the memfd itself unchanged (private) */
    CHECK((const char *)q.argv[1] > (const char *)map && (const char *)q.argv[1] < (const char *)map + map_len);
    unsigned char *now = malloc(len);
    CHECK(now && pread(fd, now, len, 0) == (ssize_t)len && memcmp(now, orig, len) == 0);
    free(now);
    CHECK(munmap(map, map_len) == 0);
  }

  /* a size other than the announced one */
  refused(fd, len + 1, "announced a byte more");
  refused(fd, len - 1, "announced a byte less");
  refused(-1, 0, "no descriptor");
  refused(-1, len, "no descriptor, a size announced");
  int dn = open("/dev/null", O_RDONLY | O_CLOEXEC);
  refused(dn, 0, "/dev/null");
  CHECK(sb_plan_read_userns(dn) == -EINVAL);
  close(dn);
  CHECK(sb_plan_read_userns(-1) == -EINVAL);

  /* every truncation of the memfd, with no size announced (a zygote's child) */
  for (size_t n = 0; n < len; n += (n < 64 || len - n < 64) ? 1 : 13) {
    int t = memfd_of(orig, n);
    CHECK(t >= 0);
    refused(t, 0, "truncated");
    if (n < 4) CHECK(sb_plan_read_userns(t) == -EINVAL); /* no magic whole */
    close(t);
  }
  /* a byte too many: the blob's own length disagrees */
  unsigned char *more = calloc(1, len + 1);
  memcpy(more, orig, len);
  int t = memfd_of(more, len + 1);
  refused(t, 0, "a byte too many");
  refused(t, len + 1, "a byte too many, announced");
  close(t);
  free(more);
  /* the wrong magic: neither reader takes it */
  unsigned char *bad = malloc(len);
  memcpy(bad, orig, len);
  bad[0] ^= 0x5a;
  t = memfd_of(bad, len);
  refused(t, 0, "wrong magic");
  CHECK(sb_plan_read_userns(t) == -EINVAL);
  close(t);
  /* garbage of the plan's size */
  srand(4040);
  for (int round = 0; round < 200; round++) {
    for (size_t i = 0; i < len; i++) bad[i] = (unsigned char)rand();
    t = memfd_of(bad, len);
    refused(t, 0, "garbage");
    close(t);
  }
  free(bad);
  close(fd);

  /* user-namespace mode: what a zygote reads of a job, and nothing else needed */
  p.userns = true;
  fd = sb_plan_memfd(&p, "test-plan", &len);
  CHECK(fd >= 0);
  CHECK(sb_plan_read_userns(fd) == 1);
  sb_plan q;
  void *map;
  size_t map_len;
  CHECK(sb_plan_map(fd, len, &q, &map, &map_len) == 0 && q.userns);
  munmap(map, map_len);
  close(fd);
  free(orig);
  return check_exit();
}
