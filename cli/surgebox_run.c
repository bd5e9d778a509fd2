/* surgebox-run: run one program in the sandbox (a debugging tool).
 *
 *   surgebox-run [options] -- PROGRAM [ARGS...]
 *
 * Exit codes: 0 the sandbox worked (whatever the program did), 1 usage
 * error, 2 sandbox failure. */
#include "cliopt.h"
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the command line sets: the run's spec and runtime, and its own. */
typedef struct {
  sb_spec spec;
  sb_runtime_options ro;
  const char *dir, *stdin_path;
  bool json, version;
  const char **env; /* argc + 1 entries */
  size_t n_env;
} run_args;

static int add_env(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)p, (void)o;
  run_args *a = opts;
  if (!strchr(val, '=')) return -1;
  a->env[a->n_env++] = val;
  return 0;
}
static int cgroup_kind(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)p, (void)o;
  return sb_cgroup_kind_parse(val, &((run_args *)opts)->ro.cgroup) < 0 ? -1 : 0;
}
static int uid_range(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)p, (void)o;
  run_args *a = opts;
  return sb_uid_range_parse(val, &a->ro.uid_first, &a->ro.uid_count) < 0 ? -1 : 0;
}

#define LIMIT(F) SBO_AT(run_args, spec.limits.F), .min = 1, .max = __LONG_MAX__
static const sbo_opt run_opts[] = {
    {"dir", 0, "DIR", "copy DIR's contents to /app (not written back)", SBO_STR, SBO_AT(run_args, dir)},
    {"time-limit", 0, "S", "wall-clock limit in seconds (default 30)", SBO_DOUBLE, SBO_AT(run_args, spec.limits.wall_time_s)},
    {"cpu-limit", 0, "S", "CPU-time limit of the whole tree (default 30)", SBO_DOUBLE, SBO_AT(run_args, spec.limits.cpu_time_s)},
    {"memory-limit", 0, "MIB", "memory limit (default 2048)", SBO_INT, LIMIT(memory_mib)},
    {"pids-limit", 0, "N", "processes/threads (default 128)", SBO_INT, LIMIT(pids)},
    {"output-limit", 0, "BYTES", "per stream (default 8388608)", SBO_INT, LIMIT(output_bytes)},
    {"file-size-limit", 0, "MIB", "largest file a program may write (default 256)", SBO_INT, LIMIT(file_size_mib)},
    {"tmp-size", 0, "MIB", "size of /tmp and of /app (default 512)", SBO_INT, LIMIT(tmp_mib)},
    {"open-files", 0, "N", "RLIMIT_NOFILE (default 256)", SBO_INT, LIMIT(open_files)},
    {"stdin", 0, "FILE", "feed FILE on standard input (default /dev/null)", SBO_STR, SBO_AT(run_args, stdin_path)},
    {"merge-output", 0, NULL, "stderr into the same pipe as stdout", SBO_FLAG, SBO_AT(run_args, spec.merge_output)},
    {"stall-grace", 0, "S", "the wall limit excuses up to S seconds the program waited for a CPU other work held (default 5; 0: pure wall clock)",
     SBO_NONNEG, SBO_AT(run_args, ro.stall_grace_s), .max = 1000000000},
    {"cgroup", 0, "auto|v2|v1|none", "backend (default auto)", SBO_CALL, .call = cgroup_kind},
    {"env", 0, "K=V", "set a variable (repeatable; replaces the default PATH/HOME set)", SBO_CALL, .call = add_env},
    {"cwd", 0, "PATH", "working directory inside (default /app)", SBO_STR, SBO_AT(run_args, spec.cwd)},
    {"root", 0, "DIR", "take /usr, /lib*, /bin, /sbin, /etc from DIR (a profile) instead of the host", SBO_STR,
     SBO_AT(run_args, spec.root)},
    {"uid-range", 0, "F-L", "as root, take this run's uid from F-L (default 1879048192-1879052287)", SBO_CALL,
     .call = uid_range},
    {"output-base64", 0, NULL, "stdout_b64/stderr_b64 in the result document even when the text is exact", SBO_FLAG,
     SBO_AT(run_args, spec.output_base64)},
    {"json", 0, NULL, "print the result document instead of the output", SBO_FLAG, SBO_AT(run_args, json)},
    {"version", 0, NULL, "print the version and exit", SBO_FLAG, SBO_AT(run_args, version)},
    {NULL, 0, NULL, NULL}};
