/* Hashing a profile's root file system (see profile_hash.h for the listing
 * format). The tree is walked with openat()/fstatat() so no path is ever
 * followed through a symlink, entries are sorted by their relative path, and
 * regular files are read (content mode) by two threads. */
#include "atomic_write.h"
#include "cleanup.h"
#include "clock.h"
#include "profile_hash.h"
#include "sha256.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  char *path; /* relative, unescaped */
  struct stat st;
  char hex[65];
} entry;

typedef struct {
  entry *v;
  size_t n, cap;
  dev_t dev;
  char *err;
  size_t errn;
} walk;

static int add(walk *w, const char *path, const struct stat *st) {
  if (w->n == w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 4096;
    entry *v = realloc(w->v, cap * sizeof *v);
    if (!v) return -ENOMEM;
    w->v = v, w->cap = cap;
  }
  entry *e = &w->v[w->n];
  if (!(e->path = strdup(path))) return -ENOMEM;
  e->st = *st;
  e->hex[0] = '\0';
  w->n++;
  return 0;
}

/* Walk the directory open as dfd whose relative path is rel ("" for the root). */
static int walk_dir(walk *w, int dfd, const char *rel) {
  DIR *d = fdopendir(dfd);
  if (!d) {
    int e = errno;
    close(dfd);
    snprintf(w->err, w->errn, "cannot read /%s: %s", rel, strerror(e));
    return -e;
  }
  int rc = 0;
  struct dirent *de;
  while (!rc && (errno = 0, de = readdir(d))) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s%s%s", rel, *rel ? "/" : "", de->d_name) >= sizeof path) {
      snprintf(w->err, w->errn, "path too long under /%s", rel);
      rc = -ENAMETOOLONG;
      break;
    }
    struct stat st;
    if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
      rc = -errno;
      snprintf(w->err, w->errn, "stat /%s: %s", path, strerror(errno));
      break;
    }
    if (S_ISDIR(st.st_mode) && st.st_dev != w->dev) {
      snprintf(w->err, w->errn, "a file system is mounted at /%s (a stale debootstrap mount?)", path);
      rc = -EBUSY;
      break;
    }
    if ((rc = add(w, path, &st))) {
      snprintf(w->err, w->errn, "out of memory");
      break;
    }
    if (S_ISDIR(st.st_mode)) {
      int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) {
        rc = -errno;
        snprintf(w->err, w->errn, "open /%s: %s", path, strerror(errno));
        break;
      }
      rc = walk_dir(w, sub, path);
    }
  }
  if (!rc && errno) {
    rc = -errno;
    snprintf(w->err, w->errn, "readdir /%s: %s", rel, strerror(errno));
  }
  closedir(d);
  return rc;
}

static int by_path(const void *a, const void *b) { return strcmp(((const entry *)a)->path, ((const entry *)b)->path); }

/* ---- content, in parallel ---- */
typedef struct {
  walk *w;
  int rootfd;
  size_t next;
  pthread_mutex_t mu;
  int rc;
  char err[512];
} pool;

