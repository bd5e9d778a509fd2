/* surgebox exec: one job from the command line. */
#include "cli.h"
#include "client.h"
#include "protocol.h"
#include "result.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
  sbc_job_fields job; /* first: sbc_job_opts store here */
  json_object *req, *env;
  sbc_files files;
  const char *toolchain, *stdin_path;
  bool json, merge, exit_program, warm;
} exec_req;

#define AT(F) SBO_AT(exec_req, F)
static const sbo_opt exec_opts[] = {
    {"stdin", 0, "FILE", "the program's standard input; '-' is ours (default: ours when it is a pipe or a file)", SBO_STR,
     AT(stdin_path)},
    {"merge-output", 0, NULL, "stderr into stdout, in write order (not with --toolchain)", SBO_FLAG, AT(merge)},
    {"warm", 0, NULL, "start a Python program from the slot's warm interpreter, same isolation (else cold, saying why)",
     SBO_FLAG, AT(warm)},
    {"env", 0, "K=V", "set a variable (repeatable; not with --toolchain)", SBO_CALL, AT(env), .call = sbc_opt_kv},
    {"json", 0, NULL, "print the daemon's answer (and errors) as JSON on stdout", SBO_FLAG, AT(json)},
    {"exit-code", 0, "MODE", "'job' (default): 0 the job ran, 2 it could not; 'program': the program's status", SBO_WORD,
     AT(exit_program), .words = (const char *const[]){"program", "job"}},
    {"toolchain", 0, "NAME", "let the daemon compile and run FILEs (see surgebox toolchains)", SBO_STR, AT(toolchain)},
    {NULL, 0, NULL, NULL}};

static const sbo_cmd exec_cmd = {
    "surgebox exec",
    "[options] [FILE|DIR...] -- PROGRAM [ARGS...]\n--toolchain NAME [options] FILE|DIR... [-- ARGS...]",
    "Run PROGRAM in /app holding FILEs, or compile and run them with a toolchain.\n"
    "A relative path keeps its directories (src/a.c is /app/src/a.c); an absolute one, or one with '..',\n"
    "goes under its last component; a directory is uploaded whole (symlinks leaving it are refused).",
    exec_opts, sbc_job_opts,
    "Plain output: every other step's output (a compile's warnings) on stderr, then the program's\n"
    "stdout and stderr. Exit status: 0 the job ran (whatever the program did), 1 usage error,\n"
    "2 daemon or sandbox failure; with --exit-code program, the program's own status\n"
    "(128+N when signal N killed it; the failed step's status when it never ran).\n",
    false, sbc_daemon_groups};

static void put(const sbc_stream *s, FILE *f) { fwrite(s->data, 1, s->len, f); }

/* What a person would not see in the output: a step that hit the pids
 * limit (its status may still be ok), a warm request that ran cold. */
static void print_notes(const sbc_result *r, bool warm) {
  for (size_t i = 0; i < r->n_steps; i++) {
    const sbc_step *s = &r->steps[i];
    if (s->pids_limit_hit)
      fprintf(stderr, "surgebox: step %s hit the pids limit: a fork or a new thread failed (raise it with --pids-limit N)\n",
              s->name);
  }
  const sbc_step *prog = sbc_result_program_step(r);
  json_object *start = NULL;
  if (warm && prog && prog->enforced && json_object_object_get_ex(prog->enforced, "start", &start) &&
      !strncmp(json_object_get_string(start), "cold", 4))
    fprintf(stderr, "surgebox: --warm: the program ran %s\n", json_object_get_string(start));
}

/* Diagnostics of every other step on stderr, then the program's output;
 * a job that did not end ok says so on stderr, with the error's text. */
static void print_plain(const sbc_result *r) {
  const sbc_step *prog = sbc_result_program_step(r), *last = sbc_result_last_step(r);
  for (size_t i = 0; i < r->n_steps; i++) {
    if (&r->steps[i] == prog) continue;
    put(&r->steps[i].out, stderr);
    put(&r->steps[i].err, stderr);
  }
  fflush(stderr);
  if (prog) {
    put(&prog->out, stdout);
    fflush(stdout);
    put(&prog->err, stderr);
  }
  if (!strcmp(r->status, SBP_STATUS_OK)) return;
  const char *why = sbc_result_why(r);
  fprintf(stderr, "surgebox: %s", r->status);
  if (last && r->n_steps > 1) fprintf(stderr, " in step %s", last->name);
  if (why) fprintf(stderr, ": %s", why);
  if (last && last->has_exit_code && last->exit_code != 0) fprintf(stderr, " (exit %d)", last->exit_code);
  if (last && last->signal) fprintf(stderr, " (%s)", last->signal);
  if (last && last->wall_waiting) fprintf(stderr, "; at the wall limit %s", last->wall_waiting);
  fputc('\n', stderr);
}

