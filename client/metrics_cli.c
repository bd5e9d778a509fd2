/* surgebox metrics: the daemon's OpenMetrics text on stdout (for
 * node_exporter's textfile collector). Never starts a daemon: the counters
 * of a daemon started for the question would say nothing. */
#include "client.h"
#include "cliopt.h"
#include "protocol.h"

#include <stdio.h>
#include <string.h>

static const sbo_opt metrics_opts[] = {{NULL, 0, NULL, NULL}};
static const sbo_cmd metrics_cmd = {"surgebox metrics", "[--help]",
                                    "The daemon's counters in the OpenMetrics text format (ends with '# EOF'),\n"
                                    "for node_exporter's textfile collector. Never starts a daemon.",
                                    metrics_opts, sbc_socket_opts, "exit: 0 printed, 1 usage error, 2 no daemon answered", false, NULL};

int sbc_metrics_main(const sbc_ctx *ctx, int argc, char **argv) {
  sbc_ctx g = *ctx;
  sbo_parser p;
  sbo_init(&p, &metrics_cmd, argc, argv);
  const char *v;
  int k, st = 0;
  while (st == 0 && (k = sbo_next(&p, &v)) > 0) {
    if (k == SBC_O_PROFILE) st = sbc_refuse(&p, "--profile", "metrics", SBC_CMD_DAEMON);
    else sbc_ctx_apply(&g, k, v);
  }
  if (st == 0) st = k == SBO_STOP ? p.status : sbo_no_args(&p);
  sbo_done(&p);
  if (k == SBO_STOP || st) return st;
  g.autostart = false; /* the counters of a daemon started for the question would say nothing */
  sbc_conn c;
  char err[512];
  if (sbc_open_ctx(&c, &g, NULL, err, sizeof err) < 0) {
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
