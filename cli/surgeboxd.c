/* surgeboxd: the daemon. All of it lives in daemon/ (sbd_run). */
#include "daemon.h"

int main(int argc, char **argv) {
  sbd_config cfg;
  sbd_config_default(&cfg);
  int rc = sbd_config_parse(&cfg, argc, argv);
  if (rc != 0) return rc < 0 ? 0 : 1;
  return sbd_run(&cfg);
}
