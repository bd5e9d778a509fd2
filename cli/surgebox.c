/* surgebox: the client. Commands talk to surgeboxd over its socket; when no
 * daemon listens, a private one is started for the duration of the command
 * (the embedded default; --no-autostart refuses).
 *
 * Exit codes: 0 the job ran (whatever the program did), 1 usage error,
 * 2 daemon or sandbox failure. */
#include "batch.h"
#include "client.h"
#include "eval_cli.h"
#include "profile.h"
#include "regen.h"
#include "verify.h"
#include "protocol.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f) {
  fprintf(f,
          "usage: surgebox [--socket PATH] [--no-autostart] [--profile NAME] COMMAND ...\n"
          "commands:\n"
          "  exec [options] [FILE...] -- PROGRAM [ARGS...]   run PROGRAM in /app holding FILEs\n"
          "      --stdin FILE  --time-limit S  --cpu-limit S  --memory-limit MIB  --pids-limit N\n"
          "      --output-limit BYTES  --merge-output  --env K=V  --json\n"
          "      --toolchain NAME [--std STD] [--opt LEVEL] [--arg A]...   (toolchain form)\n"
          "  status [--json]      daemon state and counters\n"
          "  toolchains [--json]  available toolchains\n"
          "  ping                 check the daemon answers\n"
          "  metrics              the daemon's counters, OpenMetrics text (never starts a daemon)\n"
          "  regen --data DIR [--subset dr,bg,tc|all] [--out DIR] [--summary FILE] [--jobs N]\n"
          "        [--repeat K] [--check-determinism] [--only I,J,...]\n"
          "                       regenerate SURGE's references by running every item; fidelity report\n"
          "  batch IN.jsonl [--out OUT.jsonl] [--concurrency N] [--order input|completion] [--retry-failed]\n"
          "                       run a file of exec requests (JSON Lines), answers as JSON Lines; resumable\n"
          "  bins --data FILE [--edges 0.001,0.01,0.1,1] [--json]   CPU-time histogram (SURGE's Figure 4)\n"
          "  dr-matrix --data DIR [--compilers g++,clang++] [--stds 03,11,14,17] [--opts O0,O1,O2,O3,Os]\n"
          "            [--out FILE] [--jobs N]   every DR snippet under every configuration\n"
          "  eval --references FILE... | --data DIR --predictions FILE [--items FILE] [--json]\n"
          "       [--by language|difficulty|config] [--fl-extract]\n"
          "                       score LLM predictions with SURGE's metrics (no daemon needed)\n"
          "  eval --execute --data DIR [--subset S] --predictions FILE ...\n"
          "                       the same against references regenerated right then\n"
          "  verify --benchmark cruxeval --mode output|input --generations GENS.json [--out SCORED.json]\n"
          "                       run CRUXEval generations sandboxed, score them as its authors do\n"
          "  verify --benchmark surge ...   the same as eval --execute\n"
          "  profile create|list|show|verify|delete|run NAME   root file systems (e.g. SURGE's own, surge-2025)\n"
          "environment: SURGEBOX_SOCKET (socket path), SURGEBOXD (daemon binary for autostart)\n"
          "exit codes: 0 the job ran (whatever the program did), 1 usage error, 2 daemon/sandbox failure\n");
}

typedef struct {
  const char *socket;
  bool autostart;
  const char *profile; /* root file system of jobs (default: the daemon's) */
} global_opts;

static unsigned char *read_file(const char *path, size_t *len, mode_t *mode) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  struct stat st;
  if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    errno = EINVAL;
    return NULL;
  }
  unsigned char *buf = malloc((size_t)st.st_size + 1);
  size_t n = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
  fclose(f);
  if (!buf || n != (size_t)st.st_size) {
    free(buf);
    errno = EIO;
    return NULL;
  }
  *len = n;
  if (mode) *mode = st.st_mode & 0777;
  return buf;
}

static bool valid_utf8_text(const unsigned char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!len || c == 0 || i + len > n) return false;
    for (size_t k = 1; k < len; k++)
      if ((s[i + k] & 0xC0) != 0x80) return false;
    i += len;
  }
  return true;
}

/* Text goes as "content", anything else as "content_b64". */
static json_object *content_field(json_object *o, const char *key, const unsigned char *data, size_t len) {
  if (valid_utf8_text(data, len)) {
    json_object_object_add(o, key, json_object_new_string_len((const char *)data, (int)len));
  } else {
    char b64key[32];
    snprintf(b64key, sizeof b64key, "%s_b64", key);
    char *enc = sbp_base64_encode(data, len, NULL);
    json_object_object_add(o, b64key, json_object_new_string(enc ? enc : ""));
    free(enc);
  }
  return o;
}

