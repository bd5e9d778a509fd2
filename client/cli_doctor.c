/* surgebox doctor: can a job run here, and what would each mechanism do?
 * One line per check for a person (--json: the same as a document); a line
 * that is not ok names the fix. Exit 0 only when a trivial job ran.
 *
 * Which daemon: the one answering at the socket named by --socket or
 * $SURGEBOX_SOCKET (never one started beside it: a dead named socket is a
 * failing line), else the one at the default socket, else (unless
 * --no-autostart) a private daemon started for this check and stopped after
 * it, so that its self-proof at start (daemon/prove.c) runs here and now.
 * The machine's own checks (user namespaces, cgroups, openat2, profiles) need
 * no daemon. */
#include "cleanup.h"
#include "cli.h"
#include "client.h"
#include "runtime_paths.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const sbo_opt doctor_opts[] = {
    {"json", 0, NULL, "print the checks as JSON on stdout", SBO_FLAG, .at = 0, .size = sizeof(bool)}, /* a bool alone */
    {NULL, 0, NULL, NULL}};
static const sbo_cmd doctor_cmd = {
    .name = "surgebox doctor",
    .synopsis = "[--json]",
    .about = "Check whether a job can run here: user namespaces, cgroups, openat2, the daemon's self-proof (pool,\n"
    "cgroup backend, uid range), a trivial job, toolchains and profiles. One line each, with the fix; exit 0\n"
    "only when a job ran. Without --socket or $SURGEBOX_SOCKET and no daemon at the default socket, a private\n"
    "daemon is started for the check; with --profile, the job and the toolchains are that profile's.",
    .opts = doctor_opts,
    .groups = sbc_daemon_groups};

typedef struct {
  json_object *checks;
  bool json;
} report;

typedef enum { OK, WARN, FAIL } level;

static void say(report *r, const char *check, level lv, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void say(report *r, const char *check, level lv, const char *fix, const char *fmt, ...) {
  static const char *const names[] = {"ok", "warn", "fail"};
  char detail[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  json_object *c = json_object_new_object();
  json_object_object_add(c, "check", json_object_new_string(check));
  json_object_object_add(c, "result", json_object_new_string(names[lv]));
  json_object_object_add(c, "detail", json_object_new_string(detail));
  json_object_object_add(c, "fix", lv != OK && fix ? json_object_new_string(fix) : NULL);
  json_object_array_add(r->checks, c);
  if (r->json) return;
  printf("%-4s %-16s %s", lv == OK ? "ok" : lv == WARN ? "warn" : "FAIL", check, detail);
  if (lv != OK && fix) printf(" -- fix: %s", fix);
  printf("\n");
}

static void check_userns(report *r) {
  pid_t pid = fork();
  if (pid == 0) _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : errno);
  int st = 0;
  int e = pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : EAGAIN;
  bool root = geteuid() == 0;
  if (e == 0) {
    say(r, "user namespaces", OK, NULL, "available%s", root ? "" : " (an unprivileged daemon runs its jobs in them)");
    return;
  }
  say(r, "user namespaces", root ? WARN : FAIL,
      "sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces > 0 (outside a chroot: the kernel "
      "refuses them to a chrooted process), or run surgeboxd as root",
      "unshare(CLONE_NEWUSER): %s%s", strerror(e), root ? " (not needed: running as root)" : "");
}

/* cgroup v1 controllers named in a cgroup mount's super options. */
static void v1_controllers(const char *opts, char *out, size_t cap) {
  static const char *const known[] = {"cpu", "cpuacct", "memory", "pids", "cpuset", "blkio", "io", "devices",
                                      "freezer", "hugetlb", "perf_event", "net_cls", "net_prio", "rdma", "misc", NULL};
  char buf[512];
  snprintf(buf, sizeof buf, "%s", opts);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
    for (const char *const *k = known; *k; k++)
      if (!strcmp(t, *k) && !strstr(out, t)) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%s", n ? " " : "", t);
      }
}

