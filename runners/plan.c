/* The plan of the sandbox's first process (internal.h, "plan.c"), packed
 * once: one marshal/unmarshal pair, as minijail_marshal/minijail_unmarshal.
 *
 * The blob, all in one buffer so the reader maps it once:
 *   plan_wire                 the scalars and the counts
 *   pointer area              zeroed: unmarshal writes argv, envp, submounts
 *                             (each NULL-terminated), the extra mounts and
 *                             the sb_bpf there
 *   bpf_len sock_filter       the seccomp program
 *   strings                   NUL-terminated: the present ones of
 *                             plan_strings, argv, envp, per extra mount its
 *                             source, target and "w" or "r", the submounts
 * Descriptors travel beside it (SCM_RIGHTS, spawner.c). The blob travels
 * in a memfd (sb_plan_memfd), mapped by its reader (sb_plan_map): the
 * spawner's request, a warm job's (warm.c, warm_lib.c); a zygote reads no
 * more than its mode (sb_plan_read_userns). */
#include "internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

_Static_assert(offsetof(sb_plan, procs_fd) + sizeof(int[SB_PLAN_PROCS]) == offsetof(sb_plan, fds) + sizeof(int[SB_PLAN_NFD]),
               "a descriptor of sb_plan goes before procs_fd, and SB_PLAN_NFD counts it");
_Static_assert(SB_SPAWN_NFD <= 32, "fd_mask is 32 bits");

#define PLAN_MAGIC 0x53425031u
#define PLAN_N_STRINGS 7
#define PLAN_MAX_COUNT (1u << 24) /* argv, envp, mounts: far above any cap of the daemon's */
#define PLAN_MAX_BYTES ((uint64_t)1 << 34)

typedef struct {
  uint32_t magic, present; /* present: bit i for plan_strings' i-th string */
  uint32_t argc, envc, n_extra, n_submounts, bpf_len;
  uint8_t userns, template; /* not bool: any byte the blob holds is a valid value */
  uid_t uid, mount_uid;
  gid_t gid, mount_gid;
  uint64_t tmp_mib, app_mib;
  sb_limits limits;
  sb_rlimit_plan rlimits;
  uint64_t len; /* the whole blob */
} plan_wire;

/* The plan's single strings, in the blob's order. A new string field is a
 * line here. The first four are required (the init cannot start without). */
static const char **plan_strings(sb_plan *p, const char **s[PLAN_N_STRINGS]) {
  s[0] = &p->mounts.root;
  s[1] = &p->mounts.newroot;
  s[2] = &p->mounts.empty_file;
  s[3] = &p->cwd;
  s[4] = &p->mounts.workspace;
  s[5] = &p->mounts.etc_passwd;
  s[6] = &p->mounts.etc_group;
  return s[0];
}
#define PLAN_REQUIRED 0xfu

static size_t strv_count(const char *const *v) {
  size_t n = 0;
  while (v && v[n]) n++;
  return n;
}

/* Bytes of the pointer area for these counts (aligned for the sb_bpf and
 * sb_mount written there). */
static uint64_t pointer_area(uint64_t argc, uint64_t envc, uint64_t n_sub, uint64_t n_extra) {
  uint64_t n = (argc + 1 + envc + 1 + n_sub + 1) * sizeof(char *) + n_extra * sizeof(sb_mount) + sizeof(sb_bpf);
  return (n + 7) & ~(uint64_t)7;
}

static char *put(char *at, const char *s) {
  size_t n = strlen(s) + 1;
  memcpy(at, s, n);
  return at + n;
}

