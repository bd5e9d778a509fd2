/* common/cleanup.h: what is released at scope exit, what is handed over,
 * and errno kept across the release. */
#include "../check.h"
#include "cleanup.h"

#include <fcntl.h>
#include <stdbool.h>

static bool fd_open(int fd) { return fcntl(fd, F_GETFD) >= 0; }

static int open_and_fail(int *seen) {
  SBU_AUTOCLOSE int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  *seen = fd;
  errno = ENOSPC; /* the close at scope exit must not change it */
  return -1;
}

static int open_and_hand_over(void) {
  SBU_AUTOCLOSE int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  return sbu_take_fd(&fd);
}

static char *alloc_and_hand_over(void) {
  SBU_AUTOFREE char *p = malloc(16);
  if (p) strcpy(p, "kept");
  return sbu_take_ptr(&p);
}

int main(void) {
  int fd = -1;
  errno = 0;
  CHECK(open_and_fail(&fd) == -1);
  CHECK(fd >= 0);
  CHECK(errno == ENOSPC);
  CHECK(!fd_open(fd)); /* closed */

  /* by hand, on a descriptor kept in a struct: closed and marked -1 */
  struct {
    int fd;
  } holder = {open("/dev/null", O_RDONLY | O_CLOEXEC)};
  int was = holder.fd;
  sbu_closep(&holder.fd);
  CHECK(holder.fd == -1 && was >= 0 && !fd_open(was));
  sbu_closep(&holder.fd); /* twice: nothing */
  CHECK(holder.fd == -1);

  int kept = open_and_hand_over();
  CHECK(kept >= 0 && fd_open(kept)); /* handed over: still open */
  close(kept);

  {
    SBU_AUTOCLOSE int none = -1; /* nothing to close: no error, errno kept */
    errno = EAGAIN;
    (void)none;
  }
  CHECK(errno == EAGAIN);

  char *s = alloc_and_hand_over();
  CHECK_STR(s, "kept");
  free(s);
  {
    SBU_AUTOFREE char *p = NULL; /* free(NULL) is fine */
    (void)p;
  }

  int ffd = -1;
  {
    SBU_AUTOFCLOSE FILE *f = fopen("/dev/null", "re");
    CHECK(f != NULL);
    ffd = f ? fileno(f) : -1;
  }
  CHECK(ffd >= 0 && !fd_open(ffd));

  /* json: one reference dropped at scope exit */
  json_object *o = json_object_new_object();
  json_object_get(o); /* two references */
  {
    SBU_AUTOPUT json_object *ref = o;
    (void)ref;
  }
  CHECK(json_object_put(o) == 1); /* this was the last one: freed */
  {
    SBU_AUTOPUT json_object *none = NULL;
    (void)none;
  }
  return check_exit();
}