static void check_cgroups(report *r) {
  SBU_AUTOFCLOSE FILE *f = fopen("/proc/self/mountinfo", "re");
  char line[4096], v1[512] = "", v2[512] = "", v2_path[1024] = "";
  bool has_v1 = false;
  while (f && fgets(line, sizeof line, f)) {
    char *sep = strstr(line, " - ");
    if (!sep) continue;
    char mnt[1024] = "", fstype[64] = "", src[256] = "", opts[1024] = "";
    if (sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1 || sscanf(sep + 3, "%63s %255s %1023s", fstype, src, opts) < 2)
      continue;
    if (!strcmp(fstype, "cgroup")) {
      has_v1 = true;
      v1_controllers(opts, v1, sizeof v1);
    } else if (!strcmp(fstype, "cgroup2") && !v2_path[0]) {
      snprintf(v2_path, sizeof v2_path, "%s/cgroup.controllers", mnt);
    }
  }
  if (v2_path[0]) {
    SBU_AUTOFCLOSE FILE *c = fopen(v2_path, "re");
    if (c && fgets(v2, sizeof v2, c)) v2[strcspn(v2, "\n")] = '\0';
  }
  const char *kind = has_v1 && v2_path[0] ? "hybrid" : has_v1 ? "v1" : v2_path[0] ? "v2" : "none";
  bool mem = strstr(v1, "memory") || strstr(v2, "memory"), pids = strstr(v1, "pids") || strstr(v2, "pids");
  char detail[1400];
  snprintf(detail, sizeof detail, "%s", kind);
  if (has_v1) snprintf(detail + strlen(detail), sizeof detail - strlen(detail), "; v1 controllers: %s", v1[0] ? v1 : "none");
  if (v2_path[0])
    snprintf(detail + strlen(detail), sizeof detail - strlen(detail), "; v2 controllers: %s", v2[0] ? v2 : "none");
  say(r, "cgroups", mem && pids ? OK : WARN,
      "mount cgroup2 (or the v1 memory and pids hierarchies) and run the daemon where it may create cgroups "
      "(root, or a delegated subtree); without them memory and processes are bounded by rlimits and a poll",
      "%s", detail);
}

static void check_openat2(report *r) {
  struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS};
  SBU_AUTOCLOSE int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  SBU_AUTOCLOSE int fd = (int)syscall(SYS_openat2, root, ".", &how, sizeof how);
  if (fd >= 0) {
    say(r, "openat2", OK, NULL, "available (link-safe access beneath /app)");
    return;
  }
  say(r, "openat2", WARN, "a 5.6+ kernel, or a seccomp profile that allows openat2",
      "%s: workspaces are walked one component at a time instead (slower, as safe)", strerror(errno));
}

static void check_profiles(report *r) {
  const char *dir = sbu_profiles_dir();
  DIR *d = opendir(dir);
  char names[1024] = "";
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    char manifest[4400];
    struct stat st;
    snprintf(manifest, sizeof manifest, "%s/%s/manifest.json", dir, e->d_name);
    if (e->d_name[0] == '.' || stat(manifest, &st) < 0) continue;
    size_t len = strlen(names);
    snprintf(names + len, sizeof names - len, "%s%s", n++ ? ", " : "", e->d_name);
  }
  if (d) closedir(d);
  if (n) say(r, "profiles", OK, NULL, "%d in %s: %s", n, dir, names);
  else say(r, "profiles", OK, NULL, "none in %s (jobs run on the host's root; `surgebox profile create NAME` makes one)", dir);
}

static json_object *ask(sbc_conn *c, json_object *req) {
  json_object *resp = sbc_send(c, req) == 0 ? sbc_recv(c) : NULL;
  json_object_put(req);
  return resp;
}

static const char *field(json_object *o, const char *key) {
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : NULL;
}

/* A refused request's message ({"error": {"code", "message"}}), else NULL. */
static const char *refusal(json_object *resp) {
  json_object *e = NULL, *m = NULL;
  if (!resp || !json_object_object_get_ex(resp, "error", &e) || !e || !json_object_is_type(e, json_type_object))
    return NULL;
  return json_object_object_get_ex(e, "message", &m) && m ? json_object_get_string(m) : "(no message)";
}

