/* common/atomic_write.c: the new bytes or the old ones, never a part, and
 * no temporary left behind. */
#include "../check.h"
#include "atomic_write.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/sbu-atomic-XXXXXX";

static char *slurp(const char *path) {
  static char buf[4096];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  buf[n < 0 ? 0 : n] = '\0';
  return buf;
}

/* entries in dir other than . and .. */
static int entries(void) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  if (d) closedir(d);
  return n;
}

int main(void) {
  CHECK(mkdtemp(dir) != NULL);
  umask(022);
  char path[256];
  snprintf(path, sizeof path, "%s/out.txt", dir);

  /* a new file, with its mode */
  CHECK(sbu_write_atomic(path, "hello\n", 6, 0640) == 0);
  CHECK_STR(slurp(path), "hello\n");
  struct stat st;
  CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0640);
  CHECK(entries() == 1);

  /* a replacement: a reader holding the old file keeps the old bytes */
  int old = open(path, O_RDONLY | O_CLOEXEC);
  CHECK(sbu_write_atomic(path, "bye", 3, 0644) == 0);
  CHECK_STR(slurp(path), "bye");
  char b[16] = "";
  CHECK(read(old, b, sizeof b - 1) == 6);
  CHECK_STR(b, "hello\n");
  close(old);
  CHECK(entries() == 1);

  /* json, printed as json-c prints it (no final newline), 0644 */
  json_object *o = json_tokener_parse("{\"a\":[1,\"x/y\"]}");
  CHECK(sbu_write_json_atomic(path, o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) == 0);
  CHECK_STR(slurp(path), "{\"a\":[1,\"x/y\"]}");
  CHECK(sbu_write_json_atomic(path, o, JSON_C_TO_STRING_PLAIN) == 0);
  CHECK_STR(slurp(path), "{\"a\":[1,\"x\\/y\"]}");
  CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644);
  json_object_put(o);

  /* streamed, then abandoned: the target unchanged, no temporary */
  sbu_atomic a;
  CHECK(sbu_atomic_open(&a, path, 0644) == 0);
  fputs("half", a.f);
  CHECK(entries() == 2); /* the temporary is beside the target */
  sbu_atomic_abort(&a);
  CHECK_STR(slurp(path), "{\"a\":[1,\"x\\/y\"]}");
  CHECK(entries() == 1);
  /* streamed and committed */
  CHECK(sbu_atomic_open(&a, path, 0644) == 0);
  for (int i = 0; i < 3; i++) fprintf(a.f, "%d\n", i);
  CHECK(sbu_atomic_commit(&a) == 0);
  CHECK_STR(slurp(path), "0\n1\n2\n");
  CHECK(entries() == 1);

  /* a directory that does not exist: ENOENT, nothing made */
  char missing[300];
  snprintf(missing, sizeof missing, "%s/no/such", dir);
  errno = 0;
  CHECK(sbu_write_atomic(missing, "x", 1, 0644) == -1);
  CHECK(errno == ENOENT);
  /* the rename fails (the target is a non-empty directory): the error, no temporary */
  char sub[300], inner[320];
  snprintf(sub, sizeof sub, "%s/sub", dir);
  snprintf(inner, sizeof inner, "%s/sub/f", dir);
  CHECK(mkdir(sub, 0755) == 0);
  CHECK(sbu_write_atomic(inner, "x", 1, 0644) == 0);
  errno = 0;
  CHECK(sbu_write_atomic(sub, "x", 1, 0644) == -1);
  CHECK(errno == EISDIR);
  CHECK(entries() == 2); /* out.txt and sub */
  unlink(inner);
  rmdir(sub);
  unlink(path);
  CHECK(rmdir(dir) == 0);
  return check_exit();
}
