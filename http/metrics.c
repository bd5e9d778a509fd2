/* The front's counters as OpenMetrics families, appended to the daemon's
 * text: one counter per limit, so an operator sees which one fires. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const sbh_counter_names[SBH_N_COUNTERS][2] = {
    [SBH_C_CONNECTIONS] = {"surgebox_http_connections", "HTTP connections accepted."},
    [SBH_C_CONN_REFUSED] = {"surgebox_http_connections_refused", "HTTP connections closed at accept: max_connections open."},
    [SBH_C_REQUESTS] = {"surgebox_http_requests", "HTTP requests read whole."},
    [SBH_C_HEADER_TOO_LARGE] = {"surgebox_http_header_too_large", "Requests refused 431: request line and headers over max_header_bytes."},
    [SBH_C_BODY_TOO_LARGE] = {"surgebox_http_body_too_large", "Requests refused 413: body over max_body_bytes."},
    [SBH_C_HEADER_TIMEOUT] = {"surgebox_http_header_timeouts", "Connections dropped: headers not received within header_timeout."},
    [SBH_C_BODY_TIMEOUT] = {"surgebox_http_body_timeouts", "Connections dropped: body not received within body_timeout."},
    [SBH_C_IDLE_TIMEOUT] = {"surgebox_http_idle_timeouts", "Keep-alive connections closed after idle_timeout."},
    [SBH_C_CL_TE] = {"surgebox_http_cl_te_refused", "Requests refused 400: Content-Length with Transfer-Encoding."},
    [SBH_C_BAD_REQUEST] = {"surgebox_http_bad_requests", "Requests refused 400: not parsable HTTP/1.x."},
    [SBH_C_UNAUTHORIZED] = {"surgebox_http_unauthorized", "Requests refused 401: missing or wrong bearer token."},
    [SBH_C_QUEUE_FULL] = {"surgebox_http_queue_full", "Requests answered 503: max_queue requests unanswered, or the daemon busy."},
    [SBH_C_START_TIMEOUT] = {"surgebox_http_start_timeouts", "Requests answered 504: not started within compile + run timeouts + start_margin."},
    [SBH_C_PATH_REFUSED] = {"surgebox_http_paths_refused", "Requests refused 400: a files or fetch_files path leaving /app."},
    [SBH_C_MAX_REQUESTS] = {"surgebox_http_max_requests_closes", "Connections closed after max_requests_per_conn requests."},
    [SBH_C_BODY_BYTES_FULL] = {"surgebox_http_body_bytes_full", "Requests answered 503: bodies being read over max_body_total."},
    [SBH_C_ANSWER_TOO_LARGE] = {"surgebox_http_answers_too_large", "Answers over max_answer_bytes, sent as SandboxError."},
    [SBH_C_CLIENT_GONE] = {"surgebox_http_clients_gone", "Clients that closed with a request unanswered (its job cancelled)."},
};

/* The families are written to a memory stream (stdio grows it), then
 * appended to the daemon's text. */
int sbh_metrics_append(const sbh_server *srv, char **buf, size_t *len) {
  if (!srv) return 0;
  char *text = NULL;
  size_t text_len = 0;
  FILE *s = open_memstream(&text, &text_len);
  if (!s) return -1;
  for (int i = 0; i < SBH_N_COUNTERS; i++) {
    fprintf(s, "# TYPE %s counter\n# HELP %s %s\n%s_total %llu\n", sbh_counter_names[i][0], sbh_counter_names[i][0],
        sbh_counter_names[i][1], sbh_counter_names[i][0], (unsigned long long)srv->counters[i]);
  }
  fprintf(s, "# TYPE surgebox_http_answers counter\n# HELP surgebox_http_answers HTTP answers by status class.\n");
  static const char *const cls[6] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};
  for (int i = 0; i < 6; i++)
    fprintf(s, "surgebox_http_answers_total{class=\"%s\"} %llu\n", cls[i], (unsigned long long)srv->answers[i]);
  const sbh_limits *l = &srv->opt.limits;
  fprintf(s, "# TYPE surgebox_http_open_connections gauge\n# HELP surgebox_http_open_connections HTTP connections open now.\n"
          "surgebox_http_open_connections %zu\n", srv->n_conns);
  fprintf(s, "# TYPE surgebox_http_in_flight gauge\n# HELP surgebox_http_in_flight Requests submitted and not answered.\n"
          "surgebox_http_in_flight %zu\n", srv->in_flight);
  fprintf(s, "# TYPE surgebox_http_body_bytes gauge\n# HELP surgebox_http_body_bytes Bytes held for request bodies being read.\n"
          "surgebox_http_body_bytes %zu\n", srv->body_bytes);
  fprintf(s, "# TYPE surgebox_http_limit gauge\n# HELP surgebox_http_limit The front's limits (bytes, counts, seconds).\n");
  fprintf(s, "surgebox_http_limit{name=\"max_header_bytes\"} %zu\n", l->max_header_bytes);
  fprintf(s, "surgebox_http_limit{name=\"max_body_bytes\"} %zu\n", l->max_body_bytes);
  fprintf(s, "surgebox_http_limit{name=\"max_connections\"} %zu\n", l->max_connections);
  fprintf(s, "surgebox_http_limit{name=\"max_requests_per_conn\"} %zu\n", l->max_requests_per_conn);
  fprintf(s, "surgebox_http_limit{name=\"header_timeout_s\"} %g\n", l->header_timeout_s);
  fprintf(s, "surgebox_http_limit{name=\"body_timeout_s\"} %g\n", l->body_timeout_s);
  fprintf(s, "surgebox_http_limit{name=\"idle_timeout_s\"} %g\n", l->idle_timeout_s);
  fprintf(s, "surgebox_http_limit{name=\"max_queue\"} %zu\n", l->max_queue);
  fprintf(s, "surgebox_http_limit{name=\"max_body_total\"} %zu\n", l->max_body_total);
  fprintf(s, "surgebox_http_limit{name=\"max_answer_bytes\"} %zu\n", l->max_answer_bytes);
  fprintf(s, "surgebox_http_limit{name=\"start_margin_s\"} %g\n", l->start_margin_s);
  bool failed = ferror(s) != 0;
  if (fclose(s) != 0 || failed) {
    free(text);
    return -1;
  }
  char *b = realloc(*buf, *len + text_len + 1);
  if (!b) {
    free(text);
    return -1;
  }
  memcpy(b + *len, text, text_len + 1);
  *buf = b;
  *len += text_len;
  free(text);
  return 0;
}