/* The daemon's self-proof, as its status answers it ("on: ..." / "off: why"). */
static void check_self_proof(report *r, json_object *status) {
  json_object *sp = NULL;
  if (!json_object_object_get_ex(status, "self_proof", &sp) || !sp) {
    say(r, "self-proof", WARN, "a surgeboxd of this version", "this daemon does not report one");
    return;
  }
  const char *pool = field(sp, "pool"), *cg = field(sp, "cgroup"), *uids = field(sp, "uid_range");
  /* Rated by what this daemon can have: an unprivileged one (user-namespace
   * mode) has no pool and one uid by design, so those are no problem there;
   * a cgroup backend of "none" is one everywhere (limits by rlimits only). */
  bool userns = (pool && strstr(pool, "user-namespace mode")) || (uids && strstr(uids, "user-namespace mode"));
  bool pool_on = pool && !strncmp(pool, "on", 2), pool_asked = pool && strstr(pool, "--pool 0");
  say(r, "pool", pool_on || ((userns || pool_asked) && !strstr(pool, "failed")) ? OK : WARN,
      "as root, outside user-namespace mode; `surgeboxd --pool 8` (the default); if the reason names a failure, "
      "report it: every job pays for a fresh root meanwhile",
      "%s%s", pool ? pool : "?", !pool_on && userns ? " (as expected unprivileged: run surgeboxd as root for the pool)" : "");
  bool cg_none = !cg || strncmp(cg, "on", 2) || !strcmp(cg, "on: none");
  say(r, "cgroup backend", cg_none ? WARN : OK,
      userns ? "a delegated cgroup subtree (e.g. systemd-run --user -p Delegate=yes surgeboxd), or surgeboxd as root; "
               "meanwhile memory and processes are bounded by rlimits and a poll"
             : "see the cgroups line; meanwhile memory and processes are bounded by rlimits and a poll",
      "%s", cg ? cg : "?");
  say(r, "uid range", (uids && !strncmp(uids, "on", 2)) || userns ? OK : WARN,
      "run surgeboxd as root for one uid per concurrent job (--uid-range FIRST-LAST)", "%s%s", uids ? uids : "?",
      userns ? " (as expected unprivileged)" : "");
}

/* A trivial job through the daemon: the proof that a job runs here. */
static bool check_job(report *r, sbc_conn *c, const char *profile) {
  json_object *req = sbc_request_new("exec"), *step = json_object_new_object(), *argv = json_object_new_array();
  json_object *steps = json_object_new_array();
  json_object_array_add(argv, json_object_new_string("sh"));
  json_object_array_add(argv, json_object_new_string("-c"));
  json_object_array_add(argv, json_object_new_string("echo doctor"));
  json_object_object_add(step, "name", json_object_new_string("run"));
  json_object_object_add(step, "argv", argv);
  json_object_array_add(steps, step);
  json_object_object_add(req, "steps", steps);
  if (profile) json_object_object_add(req, "profile", json_object_new_string(profile));
  json_object *resp = ask(c, req), *st = NULL, *enf = NULL;
  json_object *steps_out = resp ? json_object_object_get(resp, "steps") : NULL;
  if (steps_out && json_object_array_length(steps_out) > 0) st = json_object_array_get_idx(steps_out, 0);
  const char *status = field(resp, "status"), *out = field(st, "stdout"), *err = field(st, "error");
  const char *refused = refusal(resp);
  bool ran = status && !strcmp(status, "ok") && out && !strcmp(out, "doctor\n");
  if (st) json_object_object_get_ex(st, "enforced", &enf);
  if (ran) say(r, "job", OK, NULL, "a trivial job ran (pool %s)", field(enf, "pool") ? field(enf, "pool") : "?");
  else if (refused)
    say(r, "job", FAIL, "as the daemon's message says", "the daemon refused a trivial job: %s", refused);
  else
    say(r, "job", FAIL, "the lines above say which mechanism failed; the daemon's log says more",
        "a trivial job ended %s%s%s", status ? status : "without an answer", err ? ": " : "", err ? err : "");
  json_object_put(resp);
  return ran;
}