static int roundtrip(const global_opts *g, json_object *req, json_object **resp) {
  sbc_conn c;
  char err[512];
  if (sbc_open(&c, g->socket, g->autostart, NULL, err, sizeof err) < 0) {
    fprintf(stderr, "surgebox: %s\n", err);
    return 2;
  }
  int rc = sbc_send(&c, req);
  *resp = rc == 0 ? sbc_recv(&c) : NULL;
  sbc_close(&c);
  if (!*resp) {
    fprintf(stderr, "surgebox: no answer from the daemon at %s\n", c.socket_path);
    return 2;
  }
  const char *code = sbp_response_error_code(*resp);
  if (code) {
    json_object *e = NULL, *m = NULL;
    json_object_object_get_ex(*resp, "error", &e);
    if (e) json_object_object_get_ex(e, "message", &m);
    fprintf(stderr, "surgebox: %s: %s\n", code, m ? json_object_get_string(m) : "");
    return 2;
  }
  return 0;
}

static void print_json(json_object *o) {
  puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
}

static int cmd_simple(const global_opts *g, const char *type, int argc, char **argv) {
  bool json = argc > 1 && strcmp(argv[1], "--json") == 0;
  if (argc > (json ? 2 : 1)) {
    usage(stderr);
    return 1;
  }
  json_object *req = json_object_new_object(), *resp = NULL;
  json_object_object_add(req, "id", json_object_new_string(type));
  json_object_object_add(req, "type", json_object_new_string(type));
  if (g->profile && strcmp(type, "toolchains") == 0) json_object_object_add(req, "profile", json_object_new_string(g->profile));
  int rc = roundtrip(g, req, &resp);
  json_object_put(req);
  if (rc == 0) {
    if (strcmp(type, "toolchains") == 0 && !json) {
      json_object *list = json_object_object_get(resp, "toolchains");
      printf("%-14s %-10s %-9s %-12s %-30s %s\n", "name", "language", "version", "available", "language level",
             "path / how to install");
      for (size_t i = 0; list && i < json_object_array_length(list); i++) {
        json_object *t = json_object_array_get_idx(list, i), *v;
        bool avail = json_object_object_get_ex(t, "available", &v) && json_object_get_boolean(v);
        const char *path = json_object_get_string(json_object_object_get(t, avail ? "path" : "install"));
        const char *ver = json_object_get_string(json_object_object_get(t, "version"));
        const char *level = json_object_get_string(json_object_object_get(t, "language_level"));
        printf("%-14s %-10s %-9s %-12s %-30s %s\n", json_object_get_string(json_object_object_get(t, "name")),
               json_object_get_string(json_object_object_get(t, "language")), ver ? ver : "-", avail ? "yes" : "no",
               level ? level : "-", path ? path : "");
      }
    } else if (strcmp(type, "ping") == 0 && !json) {
      json_object *v = NULL;
      json_object_object_get_ex(resp, "version", &v);
      printf("pong (surgeboxd %s)\n", v ? json_object_get_string(v) : "?");
    } else {
      print_json(resp);
    }
  }
  json_object_put(resp);
  return rc;
}

static int add_limit(json_object *limits, const char *key, const char *val, bool integer) {
  char *end;
  errno = 0;
  if (integer) {
    long long v = strtoll(val, &end, 10);
    if (errno || *end || end == val || v <= 0) return -1;
    json_object_object_add(limits, key, json_object_new_int64(v));
  } else {
    double v = strtod(val, &end);
    if (errno || *end || end == val || !(v > 0)) return -1;
    json_object_object_add(limits, key, json_object_new_double(v));
  }
  return 0;
}

static void print_exec_result(json_object *resp) {
  json_object *steps = NULL, *status = NULL;
  json_object_object_get_ex(resp, "steps", &steps);
  json_object_object_get_ex(resp, "status", &status);
  size_t n = steps ? json_object_array_length(steps) : 0;
  json_object *last = n ? json_object_array_get_idx(steps, n - 1) : NULL;
  json_object *out = NULL, *err = NULL, *code = NULL, *sig = NULL;
  if (last) {
    json_object_object_get_ex(last, "stdout", &out);
    json_object_object_get_ex(last, "stderr", &err);
    json_object_object_get_ex(last, "exit_code", &code);
    json_object_object_get_ex(last, "signal", &sig);
  }
  if (out) fputs(json_object_get_string(out), stdout);
  fflush(stdout);
  if (err) fputs(json_object_get_string(err), stderr);
  const char *st = status ? json_object_get_string(status) : "?";
  json_object *error = NULL;
  json_object_object_get_ex(resp, "error", &error);
  if (strcmp(st, "ok") != 0) {
    fprintf(stderr, "surgebox: %s", st);
    if (error) fprintf(stderr, ": %s", json_object_get_string(error));
    if (code && json_object_get_int(code) != 0) fprintf(stderr, " (exit %d)", json_object_get_int(code));
    if (sig) fprintf(stderr, " (%s)", json_object_get_string(sig));
    fputc('\n', stderr);
  }
}

