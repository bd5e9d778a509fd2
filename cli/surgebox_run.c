/* surgebox-run: run one program in the sandbox (a debugging tool).
 *
 *   surgebox-run [options] -- PROGRAM [ARGS...]
 *
 * Exit codes: 0 the sandbox worked (whatever the program did), 1 usage
 * error, 2 sandbox failure. */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f) {
  fprintf(f,
          "usage: surgebox-run [options] -- PROGRAM [ARGS...]\n"
          "  --dir DIR             copy DIR's contents to /app (not written back)\n"
          "  --time-limit S        wall-clock limit in seconds (default 30)\n"
          "  --cpu-limit S         CPU-time limit of the whole tree (default 30)\n"
          "  --memory-limit MIB    memory limit (default 2048)\n"
          "  --pids-limit N        processes/threads (default 128)\n"
          "  --output-limit BYTES  per stream (default 8388608)\n"
          "  --file-size-limit MIB largest file a program may write (default 256)\n"
          "  --tmp-size MIB        size of /tmp and of /app (default 512)\n"
          "  --open-files N        RLIMIT_NOFILE (default 256)\n"
          "  --stdin FILE          feed FILE on standard input (default /dev/null)\n"
          "  --merge-output        stderr into the same pipe as stdout\n"
          "  --cgroup auto|v2|v1|none   backend (default auto)\n"
          "  --env K=V             set a variable (repeatable; replaces the default PATH/HOME set)\n"
          "  --cwd PATH            working directory inside (default /app)\n"
          "  --root DIR            take /usr, /lib*, /bin, /sbin, /etc from DIR (a profile) instead of the host\n"
          "  --uid-range F-L       as root, take this run's uid from F-L (default 1879048192-1879052287)\n"
          "  --output-base64       stdout_b64/stderr_b64 in the result document even when the text is exact\n"
          "  --json                print the result document instead of the output\n");
}

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
  enum { O_DIR = 256, O_TIME, O_CPU, O_MEM, O_PIDS, O_OUT, O_FSIZE, O_TMP, O_NOFILE, O_STDIN, O_MERGE, O_CG, O_ENV, O_CWD, O_ROOT, O_JSON, O_UIDRANGE, O_B64, O_HELP };
  static const struct option opts[] = {
      {"dir", required_argument, 0, O_DIR},           {"time-limit", required_argument, 0, O_TIME},
      {"cpu-limit", required_argument, 0, O_CPU},     {"memory-limit", required_argument, 0, O_MEM},
      {"pids-limit", required_argument, 0, O_PIDS},   {"output-limit", required_argument, 0, O_OUT},
      {"file-size-limit", required_argument, 0, O_FSIZE}, {"tmp-size", required_argument, 0, O_TMP},
      {"open-files", required_argument, 0, O_NOFILE}, {"stdin", required_argument, 0, O_STDIN},
      {"merge-output", no_argument, 0, O_MERGE},      {"cgroup", required_argument, 0, O_CG},
      {"env", required_argument, 0, O_ENV},           {"cwd", required_argument, 0, O_CWD},
      {"json", no_argument, 0, O_JSON},               {"help", no_argument, 0, O_HELP},
      {"root", required_argument, 0, O_ROOT},
      {"uid-range", required_argument, 0, O_UIDRANGE}, {"output-base64", no_argument, 0, O_B64},
      {0, 0, 0, 0}};
  sb_spec spec;
  sb_spec_init(&spec);
  sb_runtime_options ro;
  sb_runtime_options_default(&ro);
  const char *dir = NULL, *stdin_path = NULL;
  bool json = false;
  const char **env = calloc((size_t)argc + 1, sizeof *env);
  size_t n_env = 0;
  int c;
  bool bad = false;
  while (!bad && (c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
    switch (c) {
    case O_DIR: dir = optarg; break;
    case O_TIME: bad = parse_double(optarg, &spec.limits.wall_time_s) < 0; break;
    case O_CPU: bad = parse_double(optarg, &spec.limits.cpu_time_s) < 0; break;
    case O_MEM: bad = parse_u64(optarg, &spec.limits.memory_mib) < 0; break;
    case O_PIDS: bad = parse_u64(optarg, &spec.limits.pids) < 0; break;
    case O_OUT: bad = parse_u64(optarg, &spec.limits.output_bytes) < 0; break;
    case O_FSIZE: bad = parse_u64(optarg, &spec.limits.file_size_mib) < 0; break;
    case O_TMP: bad = parse_u64(optarg, &spec.limits.tmp_mib) < 0; break;
    case O_NOFILE: bad = parse_u64(optarg, &spec.limits.open_files) < 0; break;
    case O_STDIN: stdin_path = optarg; break;
    case O_MERGE: spec.merge_output = true; break;
    case O_CG: bad = sb_cgroup_kind_parse(optarg, &ro.cgroup) < 0; break;
    case O_ENV:
      bad = !strchr(optarg, '=');
      env[n_env++] = optarg;
      break;
    case O_CWD: spec.cwd = optarg; break;
    case O_ROOT: spec.root = optarg; break;
    case O_JSON: json = true; break;
    case O_UIDRANGE: bad = sb_uid_range_parse(optarg, &ro.uid_first, &ro.uid_count) < 0; break;
    case O_B64: spec.output_base64 = true; break;
    case O_HELP: usage(stdout); return 0;
    default: bad = true;
    }
    if (bad && c != '?') fprintf(stderr, "surgebox-run: bad value for an option: %s\n", optarg ? optarg : "");
  }
  if (bad || optind >= argc) {
    if (!bad) fprintf(stderr, "surgebox-run: no PROGRAM given\n");
    usage(stderr);
    return 1;
  }
  spec.argv = (const char *const *)argv + optind;
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
  int exit_code = r.status == SB_INTERNAL_ERROR ? 2 : 0;
  sb_result_free(&r);
  sb_workspace_destroy(ws);
  sb_runtime_close(rt);
  free(stdin_data);
  free(env);
  return exit_code;
}
