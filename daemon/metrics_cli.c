/* surgebox metrics: the daemon's OpenMetrics text on stdout (for
 * node_exporter's textfile collector). Never starts a daemon: the counters
 * of a daemon started for the question would say nothing. */
#include "client.h"
#include "protocol.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

int sbc_metrics_main(int argc, char **argv, const char *socket_path) {
  static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  int o;
  optind = 0;
  opterr = 0;
  while ((o = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
    if (o == 'h') {
      printf("usage: surgebox metrics\n"
             "The daemon's counters in the OpenMetrics text format (ends with '# EOF').\n"
             "Exit status: 0 printed, 1 usage error, 2 no daemon answered.\n");
      return 0;
    }
    fprintf(stderr, "surgebox metrics: unknown option '%s' (see surgebox metrics --help)\n", argv[optind - 1]);
    return 1;
  }
  if (optind < argc) {
    fprintf(stderr, "surgebox metrics: unexpected argument '%s' (see surgebox metrics --help)\n", argv[optind]);
    return 1;
  }
  sbc_conn c;
  char err[512];
  if (sbc_open(&c, socket_path, false, NULL, err, sizeof err) < 0) {
    fprintf(stderr, "surgebox metrics: %s\n", err);
    return 2;
  }
  json_object *req = json_object_new_object(), *resp = NULL, *text = NULL;
  json_object_object_add(req, "id", json_object_new_string("metrics"));
  json_object_object_add(req, "type", json_object_new_string("metrics"));
  if (sbc_send(&c, req) == 0) resp = sbc_recv(&c);
  json_object_put(req);
  sbc_close(&c);
  int rc = 2;
  if (resp && json_object_object_get_ex(resp, "text", &text) && json_object_is_type(text, json_type_string)) {
    fputs(json_object_get_string(text), stdout);
    rc = 0;
  } else {
    fprintf(stderr, "surgebox metrics: no metrics from the daemon at %s\n", c.socket_path);
  }
  json_object_put(resp);
  return rc;
}
