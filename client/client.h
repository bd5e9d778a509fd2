/* The client side of the socket (prefix sbc_), used by the surgebox CLI.
 * When nothing listens on the default socket, sbc_open can start a private
 * surgeboxd (the "embedded default") and stops it again in sbc_close; an
 * explicitly named socket is never replaced by one. */
#ifndef SURGEBOX_CLIENT_H
#define SURGEBOX_CLIENT_H

#include "answer_trim.h"
#include "command.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct {
  int fd;
  pid_t daemon_pid;           /* > 0: the embedded daemon we started */
  bool started;               /* no daemon answered: this connection started one (lingering or embedded) */
  char private_dir[4096];     /* its socket's directory, removed at close */
  char socket_path[4096];
  char *buf;                  /* buf[start, len): bytes received but not yet returned */
  size_t start, len, cap;
  sbc_trimmer parse;          /* the answers' parser and trimmed copy, made once */
} sbc_conn;

/* socket_path NULL: $SURGEBOX_SOCKET, else the default socket. A socket
 * named explicitly (socket_path, or $SURGEBOX_SOCKET) that does not answer is
 * an error naming it and the next step; only the default socket, with
 * autostart, may start a private daemon. extra_args: NULL-terminated
 * arguments for that daemon (e.g. "--jobs", "4"). 0, or -1 with err set. */
int sbc_open(sbc_conn *c, const char *socket_path, bool autostart, const char *const *extra_args, char *err,
             size_t err_len);
/* The same, from a command's ctx (its --socket/$SURGEBOX_SOCKET and --no-autostart). */
int sbc_open_ctx(sbc_conn *c, const sbc_ctx *ctx, const char *const *extra_args, char *err, size_t err_len);
int sbc_send(sbc_conn *c, json_object *req);  /* 0 or -1 */
/* Next response line, parsed; NULL on EOF or error. Caller owns it. */
json_object *sbc_recv(sbc_conn *c);
/* The same, and the line as received (without its newline) in line and len:
 * borrowed, valid until the next call on c (batch writes those bytes). */
json_object *sbc_recv_line(sbc_conn *c, const char **line, size_t *len);
/* The same, parsed trimmed (answer_trim.h: for a caller that reads the
 * answer through sbc_result_parse and keeps the bytes as received). */
json_object *sbc_recv_trimmed(sbc_conn *c, const char **line, size_t *len);
/* The next line as received, not parsed (borrowed as sbc_recv_line's): 1,
 * or 0 on EOF or error. */
int sbc_recv_raw(sbc_conn *c, const char **line, size_t *len);
/* A whole line is already received: sbc_recv returns without waiting. */
bool sbc_has_line(const sbc_conn *c);
void sbc_close(sbc_conn *c);

/* surgebox metrics [--help] (metrics_cli.c): exit status 0, 1 or 2. */
int sbc_metrics_main(const sbc_ctx *ctx, int argc, char **argv);

#endif
