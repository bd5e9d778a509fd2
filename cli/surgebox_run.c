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

enum { O_DIR = 256, O_TIME, O_CPU, O_MEM, O_PIDS, O_OUT, O_FSIZE, O_TMP, O_NOFILE, O_STDIN, O_MERGE, O_CG, O_ENV, O_CWD,
       O_ROOT, O_JSON, O_UIDRANGE, O_B64, O_VERSION };
static const sbo_opt run_opts[] = {
    {"dir", O_DIR, "DIR", "copy DIR's contents to /app (not written back)"},
    {"time-limit", O_TIME, "S", "wall-clock limit in seconds (default 30)"},
    {"cpu-limit", O_CPU, "S", "CPU-time limit of the whole tree (default 30)"},
    {"memory-limit", O_MEM, "MIB", "memory limit (default 2048)"},
    {"pids-limit", O_PIDS, "N", "processes/threads (default 128)"},
    {"output-limit", O_OUT, "BYTES", "per stream (default 8388608)"},
    {"file-size-limit", O_FSIZE, "MIB", "largest file a program may write (default 256)"},
    {"tmp-size", O_TMP, "MIB", "size of /tmp and of /app (default 512)"},
    {"open-files", O_NOFILE, "N", "RLIMIT_NOFILE (default 256)"},
    {"stdin", O_STDIN, "FILE", "feed FILE on standard input (default /dev/null)"},
    {"merge-output", O_MERGE, NULL, "stderr into the same pipe as stdout"},
    {"cgroup", O_CG, "auto|v2|v1|none", "backend (default auto)"},
    {"env", O_ENV, "K=V", "set a variable (repeatable; replaces the default PATH/HOME set)"},
    {"cwd", O_CWD, "PATH", "working directory inside (default /app)"},
    {"root", O_ROOT, "DIR", "take /usr, /lib*, /bin, /sbin, /etc from DIR (a profile) instead of the host"},
    {"uid-range", O_UIDRANGE, "F-L", "as root, take this run's uid from F-L (default 1879048192-1879052287)"},
    {"output-base64", O_B64, NULL, "stdout_b64/stderr_b64 in the result document even when the text is exact"},
    {"json", O_JSON, NULL, "print the result document instead of the output"},
    {"version", O_VERSION, NULL, "print the version and exit"},
    {NULL, 0, NULL, NULL}};
static const sbo_cmd run_cmd = {
    "surgebox-run", "[options] -- PROGRAM [ARGS...]", "Run one program in the sandbox (a debugging tool).", run_opts,
    NULL, "exit status: 0 the sandbox worked (whatever the program did), 1 usage error, 2 sandbox failure\n", true, NULL};

static int parse_double(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v > 0)) return -1;
  *out = v;
  return 0;
}

static int parse_u64(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end || v == 0 || s[0] == '-') return -1;
  *out = v;
  return 0;
}

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
  sb_spec spec;
  sb_spec_init(&spec);
  sb_runtime_options ro;
  sb_runtime_options_default(&ro);
  const char *dir = NULL, *stdin_path = NULL;
  bool json = false;
  const char **env = calloc((size_t)argc + 1, sizeof *env);
  size_t n_env = 0;
  sbo_parser p;
  sbo_init(&p, &run_cmd, argc, argv);
  int c;
  const char *oval;
  bool bad = false;
  while (!bad && (c = sbo_next(&p, &oval)) > 0) {
    switch (c) {
    case O_DIR: dir = oval; break;
    case O_TIME: bad = parse_double(oval, &spec.limits.wall_time_s) < 0; break;
    case O_CPU: bad = parse_double(oval, &spec.limits.cpu_time_s) < 0; break;
    case O_MEM: bad = parse_u64(oval, &spec.limits.memory_mib) < 0; break;
    case O_PIDS: bad = parse_u64(oval, &spec.limits.pids) < 0; break;
    case O_OUT: bad = parse_u64(oval, &spec.limits.output_bytes) < 0; break;
    case O_FSIZE: bad = parse_u64(oval, &spec.limits.file_size_mib) < 0; break;
    case O_TMP: bad = parse_u64(oval, &spec.limits.tmp_mib) < 0; break;
    case O_NOFILE: bad = parse_u64(oval, &spec.limits.open_files) < 0; break;
    case O_STDIN: stdin_path = oval; break;
    case O_MERGE: spec.merge_output = true; break;
    case O_CG: bad = sb_cgroup_kind_parse(oval, &ro.cgroup) < 0; break;
    case O_ENV:
      bad = !strchr(oval, '=');
      env[n_env++] = oval;
      break;
    case O_CWD: spec.cwd = oval; break;
    case O_ROOT: spec.root = oval; break;
    case O_JSON: json = true; break;
    case O_UIDRANGE: bad = sb_uid_range_parse(oval, &ro.uid_first, &ro.uid_count) < 0; break;
    case O_B64: spec.output_base64 = true; break;
    case O_VERSION:
      printf("surgebox-run %s\n", SURGEBOX_VERSION);
      sbo_done(&p);
      free(env);
      return 0;
    }
    if (bad) sbo_bad_value(&p, c, oval);
  }
  sbo_done(&p);
  /* in order: PROGRAM is the first positional, or what follows "--" */
  char **prog = p.n_pos ? p.pos : p.rest;
  if (bad || c == SBO_STOP || (!p.n_pos && !p.n_rest)) {
    int rc = bad ? 1 : c == SBO_STOP ? p.status : sbo_usage_error(&p, "no PROGRAM given");
    free(env);
    return rc;
  }
  spec.argv = (const char *const *)prog;
  if (n_env) spec.envp = env;

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
  int rc = sb_workspace_create(rt, spec.limits.tmp_mib, &ws, err);
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
