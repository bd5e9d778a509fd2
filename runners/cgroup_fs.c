/* The cgroup file system as every backend uses it (cgroup.c, cgroup_v1.c,
 * cgroup_v2.c, cgroup_slot.c): a controller's mount and our own place in
 * it, directories made, claimed under an flock and removed, keyed files
 * read and values written. Calls nothing of theirs. */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static bool has_token(const char *list, const char *tok) {
  size_t n = strlen(tok);
  for (const char *p = list; (p = strstr(p, tok)); p += n)
    if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
      return true;
  return false;
}

/* Our own path in a hierarchy, from /proc/self/cgroup. */
static int own_path(const char *controller, char own[PATH_MAX]) {
  SBU_AUTOFCLOSE FILE *f = fopen("/proc/self/cgroup", "re");
  if (!f) return -errno;
  char line[4096];
  int rc = -ENOENT;
  while (fgets(line, sizeof line, f)) {
    char *c1 = strchr(line, ':');
    char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2) continue;
    *c2 = '\0';
    bool match = controller[0] ? has_token(c1 + 1, controller) : (c1[1] == '\0' && line[0] == '0');
    if (!match) continue;
    char *path = c2 + 1;
    path[strcspn(path, "\n")] = '\0';
    snprintf(own, PATH_MAX, "%s", strcmp(path, "/") == 0 ? "" : path);
    rc = 0;
    break;
  }
  return rc;
}

int sb_cg_find_mount(const char *controller, char mount[PATH_MAX], char own[PATH_MAX]) {
  SBU_AUTOFCLOSE FILE *f = fopen("/proc/self/mountinfo", "re");
  if (!f) return -errno;
  char line[4096];
  int rc = -ENOENT;
  char root[PATH_MAX] = "";
  while (fgets(line, sizeof line, f)) {
    /* id parent major:minor root mountpoint opts... - fstype source superopts */
    char r[PATH_MAX], mp[PATH_MAX], fstype[64], superopts[1024];
    char *sep = strstr(line, " - ");
    if (!sep || sscanf(line, "%*s %*s %*s %4095s %4095s", r, mp) != 2) continue;
    if (sscanf(sep + 3, "%63s %*s %1023s", fstype, superopts) != 2) continue;
    bool match = controller[0] ? (strcmp(fstype, "cgroup") == 0 && has_token(superopts, controller))
                               : strcmp(fstype, "cgroup2") == 0;
    if (!match) continue;
    snprintf(mount, PATH_MAX, "%s", mp);
    snprintf(root, sizeof root, "%s", strcmp(r, "/") == 0 ? "" : r);
    rc = 0;
    break;
  }
  if (rc) return rc;
  rc = own_path(controller, own);
  if (rc) return rc;
  /* A mount of a sub-tree (containers): our path is relative to its root. */
  size_t rl = strlen(root);
  if (rl && strncmp(own, root, rl) == 0) memmove(own, own + rl, strlen(own + rl) + 1);
  return 0;
}

int sb_cg_rmdir_retry(const char *path) {
  /* A cgroup whose last task was just reaped can stay busy for a moment. */
  for (int i = 0; i < 200; i++) {
    if (rmdir(path) == 0 || errno == ENOENT) return 0;
    if (errno != EBUSY) return -errno;
    struct timespec ts = {0, 1000000 * (i < 10 ? 1 : 10)};
    nanosleep(&ts, NULL);
  }
  return -EBUSY;
}

static void kill_listed(const char *dir) {
  char path[PATH_MAX], buf[8192];
  snprintf(path, sizeof path, "%s/cgroup.procs", dir);
  if (sb_read_file(path, buf, sizeof buf) <= 0) return;
  for (char *p = buf; *p;) {
    long pid = strtol(p, &p, 10);
    if (pid > 0) kill((pid_t)pid, SIGKILL);
    while (*p == '\n') p++;
  }
}

/* A job cgroup left by a dead instance, or by one of ours whose rmdir gave
 * up: whatever is still listed in it is killed, then it goes. */
static int reclaim(const char *dir) {
  kill_listed(dir);
  return sb_cg_rmdir_retry(dir);
}

int sb_cg_mkdir_job(const char *path) {
  if (mkdir(path, 0755) == 0) return 0;
  if (errno != EEXIST) return -errno;
  int rc = reclaim(path);
  if (rc < 0) return rc;
  return mkdir(path, 0755) < 0 ? -errno : 0;
}

void sb_cg_remove_stale(const char *dir, const char *lock_dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, SB_INSTANCE_PREFIX, strlen(SB_INSTANCE_PREFIX)) != 0) continue;
    if (!sb_instance_is_stale(dir, e->d_name, lock_dir)) continue;
    char inst[PATH_MAX];
    snprintf(inst, sizeof inst, "%s/%s", dir, e->d_name);
    DIR *jd = opendir(inst);
    struct dirent *je;
    while (jd && (je = readdir(jd))) {
      if (je->d_type != DT_DIR || je->d_name[0] == '.') continue;
      char job[PATH_MAX];
      if (snprintf(job, sizeof job, "%s/%s", inst, je->d_name) >= (int)sizeof job) continue;
      reclaim(job);
    }
    if (jd) closedir(jd);
    sb_cg_rmdir_retry(inst);
  }
  closedir(d);
}

int sb_cg_claim_instance(sb_cg_backend *b, const char *parent, const char *path, const char *lock_dir,
                         char err[SB_ERR_MAX]) {
  /* The parent's flock: no other instance judges ours between mkdir and
   * flock. Where it cannot be taken, judge and create without it. */
  SBU_AUTOCLOSE int pfd = sb_lock_dir(parent, true); /* held until we return */
  (void)pfd;                                          /* used for its lifetime only (clang's -Wunused-variable) */
  sb_cg_remove_stale(parent, lock_dir);
  int rc = mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
  int fd = rc < 0 ? rc : sb_lock_dir(path, false);
  if (rc < 0 || fd < 0) {
    sb_err(err, "cannot %s %s: %s", rc < 0 ? "create" : "lock", path, strerror(rc < 0 ? -rc : -fd));
    return rc < 0 ? rc : fd;
  }
  b->inst_fd[b->n_inst_fd++] = fd;
  return 0;
}

uint64_t sb_cg_keyed(const char *text, const char *key, bool *found) {
  if (found) *found = false;
  size_t kl = strlen(key);
  for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
      if (found) *found = true;
      return strtoull(line + kl + 1, NULL, 10);
    }
  }
  return 0;
}

uint64_t sb_cg_read_keyed(const char *dir, const char *file, const char *key, bool *found) {
  char path[PATH_MAX], buf[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  if (found) *found = false;
  if (sb_read_file(path, buf, sizeof buf) <= 0) return 0;
  return sb_cg_keyed(buf, key, found);
}

int sb_cg_put(const char *dir, const char *file, const char *val, char err[SB_ERR_MAX]) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  int rc = sb_write_file(path, val);
  if (rc < 0 && err) sb_err(err, "write %s=%s: %s", path, val, strerror(-rc));
  return rc;
}