static const sbo_cmd run_cmd = {
    "surgebox-run", "[options] -- PROGRAM [ARGS...]", "Run one program in the sandbox (a debugging tool).", run_opts,
    NULL, "exit status: 0 the sandbox worked (whatever the program did), 1 usage error, 2 sandbox failure\n", true, NULL};

static unsigned char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 65536, n = 0;
  unsigned char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      unsigned char *nb = realloc(buf, cap *= 2);
      if (!nb) {
        free(buf);
        buf = NULL;
      }
      buf = nb;
    }
  }
  fclose(f);
  *len = n;
  return buf;
}

int main(int argc, char **argv) {
  run_args a = {.env = calloc((size_t)argc + 1, sizeof *a.env)};
  sb_spec_init(&a.spec);
  sb_runtime_options_default(&a.ro);
  if (!a.env) return sbo_fail(run_cmd.name, false, SBO_EXIT_FAILURE, "out of memory");
  sbo_parser p;
  int rc = sbo_parse(&p, &run_cmd, argc, argv, &a, NULL, NULL);
  sbo_done(&p);
  /* in order: PROGRAM is the first positional, or what follows "--" */
  char **prog = p.n_pos ? p.pos : p.rest;
  if (rc == 0 && a.version) printf("surgebox-run %s\n", SURGEBOX_VERSION);
  else if (rc == 0 && !p.n_pos && !p.n_rest) rc = sbo_usage_error(&p, "no PROGRAM given");
  if (rc != 0 || a.version) {
    free(a.env);
    return rc < 0 ? 0 : rc;
  }
  sb_spec spec = a.spec;
  sb_runtime_options ro = a.ro;
  const char *dir = a.dir, *stdin_path = a.stdin_path, **env = a.env;
  bool json = a.json;
  spec.argv = (const char *const *)prog;
  if (a.n_env) spec.envp = env;

  unsigned char *stdin_data = NULL;
  if (stdin_path) {
    stdin_data = read_all(stdin_path, &spec.stdin_len);
    if (!stdin_data) {
      fprintf(stderr, "surgebox-run: cannot read %s: %s\n", stdin_path, strerror(errno));
      return 1;
    }
    spec.stdin_data = stdin_data;
  }

  char err[SB_ERR_MAX] = "";
  sb_runtime *rt;
  if (sb_runtime_open(&ro, &rt, err) < 0) {
    fprintf(stderr, "surgebox-run: %s\n", err);
    return 2;
  }
  if (sb_runtime_warning(rt) && !json) fprintf(stderr, "surgebox-run: warning: %s\n", sb_runtime_warning(rt));
  sb_workspace *ws = NULL;
  rc = sb_workspace_create(rt, spec.limits.tmp_mib, &ws, err);
  if (rc == 0 && dir) rc = sb_workspace_copy_in(ws, dir, err);
  if (rc < 0) {
    fprintf(stderr, "surgebox-run: %s\n", err);
    sb_workspace_destroy(ws);
    sb_runtime_close(rt);
    return 2;
  }
  spec.workspace = ws;
  sb_result r;
  sb_run(rt, &spec, &r);
  if (json) {
    json_object *doc = sb_result_to_json(&r, rt);
    puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(doc);
  } else {
    if (r.out.len) fwrite(r.out.data, 1, r.out.len, stdout);
    if (r.err.len) fwrite(r.err.data, 1, r.err.len, stderr);
    fflush(stdout);
    if (r.status != SB_OK) {
      fprintf(stderr, "surgebox-run: %s", sb_status_name(r.status));
      if (r.exit_code > 0) fprintf(stderr, " (exit %d)", r.exit_code);
      if (r.limit_hit) fprintf(stderr, " (%s limit)", r.limit_hit);
      if (r.error[0]) fprintf(stderr, ": %s", r.error);
      fputc('\n', stderr);
    }
  }
  int exit_code = r.status == SB_INTERNAL_ERROR || r.status == SB_HOST_KILLED ? 2 : 0; /* the machine failed */
  sb_result_free(&r);
  sb_workspace_destroy(ws);
  sb_runtime_close(rt);
  free(stdin_data);
  free(env);
  return exit_code;
}
