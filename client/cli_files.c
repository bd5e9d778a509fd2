/* What `surgebox exec` uploads: files and whole directories with their
 * relative paths, stdin. These are the user's own files on the host (no
 * workspace is involved), read by path. */
#include "cli.h"
#include "cleanup.h"
#include "protocol.h"
#include "utf8.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

unsigned char *sbc_read_fd(int fd, size_t *len) {
  size_t cap = 65536, n = 0;
  unsigned char *buf = malloc(cap + 1);
  for (;;) {
    if (!buf) return NULL;
    ssize_t got = read(fd, buf + n, cap - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      free(buf);
      return NULL;
    }
    if (got == 0) break;
    n += (size_t)got;
    if (n == cap) {
      unsigned char *nb = realloc(buf, (cap *= 2) + 1);
      if (!nb) free(buf);
      buf = nb;
    }
  }
  *len = n;
  return buf;
}

void sbc_content_field(json_object *o, const char *key, const unsigned char *data, size_t len) {
  if (sbu_utf8_valid(data, len)) {
    json_object_object_add(o, key, json_object_new_string_len((const char *)data, (int)len));
  } else {
    char b64key[32];
    snprintf(b64key, sizeof b64key, "%s_b64", key);
    char *enc = sbu_base64_encode(data, len, NULL);
    json_object_object_add(o, b64key, json_object_new_string(enc ? enc : ""));
    free(enc);
  }
}

/* The name an argument gets below /app: "./src//a.c" -> "src/a.c"; an
 * absolute path or one with ".." -> its last component; "." -> "". */
static int upload_name(const char *arg, char *out, size_t cap) {
  char tmp[PATH_MAX];
  if (snprintf(tmp, sizeof tmp, "%s", arg) >= (int)sizeof tmp) return -1;
  bool whole = arg[0] != '/';
  char *save = NULL, *last = NULL;
  out[0] = '\0';
  for (char *c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
    if (!strcmp(c, "..")) whole = false;
    if (!strcmp(c, ".") || !strcmp(c, "..")) continue;
    last = c;
    if (whole) snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? "/" : "", c);
  }
  if (!whole) snprintf(out, cap, "%s", last ? last : "");
  return 0;
}

static int add_file(sbc_files *f, const char *host, const char *name, char *err, size_t err_len) {
  SBU_AUTOCLOSE int fd = open(host, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) {
    snprintf(err, err_len, "cannot read %s: %s", host, strerror(errno));
    return -2;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(err, err_len, "%s is not a regular file or directory", host);
    return -1;
  }
  size_t len;
  SBU_AUTOFREE unsigned char *data = sbc_read_fd(fd, &len);
  if (!data) {
    snprintf(err, err_len, "cannot read %s: %s", host, strerror(errno));
    return -2;
  }
  json_object *o = json_object_new_object();
  json_object_object_add(o, "path", json_object_new_string(name));
  sbc_content_field(o, "content", data, len);
  json_object_object_add(o, "mode", json_object_new_int((int)(st.st_mode & 0777)));
  json_object_array_add(f->files, o);
  f->bytes += len;
  return 0;
}

/* Everything below host (a directory) as name/...; root: the argument's
 * real path, which symlinks must stay inside. */
static int add_dir(sbc_files *f, const char *root, const char *host, const char *name, int depth, char *err,
                   size_t err_len) {
  if (depth > 64) {
    snprintf(err, err_len, "%s: directories nested too deep", host);
    return -1;
  }
  DIR *d = opendir(host);
  if (!d) {
    snprintf(err, err_len, "cannot read %s: %s", host, strerror(errno));
    return -2;
  }
  int rc = 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char hpath[PATH_MAX], npath[PATH_MAX];
    if (snprintf(hpath, sizeof hpath, "%s/%s", host, e->d_name) >= (int)sizeof hpath ||
        snprintf(npath, sizeof npath, "%s%s%s", name, name[0] ? "/" : "", e->d_name) >= (int)sizeof npath) {
      snprintf(err, err_len, "%s/%s: path too long", host, e->d_name);
      rc = -1;
      break;
    }
    struct stat st;
    if (lstat(hpath, &st) < 0) {
      snprintf(err, err_len, "cannot read %s: %s", hpath, strerror(errno));
      rc = -1;
    } else if (S_ISDIR(st.st_mode)) {
      rc = add_dir(f, root, hpath, npath, depth + 1, err, err_len);
    } else if (S_ISREG(st.st_mode)) {
      rc = add_file(f, hpath, npath, err, err_len);
    } else if (S_ISLNK(st.st_mode)) {
      /* a link to a file inside the directory goes as a copy; anything else is refused */
      char real[PATH_MAX];
      size_t rl = strlen(root);
      if (!realpath(hpath, real) || strncmp(real, root, rl) != 0 || real[rl] != '/' || stat(real, &st) < 0 ||
          !S_ISREG(st.st_mode)) {
        snprintf(err, err_len, "%s is a symlink that does not lead to a file inside %s: refused", hpath, root);
        rc = -1;
      } else {
        rc = add_file(f, real, npath, err, err_len);
      }
    } else {
      snprintf(err, err_len, "%s is not a regular file or directory: refused", hpath);
      rc = -1;
    }
  }
  closedir(d);
  return rc;
}

int sbc_files_add(sbc_files *f, const char *arg, char *err, size_t err_len) {
  char name[PATH_MAX];
  struct stat st;
  if (upload_name(arg, name, sizeof name) < 0) {
    snprintf(err, err_len, "%s: path too long", arg);
    return -1;
  }
  if (stat(arg, &st) < 0) {
    snprintf(err, err_len, "cannot read %s: %s", arg, strerror(errno));
    return -2;
  }
  if (S_ISDIR(st.st_mode)) {
    char root[PATH_MAX];
    if (!realpath(arg, root)) {
      snprintf(err, err_len, "cannot resolve %s: %s", arg, strerror(errno));
      return -1;
    }
    return add_dir(f, root, arg, name, 0, err, err_len);
  }
  if (!name[0]) {
    snprintf(err, err_len, "%s: no file name to give it in /app", arg);
    return -1;
  }
  return add_file(f, arg, name, err, err_len);
}
