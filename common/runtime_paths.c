/* The default socket's directory: see runtime_paths.h. */
#include "runtime_paths.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

/* A directory we may put sockets in: ours, a directory, nobody else writes it. */
static bool private_dir_ok(const char *dir) {
  struct stat st;
  return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022) &&
         access(dir, W_OK | X_OK) == 0;
}

int sbu_runtime_dir(uid_t host_euid, char *out, size_t cap) {
  if (host_euid == 0) {
    snprintf(out, cap, "/run/surgebox");
    return 0;
  }
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  if (xdg && xdg[0] == '/' && private_dir_ok(xdg)) {
    snprintf(out, cap, "%s", xdg);
    return 0;
  }
  snprintf(out, cap, "/tmp/surgebox-%u", (unsigned)geteuid());
  if (mkdir(out, 0700) < 0 && errno != EEXIST) return -1;
  if (private_dir_ok(out)) return 0;
  char why[256];
  snprintf(why, sizeof why, "%s is not a private directory of uid %u", out, (unsigned)geteuid());
  snprintf(out, cap, "%s", why);
  return -1;
}

int sbu_socket_dir(uid_t host_euid, char *out, size_t cap) {
  const char *own = getenv("SURGEBOX_SOCKET_DIR"); /* a set-up of its own (tests): its own default socket */
  if (!own || !*own) return sbu_runtime_dir(host_euid, out, cap);
  if (own[0] == '/' && private_dir_ok(own)) {
    snprintf(out, cap, "%s", own);
    return 0;
  }
  snprintf(out, cap, "SURGEBOX_SOCKET_DIR=%s is not an absolute private directory of uid %u", own, (unsigned)geteuid());
  return -1;
}

void sbu_default_socket(uid_t host_euid, char *out, size_t cap) {
  char dir[4096];
  if (sbu_socket_dir(host_euid, dir, sizeof dir) < 0) { /* the path anyway: connecting to it says why */
    const char *own = getenv("SURGEBOX_SOCKET_DIR");
    if (own && *own) snprintf(dir, sizeof dir, "%s", own);
    else snprintf(dir, sizeof dir, "/tmp/surgebox-%u", (unsigned)geteuid());
  }
  snprintf(out, cap, "%s/surgebox.sock", dir);
}

const char *sbu_profiles_dir(void) {
  static char buf[4096];
  const char *env = getenv("SURGEBOX_PROFILES");
  if (env && *env) return env;
  if (geteuid() == 0) return "/var/lib/surgebox/profiles";
  const char *xdg = getenv("XDG_DATA_HOME");
  if (xdg && *xdg == '/') {
    snprintf(buf, sizeof buf, "%s/surgebox/profiles", xdg);
    return buf;
  }
  const char *home = getenv("HOME");
  if (!home || *home != '/') {
    struct passwd *pw = getpwuid(geteuid());
    home = pw && pw->pw_dir ? pw->pw_dir : "/tmp";
  }
  snprintf(buf, sizeof buf, "%s/.local/share/surgebox/profiles", home);
  return buf;
}

const char *sbu_own_prefix(char *buf, size_t cap) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) self[n] = '\0';
  /* in a chroot of bind mounts /proc/self/exe may name the file as the
   * host sees it; without /proc there is none: the absolute path we were
   * executed by */
  if (n <= 0 || access(self, F_OK) != 0) {
    const char *fn = (const char *)getauxval(AT_EXECFN);
    if (!fn || fn[0] != '/' || snprintf(self, sizeof self, "%s", fn) >= (int)sizeof self) return NULL;
  }
  for (int i = 0; i < 2; i++) { /* <prefix>/bin/NAME: cut twice */
    char *slash = strrchr(self, '/');
    if (!slash) return NULL;
    *slash = '\0';
  }
  int len = snprintf(buf, cap, "%s", self);
  return len < 0 || (size_t)len >= cap ? NULL : buf;
}

const char *sbu_installed_dir(const char *sub, char *buf, size_t cap) {
  char prefix[PATH_MAX];
  if (!sbu_own_prefix(prefix, sizeof prefix)) return NULL;
  int len = snprintf(buf, cap, "%s/share/surgebox/%s", prefix, sub);
  if (len < 0 || (size_t)len >= cap || access(buf, R_OK) != 0) return NULL;
  return buf;
}

const char *sbu_data_dir(const char *env, const char *sub, char *buf, size_t cap, const char *built,
                         const char *fallback) {
  const char *v = getenv(env);
  if (v && *v) return v;
  if (sbu_installed_dir(sub, buf, cap)) return buf;
  return !fallback || access(built, R_OK) == 0 ? built : fallback;
}
