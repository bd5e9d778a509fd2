/* Parent side of the read-only overlays (mounts.c, ro_dir): an overlay's
 * lower layer is one directory of one file system, so the mounts beneath a
 * bound directory (a container's /etc/hosts, a separate /usr/local) would
 * vanish behind it. This lists them from /proc/self/mountinfo for the child,
 * which binds each on top of its overlay as before. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* mountinfo's mount point field, its octal escapes (\040 ...) undone. */
static void unescape(char *s) {
  char *w = s;
  for (char *r = s; *r; r++) {
    if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
      *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
      r += 3;
    } else {
      *w++ = *r;
    }
  }
  *w = '\0';
}

static bool under(const char *path, const char *dir) {
  size_t n = strlen(dir);
  return n > 0 && strncmp(path, dir, n) == 0 && path[n] == '/';
}

static bool is_dir(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool push(char ***v, size_t *n, size_t *cap, const char *s) {
  if (*n + 2 > *cap) {
    size_t nc = *cap ? *cap * 2 : 16;
    char **nv = realloc(*v, nc * sizeof *nv);
    if (!nv) return false;
    *v = nv;
    *cap = nc;
  }
  if (!((*v)[*n] = strdup(s))) return false;
  (*v)[++*n] = NULL;
  return true;
}

char **sb_submounts_list(const char *root, const sb_mount *extra, size_t n_extra) {
  char **dirs = NULL, **found = NULL, path[PATH_MAX];
  size_t nd = 0, cd = 0, nf = 0, cf = 0;
  bool ok = true;
  for (const char *const *b = sb_host_binds; ok && *b; b++)
    if ((size_t)snprintf(path, sizeof path, "%s%s", root ? root : "", *b) < sizeof path && is_dir(path))
      ok = push(&dirs, &nd, &cd, path);
  for (size_t i = 0; ok && i < n_extra; i++)
    if (!extra[i].writable && is_dir(extra[i].source)) ok = push(&dirs, &nd, &cd, extra[i].source);
  FILE *f = ok && nd ? fopen("/proc/self/mountinfo", "re") : NULL;
  char *line = NULL;
  size_t len = 0;
  while (f && ok && getline(&line, &len, f) > 0) {
    char *save = NULL, *mp = NULL, *tok = strtok_r(line, " ", &save);
    for (int i = 0; tok && i < 4; i++) mp = tok = strtok_r(NULL, " ", &save);
    if (!mp) continue;
    unescape(mp);
    for (size_t d = 0; d < nd; d++)
      if (under(mp, dirs[d])) {
        ok = push(&found, &nf, &cf, mp);
        break;
      }
  }
  free(line);
  if (f) fclose(f);
  sb_submounts_free(dirs);
  if (!ok) {
    sb_submounts_free(found);
    return NULL;
  }
  /* outermost only: a recursive bind of /a brings /a/b along */
  size_t k = 0;
  for (size_t i = 0; i < nf; i++) {
    bool inner = false;
    for (size_t j = 0; j < nf && !inner; j++) inner = j != i && under(found[i], found[j]);
    if (inner) free(found[i]);
    else found[k++] = found[i];
  }
  if (found) found[k] = NULL;
  return found;
}

void sb_submounts_free(char **list) {
  for (char **p = list; p && *p; p++) free(*p);
  free(list);
}