const char *sbc_toolchain_of(const char *file) {
  static const char *const map[][2] = {{".py", "python3"}, {".c", "gcc"},   {".cpp", "g++"}, {".cc", "g++"},
                                       {".rs", "rustc"},   {".java", "java"}, {".js", "node"}, {".jl", "julia"}};
  const char *dot = strrchr(file, '.');
  for (size_t i = 0; dot && i < sizeof map / sizeof *map; i++)
    if (!strcmp(dot, map[i][0])) return map[i][1];
  return NULL;
}

static void exec_req_free(exec_req *e) {
  sbc_job_fields_free(&e->job);
  json_object_put(e->req);
  json_object_put(e->env);
  json_object_put(e->files.files);
}

/* Ctrl-C during a job: the first cancels it (what it printed so far is
 * then shown), a second leaves at once. */
static volatile sig_atomic_t interrupts;
static void on_interrupt(int sig) {
  (void)sig;
  if (++interrupts > 1) _exit(130);
}

/* The exec round trip, with Ctrl-C turned into a cancel request: 0 with
 * *resp (the exec's answer, "cancelled" after a Ctrl-C), or the exit status. */
static int exec_roundtrip(const sbc_ctx *g, const char *name, bool json, json_object *req, json_object **resp) {
  sbc_conn c;
  char err[512];
  *resp = NULL;
  if (sbc_open_ctx(&c, g, NULL, err, sizeof err) < 0) return sbo_fail(name, json, SBO_EXIT_FAILURE, "%s", err);
  struct sigaction sa = {.sa_handler = on_interrupt}, old_int, old_term;
  sigemptyset(&sa.sa_mask); /* no SA_RESTART: poll returns EINTR */
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  int rc = sbc_send(&c, req);
  bool cancel_sent = false;
  const char *id = json_object_get_string(json_object_object_get(req, "id"));
  while (!*resp) {
    if (interrupts && !cancel_sent) {
      json_object *cancel = sbc_request_new("cancel");
      json_object_object_add(cancel, "target", json_object_new_string(id));
      sbc_send(&c, cancel);
      json_object_put(cancel);
      cancel_sent = true;
      fprintf(stderr, "surgebox exec: interrupted: cancelling the job (Ctrl-C again to leave at once)\n");
    }
    if (!(c.len && memchr(c.buf, '\n', c.len))) {
      struct pollfd pf = {.fd = c.fd, .events = POLLIN};
      if (poll(&pf, 1, -1) < 0) continue; /* EINTR: a Ctrl-C, handled above */
    }
    json_object *o = sbc_recv(&c);
    if (!o) break;
    json_object *t = json_object_object_get(o, "type"), *oid = json_object_object_get(o, "id");
    if (t && !strcmp(json_object_get_string(t), "cancel")) { /* the cancel's own answer */
      json_object_put(o);
      continue;
    }
    if (oid && id && strcmp(json_object_get_string(oid), id) != 0 && sbp_response_error_code(o)) {
      json_object_put(o); /* the cancel's not_found: the job's answer is on its way */
      continue;
    }
    *resp = o;
  }
  (void)rc;
  sbc_close(&c);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  return sbc_answer_status(name, json, resp, c.socket_path);
}

int sbc_read_job_stdin(const char *stdin_path, json_object *holder, char *err, size_t err_len) {
  int fd = -1;
  bool close_it = false;
  if (stdin_path && strcmp(stdin_path, "-") != 0) {
    fd = open(stdin_path, O_RDONLY | O_CLOEXEC);
    close_it = true;
  } else if (stdin_path) {
    fd = STDIN_FILENO;
  } else {
    struct stat st;
    if (isatty(STDIN_FILENO) || fstat(STDIN_FILENO, &st) < 0 || !(S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode)))
      return 0;
    fd = STDIN_FILENO;
  }
  size_t len = 0;
  unsigned char *in = fd >= 0 ? sbc_read_fd(fd, &len) : NULL;
  if (!in) snprintf(err, err_len, "cannot read %s: %s", stdin_path ? stdin_path : "standard input", strerror(errno));
  if (close_it && fd >= 0) close(fd);
  if (!in) return -1;
  if (len || stdin_path) sbc_content_field(holder, "stdin", in, len);
  free(in);
  return 0;
}