static int cmd_exec(const global_opts *g, int argc, char **argv) {
  enum { O_STDIN = 256, O_TIME, O_CPU, O_MEM, O_PIDS, O_OUT, O_MERGE, O_ENV, O_JSON, O_TC, O_STD, O_OPT, O_ARG };
  static const struct option opts[] = {
      {"stdin", required_argument, 0, O_STDIN},       {"time-limit", required_argument, 0, O_TIME},
      {"cpu-limit", required_argument, 0, O_CPU},     {"memory-limit", required_argument, 0, O_MEM},
      {"pids-limit", required_argument, 0, O_PIDS},   {"output-limit", required_argument, 0, O_OUT},
      {"merge-output", no_argument, 0, O_MERGE},      {"env", required_argument, 0, O_ENV},
      {"json", no_argument, 0, O_JSON},               {"toolchain", required_argument, 0, O_TC},
      {"std", required_argument, 0, O_STD},           {"opt", required_argument, 0, O_OPT},
      {"arg", required_argument, 0, O_ARG},           {0, 0, 0, 0}};
  json_object *req = json_object_new_object(), *step = json_object_new_object(), *limits = json_object_new_object();
  json_object *env = NULL, *options = json_object_new_object(), *args = json_object_new_array();
  const char *toolchain = NULL, *stdin_path = NULL;
  bool json = false, merge = false, bad = false;
  int o;
  optind = 1;
  while (!bad && (o = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
    switch (o) {
    case O_STDIN: stdin_path = optarg; break;
    case O_TIME: bad = add_limit(limits, "time_s", optarg, false) < 0; break;
    case O_CPU: bad = add_limit(limits, "cpu_time_s", optarg, false) < 0; break;
    case O_MEM: bad = add_limit(limits, "memory_mib", optarg, true) < 0; break;
    case O_PIDS: bad = add_limit(limits, "pids", optarg, true) < 0; break;
    case O_OUT: bad = add_limit(limits, "output_bytes", optarg, true) < 0; break;
    case O_MERGE: merge = true; break;
    case O_ENV: {
      char *eq = strchr(optarg, '=');
      if (!eq) {
        bad = true;
        break;
      }
      if (!env) env = json_object_new_object();
      *eq = '\0';
      json_object_object_add(env, optarg, json_object_new_string(eq + 1));
      *eq = '=';
      break;
    }
    case O_JSON: json = true; break;
    case O_TC: toolchain = optarg; break;
    case O_STD: json_object_object_add(options, "std", json_object_new_string(optarg)); break;
    case O_OPT: json_object_object_add(options, "opt", json_object_new_string(optarg)); break;
    case O_ARG: json_object_array_add(args, json_object_new_string(optarg)); break;
    default: bad = true;
    }
  }
  /* FILE... up to "--", then the program (raw form). */
  json_object *files = json_object_new_array(), *prog = json_object_new_array();
  /* getopt consumes a "--" that directly follows the options */
  bool after_dashes = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
  for (int i = optind; !bad && i < argc; i++) {
    if (!after_dashes && strcmp(argv[i], "--") == 0) {
      after_dashes = true;
      continue;
    }
    if (after_dashes) {
      json_object_array_add(prog, json_object_new_string(argv[i]));
      continue;
    }
    size_t len;
    mode_t mode;
    unsigned char *data = read_file(argv[i], &len, &mode);
    if (!data) {
      fprintf(stderr, "surgebox: cannot read %s: %s\n", argv[i], strerror(errno));
      bad = true;
      break;
    }
    json_object *f = json_object_new_object();
    const char *base = strrchr(argv[i], '/');
    json_object_object_add(f, "path", json_object_new_string(base ? base + 1 : argv[i]));
    content_field(f, "content", data, len);
    json_object_object_add(f, "mode", json_object_new_int((int)mode));
    json_object_array_add(files, f);
    free(data);
  }
  if (!bad && !toolchain && json_object_array_length(prog) == 0) {
    fprintf(stderr, "surgebox: exec needs -- PROGRAM [ARGS...] or --toolchain NAME\n");
    bad = true;
  }
  int rc = 1;
  json_object *resp = NULL;
  if (!bad) {
    json_object_object_add(req, "id", json_object_new_string("exec"));
    json_object_object_add(req, "type", json_object_new_string("exec"));
    json_object_object_add(req, "files", json_object_get(files));
    if (g->profile) json_object_object_add(req, "profile", json_object_new_string(g->profile));
    unsigned char *in = NULL;
    size_t in_len = 0;
    if (stdin_path && !(in = read_file(stdin_path, &in_len, NULL))) {
      fprintf(stderr, "surgebox: cannot read %s: %s\n", stdin_path, strerror(errno));
      goto out;
    }
    json_object *holder = toolchain ? req : step;
    if (in) content_field(holder, "stdin", in, in_len);
    free(in);
    if (toolchain) {
      json_object_object_add(req, "toolchain", json_object_new_string(toolchain));
      json_object_object_add(req, "options", json_object_get(options));
      json_object_object_add(req, "args", json_object_get(args));
      json_object_object_add(req, "limits", json_object_get(limits));
    } else {
      json_object_object_add(step, "name", json_object_new_string("run"));
      json_object_object_add(step, "argv", json_object_get(prog));
      if (env) json_object_object_add(step, "env", json_object_get(env));
      if (merge) json_object_object_add(step, "merge_output", json_object_new_boolean(true));
      json_object_object_add(step, "limits", json_object_get(limits));
      json_object *steps = json_object_new_array();
      json_object_array_add(steps, json_object_get(step));
      json_object_object_add(req, "steps", steps);
    }
    rc = roundtrip(g, req, &resp);
    if (rc == 0) {
      if (json) print_json(resp);
      else print_exec_result(resp);
      json_object *st = NULL;
      json_object_object_get_ex(resp, "status", &st);
      /* the job did not run: the machine, not the program, is at fault */
      const char *s = st ? json_object_get_string(st) : SBP_STATUS_INTERNAL_ERROR;
      if (!strcmp(s, SBP_STATUS_INTERNAL_ERROR) || !strcmp(s, SBP_STATUS_TOOLCHAIN_MISSING) ||
          !strcmp(s, SBP_STATUS_UNSUPPORTED))
        rc = 2;
    }
  } else {
    usage(stderr);
  }
out:
  json_object_put(resp);
  json_object_put(req);
  json_object_put(step);
  json_object_put(limits);
  json_object_put(options);
  json_object_put(args);
  json_object_put(files);
  json_object_put(prog);
  if (env) json_object_put(env);
  return rc;
}

int main(int argc, char **argv) {
  global_opts g = {NULL, true, NULL};
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) g.socket = argv[++i];
    else if (strcmp(argv[i], "--no-autostart") == 0) g.autostart = false;
    else if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc) g.profile = argv[++i];
    else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 1;
    }
  }
  if (i >= argc) {
    usage(stderr);
    return 1;
  }
  const char *cmd = argv[i];
  int sub_argc = argc - i;
  char **sub_argv = argv + i;
  if (strcmp(cmd, "exec") == 0) return cmd_exec(&g, sub_argc, sub_argv);
  if (strcmp(cmd, "eval") == 0) {
    for (int k = 1; k < sub_argc; k++)
      if (strcmp(sub_argv[k], "--execute") == 0) return sbr_eval_execute_main(sub_argc, sub_argv);
    return sbe_eval_main(sub_argc, sub_argv);
  }
  if (strcmp(cmd, "regen") == 0) return sbr_regen_main(sub_argc, sub_argv);
  if (strcmp(cmd, "batch") == 0) return sbr_batch_main(sub_argc, sub_argv, g.socket, g.autostart, g.profile);
  if (strcmp(cmd, "verify") == 0) return sbr_verify_main(sub_argc, sub_argv);
  if (strcmp(cmd, "profile") == 0) return sbf_profile_main(sub_argc, sub_argv);
  if (strcmp(cmd, "bins") == 0) return sbr_bins_main(sub_argc, sub_argv);
  if (strcmp(cmd, "dr-matrix") == 0) return sbr_drmatrix_main(sub_argc, sub_argv);
  if (strcmp(cmd, "metrics") == 0) return sbc_metrics_main(sub_argc, sub_argv, g.socket);
  if (strcmp(cmd, "status") == 0 || strcmp(cmd, "toolchains") == 0 || strcmp(cmd, "ping") == 0)
    return cmd_simple(&g, cmd, sub_argc, sub_argv);
  fprintf(stderr, "surgebox: unknown command %s\n", cmd);
  usage(stderr);
  return 1;
}
