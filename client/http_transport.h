/* One HTTP/1.1 exchange without blocking (issue 39's fleet): a request on a
 * connection of its own ("Connection: close"), the answer read through
 * http_parser, the parser the daemon's HTTP front links. The caller polls
 * sbc_http_fd for sbc_http_events and calls sbc_http_step. */
#ifndef SURGEBOX_HTTP_TRANSPORT_H
#define SURGEBOX_HTTP_TRANSPORT_H

#include "endpoints.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct sbc_http_call sbc_http_call;

/* method "GET" or "POST" to ep's path; body may be NULL. NULL with err set
 * when the connection cannot even be started. */
sbc_http_call *sbc_http_start(const sbc_endpoint *ep, const char *method, const char *path, const char *body,
                              size_t body_len, char *err, size_t err_len);
int sbc_http_fd(const sbc_http_call *h);
short sbc_http_events(const sbc_http_call *h);
/* After poll: 1 the answer is complete (sbc_http_status, sbc_http_body),
 * 0 not yet, -1 the exchange failed (err set: a failure of the
 * infrastructure, the daemon gone or broken). */
int sbc_http_step(sbc_http_call *h, short revents, char *err, size_t err_len);
int sbc_http_status(const sbc_http_call *h);
const char *sbc_http_body(const sbc_http_call *h, size_t *len); /* NUL-terminated */
void sbc_http_free(sbc_http_call *h);

#endif
