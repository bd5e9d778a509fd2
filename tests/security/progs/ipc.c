/* IPC isolation: looks up a System V message queue by the key the driver
 * created on the host, and lists /dev/shm. */
#include "hostile.h"

#include <dirent.h>
#include <sys/ipc.h>
#include <sys/msg.h>

int main(int argc, char **argv) {
  key_t key = argc > 1 ? (key_t)strtol(argv[1], NULL, 0) : 0x5b7e57;
  int id = msgget(key, 0);
  result("msgget=%s", outcome(id));
  DIR *d = opendir("/dev/shm");
  int n = 0;
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      result("shm_entry=%s", e->d_name);
      n++;
    }
    closedir(d);
  }
  result("shm_entries=%d", n);
  return 0;
}