static void check_toolchains(report *r, sbc_conn *c, const char *profile) {
  json_object *req = sbc_request_new("toolchains"), *list = NULL;
  if (profile) json_object_object_add(req, "profile", json_object_new_string(profile));
  json_object *resp = ask(c, req);
  char names[1024] = "";
  int n = 0;
  if (resp && json_object_object_get_ex(resp, "toolchains", &list) && list)
    for (size_t i = 0; i < json_object_array_length(list); i++) {
      json_object *t = json_object_array_get_idx(list, i), *av = NULL;
      if (!json_object_object_get_ex(t, "available", &av) || !json_object_get_boolean(av)) continue;
      size_t len = strlen(names);
      if (n++ < 12) snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", field(t, "name"));
    }
  const char *refused = refusal(resp);
  if (n) say(r, "toolchains", OK, NULL, "%d found: %s%s", n, names, n > 12 ? ", ..." : "");
  else if (refused) say(r, "toolchains", FAIL, "as the daemon's message says", "the daemon refused: %s", refused);
  else say(r, "toolchains", FAIL, "install a compiler or interpreter (`surgebox toolchains` says which package)",
           "none found by the daemon");
  json_object_put(resp);
}

static int run_doctor(const sbc_ctx *g, bool json) {
  report r = {json_object_new_array(), json};
  check_userns(&r);
  check_cgroups(&r);
  check_openat2(&r);
  bool ran = false;
  sbc_conn c;
  char err[1024] = "";
  /* extra args: a daemon of our own that stops with us (not the lingering one) */
  static const char *const own[] = {"--jobs", "1", NULL};
  if (sbc_open(&c, g->socket, g->autostart && !g->socket, own, err, sizeof err) < 0) {
    if (g->socket)
      say(&r, "daemon", FAIL, "start one with surgeboxd --socket PATH, or drop --socket",
          "nothing answers at %s, the socket named by --socket or $SURGEBOX_SOCKET (no daemon is started beside it)",
          g->socket);
    else
      say(&r, "daemon", FAIL, "start surgeboxd, or drop --no-autostart; a daemon that refused to start said why above",
          "%s", err);
  } else {
    json_object *status = ask(&c, sbc_request_new("status"));
    say(&r, "daemon", status ? OK : FAIL, "see the daemon's log", "surgeboxd %s at %s%s",
        field(status, "version") ? field(status, "version") : "(no answer)", c.socket_path,
        c.daemon_pid > 0 ? " (a private one, started for this check)" : "");
    if (status) check_self_proof(&r, status);
    json_object_put(status);
    ran = status && check_job(&r, &c, g->profile);
    if (status) check_toolchains(&r, &c, g->profile);
    sbc_close(&c);
  }
  check_profiles(&r);
  if (json) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "checks", r.checks);
    json_object_object_add(o, "job_can_run", json_object_new_boolean(ran));
    sbc_print_json(o);
    json_object_put(o);
  } else {
    printf("%s\n", ran ? "a job can run here" : "no job can run here: see the FAIL lines");
    json_object_put(r.checks);
  }
  return ran ? 0 : SBO_EXIT_FAILURE;
}

int sbc_doctor_main(const sbc_ctx *g0, int argc, char **argv) {
  sbc_ctx g = *g0;
  sbo_parser p;
  bool json = false;
  int rc = sbo_parse(&p, &doctor_cmd, argc, argv, &json, sbc_ctx_key, &g);
  json = json || p.json;
  if (rc == 0) rc = p.n_pos || p.dashdash ? sbo_usage_error(&p, "takes no arguments") : -1;
  else if (rc < 0) rc = 0; /* --help */
  sbo_done(&p);
  return rc >= 0 ? rc : run_doctor(&g, json);
}
