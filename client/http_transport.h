/* One HTTP/1.1 exchange without blocking (issue 39's fleet): a request on a
 * keep-alive connection, fresh or taken from the caller's pool of idle ones,
 * the answer read through http_parser, the parser the daemon's HTTP front
 * links. The caller polls sbc_http_fd for sbc_http_events and calls
 * sbc_http_step; once answered, sbc_http_release hands the connection back
 * for the pool when the server keeps it open.
 * A pooled connection the server closed (idle timeout, request cap: EOF or
 * a reset) before any byte of the answer came is reopened and the request
 * sent again, once: the server had not read it. After a byte of the answer,
 * a failure is the caller's (the request may have run). */
#ifndef SURGEBOX_HTTP_TRANSPORT_H
#define SURGEBOX_HTTP_TRANSPORT_H

#include "endpoints.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct sbc_http_call sbc_http_call;

/* method "GET" or "POST" to ep's path; body may be NULL; idle_fd an idle
 * connection to ep from the caller's pool (taken over: used or closed), or
 * -1 for a fresh one. ep must outlive the call. NULL with err set when the
 * connection cannot even be started. */
sbc_http_call *sbc_http_start(const sbc_endpoint *ep, const char *method, const char *path, const char *body,
                              size_t body_len, int idle_fd, char *err, size_t err_len);
int sbc_http_fd(const sbc_http_call *h);
short sbc_http_events(const sbc_http_call *h);
/* After poll: 1 the answer is complete (sbc_http_status, sbc_http_body),
 * 0 not yet, -1 the exchange failed (err set: a failure of the
 * infrastructure, the daemon gone or broken). */
int sbc_http_step(sbc_http_call *h, short revents, char *err, size_t err_len);
int sbc_http_status(const sbc_http_call *h);
const char *sbc_http_body(const sbc_http_call *h, size_t *len); /* NUL-terminated */
/* Frees h; its connection back to the caller (an fd for the pool) when the
 * answer was complete and the server keeps the connection, else -1 (closed). */
int sbc_http_release(sbc_http_call *h);
void sbc_http_free(sbc_http_call *h);

#endif
