/* The surgebox commands that talk to the daemon (exec, status, toolchains,
 * ping): their bodies, called by cli/surgebox.c's command table. Prefix sbc_
 * (the client side). */
#ifndef SURGEBOX_CLI_H
#define SURGEBOX_CLI_H

#include "cliopt.h"
#include "command.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

int sbc_exec_main(const sbc_ctx *g, int argc, char **argv);
int sbc_status_main(const sbc_ctx *g, int argc, char **argv);
int sbc_toolchains_main(const sbc_ctx *g, int argc, char **argv);
int sbc_ping_main(const sbc_ctx *g, int argc, char **argv);
int sbc_doctor_main(const sbc_ctx *g, int argc, char **argv); /* cli_doctor.c */
int sbc_cases_main(const sbc_ctx *g, int argc, char **argv);  /* cli_cases.c */

/* --- cli_exec.c, shared with cases --- */
/* The toolchain a file's extension names (".py" python3, ".c" gcc, ".cpp"
 * g++, ...): exec's hint, cases' choice; NULL when none. */
const char *sbc_toolchain_of(const char *file);

/* --- job_opts.c: the options exec and cases share --- */
/* What they store: a command's options struct begins with this. */
typedef struct {
  json_object *options, *args, *cargs, *limits;
} sbc_job_fields;
/* --option, --std, --opt, --arg, --compile-arg and the five limits,
 * declared into sbc_job_fields: a command's sbo_cmd.more. */
extern const sbo_opt sbc_job_opts[];
void sbc_job_fields_init(sbc_job_fields *j);
void sbc_job_fields_free(sbc_job_fields *j);
/* An SBO_CALL: "K=V" into the JSON object at the row's .at (-1: no '=' or an empty K). */
int sbc_opt_kv(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts);

/* --- cli_common.c --- */
/* A request object with a fresh id ("exec-<pid>-<n>": distinct per request,
 * so the daemon's log tells CLI calls apart) and its type. */
json_object *sbc_request_new(const char *type);
/* Send req, receive the answer. 0 with *resp set; on failure the error is
 * reported (JSON on stdout when json) and the exit status (2) returned. */
int sbc_roundtrip(const sbc_ctx *g, const char *name, bool json, json_object *req, json_object **resp);
/* The same, and whether no daemon answered so that this call started one. */
int sbc_roundtrip_started(const sbc_ctx *g, const char *name, bool json, json_object *req, json_object **resp,
                          bool *started);
/* The end of a round trip: 0 for an answer that is not an error; else
 * "no answer from the daemon at SOCKET" or the daemon's "code: message"
 * reported (exit status 2, *resp freed and NULL). */
int sbc_answer_status(const char *name, bool json, json_object **resp, const char *socket_path);
void sbc_print_json(json_object *o);

/* --- cli_files.c: what exec uploads --- */
typedef struct {
  json_object *files; /* the request's "files" array */
  size_t bytes;       /* total content */
} sbc_files;
/* Add a FILE or DIRECTORY argument: a relative path is kept (normalised),
 * an absolute one or one with ".." goes under its last component; a
 * directory is uploaded whole below that name, refusing symlinks that leave
 * it and anything but regular files and directories. 0, -1 with err for
 * an argument refused (a usage error), -2 for one that cannot be read (a
 * missing file: exit 2, as for every command's unreadable input). */
int sbc_files_add(sbc_files *f, const char *arg, char *err, size_t err_len);
/* All of fd's bytes (a pipe, a file); NULL on error. */
unsigned char *sbc_read_fd(int fd, size_t *len);
/* The job's stdin into holder's "stdin"/"stdin_b64" (cli_exec.c): the
 * file stdin_path, "-" ours; NULL: ours when it is a pipe or a regular file
 * (a terminal, /dev/null or a socket is left alone). 0 or -1 with err. */
int sbc_read_job_stdin(const char *stdin_path, json_object *holder, char *err, size_t err_len);
int sbc_trace_main(const sbc_ctx *g, int argc, char **argv); /* cli_trace.c */
/* A trace limit (--events N, --bytes N, ...) as a declared option row: an
 * integer from MIN to MAX into the trace option (the json_object * at .at
 * of the options given to sbo_store), under the row's name with '_' for
 * '-'; surgebox trace and trace-dataset. WHERE: SBO_AT(T, F). */
int sbc_trace_limit_opt(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts);
#define SBC_TRACE_LIMIT(NAME, HELP, MIN, MAX, WHERE)                                                                   \
  {NAME, 0, "N", HELP, SBO_CALL, WHERE, .min = MIN, .max = MAX, .call = sbc_trace_limit_opt}
/* data as "key" (UTF-8 text) or "key_b64". */
void sbc_content_field(json_object *o, const char *key, const unsigned char *data, size_t len);

#endif