static int hash_entry(pool *p, entry *e, uint8_t *buf, size_t cap) {
  if (S_ISREG(e->st.st_mode)) {
    SBU_AUTOCLOSE int fd = openat(p->rootfd, e->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);
    if (fd < 0 && errno == EPERM) fd = openat(p->rootfd, e->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct sha256_ctx c;
    sha256_init(&c);
    for (;;) {
      ssize_t r = read(fd, buf, cap);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return -errno;
      if (r == 0) break;
      sha256_update(&c, (size_t)r, buf);
    }
    sbu_sha256_digest_hex(&c, e->hex);
  } else if (S_ISLNK(e->st.st_mode)) {
    char target[4096];
    ssize_t r = readlinkat(p->rootfd, e->path, target, sizeof target);
    if (r < 0) return -errno;
    sbu_sha256_hex(target, (size_t)r, e->hex);
    e->st.st_size = r;
  } else if (S_ISCHR(e->st.st_mode) || S_ISBLK(e->st.st_mode)) {
    char dev[64];
    int len = snprintf(dev, sizeof dev, "%u:%u", major(e->st.st_rdev), minor(e->st.st_rdev));
    sbu_sha256_hex(dev, (size_t)len, e->hex);
  } else {
    sbu_sha256_hex("", 0, e->hex);
  }
  return 0;
}

static void *worker(void *arg) {
  pool *p = arg;
  size_t cap = 1 << 20;
  uint8_t *buf = malloc(cap);
  for (;;) {
    pthread_mutex_lock(&p->mu);
    size_t i = p->next++;
    bool stop = p->rc != 0 || i >= p->w->n || !buf;
    if (!buf && !p->rc) p->rc = -ENOMEM, snprintf(p->err, sizeof p->err, "out of memory");
    pthread_mutex_unlock(&p->mu);
    if (stop) break;
    int rc = hash_entry(p, &p->w->v[i], buf, cap);
    if (rc) {
      pthread_mutex_lock(&p->mu);
      if (!p->rc) p->rc = rc, snprintf(p->err, sizeof p->err, "read /%s: %s", p->w->v[i].path, strerror(-rc));
      pthread_mutex_unlock(&p->mu);
      break;
    }
  }
  free(buf);
  return NULL;
}

/* Escaped path as it appears in a listing line. */
static void put_path(FILE *f, struct sha256_ctx *c, const char *path) {
  char buf[8192];
  size_t k = 0;
  for (const char *s = path; *s; s++) {
    if (*s == '\\') buf[k++] = '\\', buf[k++] = '\\';
    else if (*s == '\n') buf[k++] = '\\', buf[k++] = 'n';
    else buf[k++] = *s;
  }
  buf[k++] = '\n';
  sha256_update(c, k, (const uint8_t *)buf);
  if (f) fwrite(buf, 1, k, f);
}

static void put(FILE *f, struct sha256_ctx *c, const char *s) {
  sha256_update(c, strlen(s), (const uint8_t *)s);
  if (f) fputs(s, f);
}

static void finish(struct sha256_ctx *c, char out[72]) {
  memcpy(out, "sha256:", 7);
  sbu_sha256_digest_hex(c, out + 7);
}

int sbf_hash_tree(const char *root, bool content, const char *listing_path, sbf_tree_hash *out, char *err,
                  size_t n) {
  memset(out, 0, sizeof *out);
  double t0 = sbu_now_s();
  walk w = {.err = err, .errn = n};
  SBU_AUTOCLOSE int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  if (rootfd < 0 || fstat(rootfd, &st) < 0) {
    int e = errno;
    snprintf(err, n, "cannot open %s: %s", root, strerror(e));
    return -e;
  }
  w.dev = st.st_dev;
  int dupfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
  int rc = dupfd < 0 ? -errno : walk_dir(&w, dupfd, "");
  if (dupfd < 0) snprintf(err, n, "dup: %s", strerror(errno));
  if (!rc) qsort(w.v, w.n, sizeof *w.v, by_path);
  if (!rc && content) {
    pool p = {.w = &w, .rootfd = rootfd};
    pthread_mutex_init(&p.mu, NULL);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int nthreads = ncpu < 1 ? 1 : ncpu > 4 ? 4 : (int)ncpu;
    pthread_t th[4];
    int started = 0;
    for (int i = 0; i < nthreads; i++)
      if (pthread_create(&th[started], NULL, worker, &p) == 0) started++;
    if (!started) worker(&p);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    pthread_mutex_destroy(&p.mu);
    if (p.rc) rc = p.rc, snprintf(err, n, "%s", p.err);
  }
  FILE *f = NULL;
  sbu_atomic listing;
  if (!rc && content && listing_path) {
    if (sbu_atomic_open(&listing, listing_path, 0644) < 0) {
      rc = -errno;
      snprintf(err, n, "cannot write %s: %s", listing_path, strerror(errno));
    } else {
      f = listing.f;
    }
  }
  if (!rc) {
    struct sha256_ctx cc, qc;
    sha256_init(&cc);
    sha256_init(&qc);
    char line[256];
    for (size_t i = 0; i < w.n; i++) {
      entry *e = &w.v[i];
      unsigned long long size =
          S_ISREG(e->st.st_mode) || S_ISLNK(e->st.st_mode) ? (unsigned long long)e->st.st_size : 0;
      if (content) {
        snprintf(line, sizeof line, "%s %06o %llu ", e->hex, (unsigned)e->st.st_mode, size);
        put(f, &cc, line);
        put_path(f, &cc, e->path);
      }
      snprintf(line, sizeof line, "%06o %llu %lld.%09ld ", (unsigned)e->st.st_mode, size,
               (long long)e->st.st_mtim.tv_sec, e->st.st_mtim.tv_nsec);
      put(NULL, &qc, line);
      put_path(NULL, &qc, e->path);
      out->size_bytes += size;
    }
    out->files = w.n;
    if (content) finish(&cc, out->content_hash);
    finish(&qc, out->quick_hash);
  }
  if (f && rc) sbu_atomic_abort(&listing);
  else if (f && sbu_atomic_commit(&listing) < 0)
    rc = -errno, snprintf(err, n, "cannot write %s: %s", listing_path, strerror(errno));
  for (size_t i = 0; i < w.n; i++) free(w.v[i].path);
  free(w.v);
  out->seconds = sbu_now_s() - t0;
  return rc;
}