int sbc_exec_main(const sbc_ctx *g0, int argc, char **argv) {
  sbc_ctx g = *g0;
  exec_req e = {.req = json_object_new_object(), .env = json_object_new_object(), .files = {json_object_new_array(), 0}};
  sbc_job_fields_init(&e.job);
  sbo_parser p;
  int rc = sbo_parse(&p, &exec_cmd, argc, argv, &e, sbc_ctx_key, &g);
  e.json = e.json || p.json;
  if (rc != 0) {
    sbo_done(&p);
    exec_req_free(&e);
    return rc < 0 ? 0 : rc;
  }
  char err[PATH_MAX + 256] = "";
  const char *name = exec_cmd.name;
  if (!e.toolchain && (!p.dashdash || p.n_rest == 0)) {
    const char *tc = p.n_pos ? sbc_toolchain_of(p.pos[0]) : NULL;
    if (tc)
      rc = sbo_usage_error(&p, "needs -- PROGRAM [ARGS...] or --toolchain NAME: surgebox exec --toolchain %s %s", tc,
                           p.pos[0]);
    else rc = sbo_usage_error(&p, "needs -- PROGRAM [ARGS...] or --toolchain NAME");
  }
  else if (e.toolchain && (json_object_object_length(e.env) || e.merge))
    rc = sbo_usage_error(&p, "--%s is not available with --toolchain (the toolchain sets the environment and streams)",
                         json_object_object_length(e.env) ? "env" : "merge-output");
  else if (!e.toolchain &&
           (json_object_object_length(e.job.options) || json_object_array_length(e.job.args) ||
            json_object_array_length(e.job.cargs)))
    rc = sbo_usage_error(&p, "--option, --std, --opt, --arg and --compile-arg need --toolchain");
  for (int i = 0, fr; rc == 0 && i < p.n_pos; i++)
    if ((fr = sbc_files_add(&e.files, p.pos[i], err, sizeof err)) < 0)
      rc = sbo_fail(name, e.json, fr == -2 ? SBO_EXIT_FAILURE : SBO_EXIT_USAGE, "%s", err);
  json_object *req = sbc_request_new("exec"), *resp = NULL;
  json_object *step = json_object_new_object();
  if (rc == 0) {
    json_object_object_add(req, "files", json_object_get(e.files.files));
    if (g.profile) json_object_object_add(req, "profile", json_object_new_string(g.profile));
    if (e.warm) json_object_object_add(req, "warm", json_object_new_boolean(true));
    if (sbc_read_job_stdin(e.stdin_path, e.toolchain ? req : step, err, sizeof err) < 0)
      rc = sbo_fail(name, e.json, SBO_EXIT_FAILURE, "%s", err); /* an input that cannot be read */
  }
  if (rc == 0 && e.toolchain) {
    for (int i = 0; i < p.n_rest; i++) json_object_array_add(e.job.args, json_object_new_string(p.rest[i]));
    json_object_object_add(req, "toolchain", json_object_new_string(e.toolchain));
    json_object_object_add(req, "options", json_object_get(e.job.options));
    json_object_object_add(req, "args", json_object_get(e.job.args));
    if (json_object_array_length(e.job.cargs)) json_object_object_add(req, "compile_args", json_object_get(e.job.cargs));
    json_object_object_add(req, "limits", json_object_get(e.job.limits));
  } else if (rc == 0) {
    json_object *prog = json_object_new_array();
    for (int i = 0; i < p.n_rest; i++) json_object_array_add(prog, json_object_new_string(p.rest[i]));
    json_object_object_add(step, "name", json_object_new_string("run"));
    json_object_object_add(step, "argv", prog);
    if (json_object_object_length(e.env)) json_object_object_add(step, "env", json_object_get(e.env));
    if (e.merge) json_object_object_add(step, "merge_output", json_object_new_boolean(true));
    json_object_object_add(step, "limits", json_object_get(e.job.limits));
    json_object *steps = json_object_new_array();
    json_object_array_add(steps, json_object_get(step));
    json_object_object_add(req, "steps", steps);
  }
  if (rc == 0) rc = exec_roundtrip(&g, name, e.json, req, &resp);
  sbc_result r = {0};
  if (rc == 0 && sbc_result_parse(resp, &r, err, sizeof err) < 0) {
    rc = sbo_fail(name, e.json, SBO_EXIT_FAILURE, "the daemon's answer: %s", err);
  } else if (rc == 0) {
    if (e.json) sbc_print_json(resp);
    else {
      print_plain(&r);
      print_notes(&r, e.warm);
    }
    /* the job did not run as asked: the machine, not the program, is at fault */
    if (interrupts) rc = 130; /* cancelled by the user: what ran so far was shown */
    else if (sbc_result_failed(&r)) rc = SBO_EXIT_FAILURE;
    else if (e.exit_program) rc = sbc_result_shell_status(&r) < 0 ? SBO_EXIT_FAILURE : sbc_result_shell_status(&r);
  }
  sbc_result_free(&r);
  fflush(stdout);
  json_object_put(resp);
  json_object_put(req);
  json_object_put(step);
  sbo_done(&p);
  exec_req_free(&e);
  return rc;
}