int sb_plan_marshal(const sb_plan *plan, void **blob, size_t *len) {
  *blob = NULL;
  *len = 0;
  sb_plan *p = (sb_plan *)plan; /* plan_strings' table only reads it here */
  const sb_mount_plan *m = &p->mounts;
  plan_wire w;
  memset(&w, 0, sizeof w);
  w.magic = PLAN_MAGIC;
  const char **s[PLAN_N_STRINGS];
  plan_strings(p, s);
  size_t str_bytes = 0;
  for (int i = 0; i < PLAN_N_STRINGS; i++)
    if (*s[i]) {
      w.present |= 1u << i;
      str_bytes += strlen(*s[i]) + 1;
    }
  size_t argc = strv_count(p->argv), envc = strv_count(p->envp), n_sub = strv_count(m->submounts);
  if (argc >= PLAN_MAX_COUNT || envc >= PLAN_MAX_COUNT || n_sub >= PLAN_MAX_COUNT || m->n_extra >= PLAN_MAX_COUNT)
    return -E2BIG;
  for (size_t i = 0; i < argc; i++) str_bytes += strlen(p->argv[i]) + 1;
  for (size_t i = 0; i < envc; i++) str_bytes += strlen(p->envp[i]) + 1;
  for (size_t i = 0; i < m->n_extra; i++) str_bytes += strlen(m->extra[i].source) + strlen(m->extra[i].target) + 4;
  for (size_t i = 0; i < n_sub; i++) str_bytes += strlen(m->submounts[i]) + 1;
  w.argc = (uint32_t)argc;
  w.envc = (uint32_t)envc;
  w.n_extra = (uint32_t)m->n_extra;
  w.n_submounts = (uint32_t)n_sub;
  w.bpf_len = p->filter ? p->filter->len : 0;
  w.userns = p->userns;
  w.template = m->template;
  w.uid = p->uid;
  w.gid = p->gid;
  w.mount_uid = m->uid;
  w.mount_gid = m->gid;
  w.tmp_mib = m->tmp_mib;
  w.app_mib = m->app_mib;
  if (p->limits) w.limits = *p->limits;
  w.rlimits = p->rlimits;
  size_t ptrs = (size_t)pointer_area(argc, envc, n_sub, m->n_extra), bpf = (size_t)w.bpf_len * sizeof(struct sock_filter);
  w.len = sizeof w + ptrs + bpf + str_bytes;
  if (w.len > PLAN_MAX_BYTES) return -E2BIG;
  char *buf = calloc(1, (size_t)w.len);
  if (!buf) return -ENOMEM;
  memcpy(buf, &w, sizeof w);
  if (bpf) memcpy(buf + sizeof w + ptrs, p->filter->insns, bpf);
  char *at = buf + sizeof w + ptrs + bpf;
  for (int i = 0; i < PLAN_N_STRINGS; i++)
    if (*s[i]) at = put(at, *s[i]);
  for (size_t i = 0; i < argc; i++) at = put(at, p->argv[i]);
  for (size_t i = 0; i < envc; i++) at = put(at, p->envp[i]);
  for (size_t i = 0; i < m->n_extra; i++) {
    at = put(at, m->extra[i].source);
    at = put(at, m->extra[i].target);
    at = put(at, m->extra[i].writable ? "w" : "r");
  }
  for (size_t i = 0; i < n_sub; i++) at = put(at, m->submounts[i]);
  *blob = buf;
  *len = (size_t)w.len;
  return 0;
}

static const char *next_str(const char **at, const char *end) {
  if (*at >= end) return NULL;
  const char *s = *at, *z = memchr(s, '\0', (size_t)(end - s));
  if (!z) return NULL;
  *at = z + 1;
  return s;
}

/* n strings into v[0..n-1], v[n] NULL: 0, or -EINVAL when the blob ends first. */
static int next_strv(const char **at, const char *end, const char **v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (!(v[i] = next_str(at, end))) return -EINVAL;
  v[n] = NULL;
  return 0;
}

int sb_plan_unmarshal(void *blob, size_t len, sb_plan *p) {
  sb_plan_init(p);
  plan_wire *w = blob;
  if (!blob || len < sizeof *w || w->magic != PLAN_MAGIC || w->len != len) return -EINVAL;
  if (w->argc >= PLAN_MAX_COUNT || w->envc >= PLAN_MAX_COUNT || w->n_submounts >= PLAN_MAX_COUNT ||
      w->n_extra >= PLAN_MAX_COUNT || w->bpf_len > 0xffff || (w->present & PLAN_REQUIRED) != PLAN_REQUIRED ||
      (w->present >> PLAN_N_STRINGS))
    return -EINVAL;
  /* every count below 2^24: none of these sums can overflow 64 bits */
  uint64_t ptrs = pointer_area(w->argc, w->envc, w->n_submounts, w->n_extra);
  uint64_t bpf = (uint64_t)w->bpf_len * sizeof(struct sock_filter);
  uint64_t min_strings = (uint64_t)w->argc + w->envc + (uint64_t)w->n_extra * 3 + w->n_submounts;
  if (sizeof *w + ptrs + bpf + min_strings > len) return -EINVAL;
  char *base = blob;
  const char **argv = (const char **)(base + sizeof *w), **envp = argv + w->argc + 1,
             **sub = envp + w->envc + 1;
  sb_mount *extra = (sb_mount *)(sub + w->n_submounts + 1);
  sb_bpf *filter = (sb_bpf *)(extra + w->n_extra);
  const char *at = base + sizeof *w + ptrs + bpf, *end = base + len;
  const char **s[PLAN_N_STRINGS];
  plan_strings(p, s);
  for (int i = 0; i < PLAN_N_STRINGS; i++)
    if (((w->present >> i) & 1) && !(*s[i] = next_str(&at, end))) return -EINVAL;
  if (next_strv(&at, end, argv, w->argc) < 0 || next_strv(&at, end, envp, w->envc) < 0) return -EINVAL;
  for (uint32_t i = 0; i < w->n_extra; i++) {
    const char *rw;
    if (!(extra[i].source = next_str(&at, end)) || !(extra[i].target = next_str(&at, end)) ||
        !(rw = next_str(&at, end)))
      return -EINVAL;
    extra[i].writable = rw[0] == 'w';
  }
  if (next_strv(&at, end, sub, w->n_submounts) < 0 || at != end) return -EINVAL;
  filter->insns = (struct sock_filter *)(base + sizeof *w + ptrs);
  filter->len = (unsigned short)w->bpf_len;
  p->userns = w->userns != 0;
  p->mounts.template = w->template != 0;
  p->mounts.uid = w->mount_uid;
  p->mounts.gid = w->mount_gid;
  p->mounts.tmp_mib = w->tmp_mib;
  p->mounts.app_mib = w->app_mib;
  p->mounts.extra = extra;
  p->mounts.n_extra = w->n_extra;
  p->mounts.submounts = w->n_submounts ? sub : NULL;
  p->uid = w->uid;
  p->gid = w->gid;
  p->limits = &w->limits;
  p->rlimits = w->rlimits;
  p->filter = filter;
  p->argv = argv;
  p->envp = envp;
  return 0;
}

int sb_plan_memfd(const sb_plan *p, const char *name, size_t *len) {
  void *buf;
  int rc = sb_plan_marshal(p, &buf, len);
  if (rc) return rc;
  int fd = memfd_create(name, MFD_CLOEXEC);
  rc = fd < 0 ? -errno : 0;
  for (size_t off = 0; !rc && off < *len;) {
    ssize_t n = write(fd, (char *)buf + off, *len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) rc = n < 0 ? -errno : -EIO;
    else off += (size_t)n;
  }
  free(buf);
  if (rc) {
    if (fd >= 0) close(fd);
    return rc;
  }
  return fd;
}

int sb_plan_map(int fd, size_t len, sb_plan *p, void **map, size_t *map_len) {
  sb_plan_init(p);
  *map = NULL;
  *map_len = 0;
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || st.st_size <= 0 || (uint64_t)st.st_size > PLAN_MAX_BYTES ||
      (len && (uint64_t)st.st_size != len))
    return -EINVAL;
  void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED) return -errno;
  int rc = sb_plan_unmarshal(m, (size_t)st.st_size, p);
  if (rc) {
    munmap(m, (size_t)st.st_size);
    sb_plan_init(p);
    return rc;
  }
  *map = m;
  *map_len = (size_t)st.st_size;
  return 0;
}

/* Two reads, so that nothing but the magic and the mode reaches the
 * caller's memory (a zygote's stack is copied into its next job's fork). */
int sb_plan_read_userns(int fd) {
  uint32_t magic = 0;
  uint8_t userns = 0;
  if (pread(fd, &magic, sizeof magic, offsetof(plan_wire, magic)) != (ssize_t)sizeof magic || magic != PLAN_MAGIC ||
      pread(fd, &userns, sizeof userns, offsetof(plan_wire, userns)) != (ssize_t)sizeof userns)
    return -EINVAL;
  return userns != 0;
}
