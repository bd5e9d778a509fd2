/* surgebox profile create|list|show|delete|verify */
#include "cliopt.h"
#include "clock.h"
#include "fs_tree.h"
#include "nearest.h"
#include "profile.h"
#include "profile_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What the options set. */
typedef struct {
  const char *dir, *mirror, *defs;
  bool force, quiet, json, quick;
} profile_args;

static int refuse_global(const char *opt) {
  fprintf(stderr,
          "surgebox profile: %s does not apply to 'profile' (it works on local root file systems and talks to no "
          "daemon); drop it\n",
          opt);
  return 1;
}
/* A global option: refused with the reason (the parse stops). */
static int refuse_row(const sbo_parser *p, const sbo_opt *o, const char *val, void *opts) {
  (void)p, (void)val, (void)opts;
  char opt[32];
  snprintf(opt, sizeof opt, "--%s", o->name);
  return refuse_global(opt);
}

#define AT(F) SBO_AT(profile_args, F)
static const sbo_opt profile_opts[] = {
    {"dir", 0, "PATH", "where profiles live (default below)", SBO_STR, AT(dir)},
    {"mirror", 0, "URL", "create: the package mirror (default: the machine's apt configuration)", SBO_STR, AT(mirror)},
    {"defs", 0, "DIR", "create: where definitions (NAME.json) are read (default below)", SBO_STR, AT(defs)},
    {"force", 0, NULL, "create: replace an existing profile", SBO_FLAG, AT(force)},
    {"quiet", 0, NULL, "create: no progress", SBO_FLAG, AT(quiet)},
    {"json", 0, NULL, "list: as JSON", SBO_FLAG, AT(json)},
    {"quick", 0, NULL, "verify: sizes and modes only, not every file's hash", SBO_FLAG, AT(quick)},
    /* the global options, hidden: refused with the reason (profile talks to no daemon) */
    {"socket", 0, "PATH", NULL, SBO_CALL, .call = refuse_row},
    {"no-autostart", 0, NULL, NULL, SBO_CALL, .call = refuse_row},
    {"profile", 0, "NAME", NULL, SBO_CALL, .call = refuse_row},
    {NULL, 0, NULL, NULL}};

/* "--socket" when arg is one of the global options (--socket, --socket=P, ...), else NULL. */
static const char *global_option(const char *arg) {
  static const char *const names[] = {"--socket", "--no-autostart", "--profile"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    size_t n = strlen(names[i]);
    if (!strncmp(arg, names[i], n) && (arg[n] == '\0' || arg[n] == '=')) return names[i];
  }
  return NULL;
}

static char profile_footer[1024];
static const sbo_cmd profile_cmd = {
    "surgebox profile",
    "create NAME [--dir PATH] [--mirror URL] [--defs DIR] [--force] [--quiet]\n"
    "list [--dir PATH] [--json]\nshow NAME [--dir PATH]\ndelete NAME [--dir PATH]\n"
    "verify NAME [--dir PATH] [--quick]\nrun NAME [--dir PATH] -- COMMAND [ARGS...]",
    "Profiles are root file systems the sandbox uses instead of the host's /usr, /lib*, /bin, /sbin and /etc.",
    profile_opts, NULL, profile_footer, false, NULL};

static void fill_footer(void) {
  snprintf(profile_footer, sizeof profile_footer,
           "--dir defaults to %s; definitions (NAME.json) are read from %s.\n"
           "run: a trusted command (version checks, debugging) in the profile with chroot, its rootfs read-only,\n"
           "as root and NOT sandboxed; untrusted code goes through surgebox-run --root or the daemon.\n",
           sbf_default_dir(), sbf_defs_dir());
}

static void usage(FILE *f) {
  fill_footer();
  sbo_usage(&profile_cmd, f);
}

static int cmd_list(const char *dir, bool json) {
  json_object *arr = json_object_new_array();
  json_object *host = json_object_new_object();
  json_object_object_add(host, "name", json_object_new_string("host"));
  json_object_object_add(host, "root", NULL);
  json_object_object_add(host, "status", json_object_new_string("ok"));
  json_object_array_add(arr, host);
  if (!json) printf("%-20s %-10s %-21s %10s %8s  %s\n", "NAME", "STATUS", "CREATED", "SIZE", "FILES", "ROOT");
  if (!json) printf("%-20s %-10s %-21s %10s %8s  %s\n", "host", "ok", "-", "-", "-", "/");
  struct dirent **names = NULL;
  int n = scandir(dir, &names, NULL, alphasort);
  for (int i = 0; i < n; i++) {
    const char *name = names[i]->d_name;
    char path[4400];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (name[0] == '.' || !sbf_name_ok(name) || stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
      free(names[i]);
      continue;
    }
    sbf_profile p;
    char err[SBF_ERR_MAX];
    int rc = sbf_profile_open_mode(dir, name, SBF_VERIFY_QUICK, &p, err, sizeof err);
    const char *status = rc == 0 ? "ok" : rc == -ENOENT ? "incomplete" : rc == -EBADMSG ? "modified" : "invalid";
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(name));
    json_object_object_add(o, "status", json_object_new_string(status));
    if (rc == 0) {
      char size[32];
      sbf_human_size(p.size_bytes, size);
      json_object_object_add(o, "root", json_object_new_string(p.root));
      json_object_object_add(o, "created", json_object_new_string(p.created));
      json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)p.size_bytes));
      json_object_object_add(o, "files", json_object_new_int64((int64_t)p.files));
      json_object_object_add(o, "content_hash", json_object_new_string(p.content_hash));
      if (!json)
        printf("%-20s %-10s %-21s %10s %8llu  %s\n", name, status, p.created, size, (unsigned long long)p.files,
               p.root);
      sbf_profile_close(&p);
    } else {
      json_object_object_add(o, "error", json_object_new_string(err));
      if (!json) printf("%-20s %-10s %s\n", name, status, err);
    }
    json_object_array_add(arr, o);
    free(names[i]);
  }
  free(names);
  if (json) printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(arr);
  return 0;
}

static int cmd_show(const char *dir, const char *name) {
  sbf_profile p;
  char err[SBF_ERR_MAX], tdir[4400];
  int rc = sbf_profile_open_mode(dir, name, SBF_VERIFY_NONE, &p, err, sizeof err);
  if (rc) {
    fprintf(stderr, "surgebox profile show: %s\n", err);
    return 2;
  }
  sbf_profile_toolchains_dir(&p, tdir, sizeof tdir);
  json_object *o;
  if (p.is_host) {
    o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string("host"));
    json_object_object_add(o, "root", NULL);
  } else {
    o = json_object_get(p.manifest);
    json_object_object_add(o, "path", json_object_new_string(p.path));
    json_object_object_add(o, "root", json_object_new_string(p.root));
    char verr[SBF_ERR_MAX];
    int v = sbf_profile_verify(&p, SBF_VERIFY_QUICK, verr, sizeof verr);
    json_object_object_add(o, "quick_verify", json_object_new_string(v == 0 ? "ok" : verr));
  }
  json_object_object_add(o, "toolchains_dir", json_object_new_string(tdir));
  printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                        JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(o);
  sbf_profile_close(&p);
  return 0;
}

static int cmd_delete(const char *dir, const char *name) {
  if (strcmp(name, "host") == 0 || !sbf_name_ok(name)) {
    fprintf(stderr, "surgebox profile delete: %s cannot be deleted\n", name);
    return 1;
  }
  char path[4400];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (lstat(path, &st) < 0) {
    fprintf(stderr, "surgebox profile delete: no profile %s in %s\n", name, dir);
    return 2;
  }
  int lock = sbf_lock(dir, name);
  if (lock < 0) {
    fprintf(stderr, "surgebox profile delete: cannot lock: %s\n", strerror(-lock));
    return 2;
  }
  double t0 = sbu_now_s();
  int um = sbf_unmount_under(path);
  int rc = sb_rm_rf(path);
  char lockpath[4400];
  snprintf(lockpath, sizeof lockpath, "%s/.%s.lock", dir, name);
  if (rc == 0) unlink(lockpath);
  close(lock);
  if (rc < 0) {
    fprintf(stderr, "surgebox profile delete: cannot remove %s: %s\n", path, strerror(-rc));
    return 2;
  }
  printf("deleted profile %s (%s) in %.1f s%s\n", name, path, sbu_now_s() - t0,
         um > 0 ? " (stale mounts under it were unmounted)" : "");
  return 0;
}

static int cmd_verify(const char *dir, const char *name, bool quick) {
  sbf_profile p;
  char err[SBF_ERR_MAX];
  int rc = sbf_profile_open_mode(dir, name, SBF_VERIFY_NONE, &p, err, sizeof err);
  if (rc) {
    fprintf(stderr, "surgebox profile verify: %s\n", err);
    return 2;
  }
  double t0 = sbu_now_s();
  rc = sbf_profile_verify(&p, quick ? SBF_VERIFY_QUICK : SBF_VERIFY_FULL, err, sizeof err);
  double dt = sbu_now_s() - t0;
  if (rc) fprintf(stderr, "surgebox profile verify: %s\n", err);
  else if (p.is_host) printf("profile host: the host's own file system, nothing to verify\n");
  else {
    char size[32];
    sbf_human_size(p.size_bytes, size);
    printf("profile %s verifies (%s, %.2f s): %llu files, %s, %s\n", name, quick ? "quick" : "full content", dt,
           (unsigned long long)p.files, size, quick ? p.quick_hash : p.content_hash);
  }
  sbf_profile_close(&p);
  return rc ? 2 : 0;
}

static int cmd_run(const char *dir, const char *name, char **cmd) {
  sbf_profile p;
  char err[SBF_ERR_MAX];
  int rc = sbf_profile_open_mode(dir, name, SBF_VERIFY_NONE, &p, err, sizeof err);
  if (rc || p.is_host) {
    fprintf(stderr, "surgebox profile run: %s\n", rc ? err : "the host profile needs no chroot: run the command");
    sbf_profile_close(&p);
    return 2;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (sbf_enter_root(p.root, err, sizeof err) < 0) {
      fprintf(stderr, "surgebox profile run: %s\n", err);
      _exit(126);
    }
    static char *const envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=/tmp", "TZ=UTC", NULL};
    setenv("PATH", envp[0] + 5, 1); /* execvpe searches the caller's PATH */
    execvpe(cmd[0], cmd, envp);
    fprintf(stderr, "surgebox profile run: %s: %s\n", cmd[0], strerror(errno));
    _exit(127);
  }
  sbf_profile_close(&p);
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) < 0) return 2;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int sbf_profile_main(int argc, char **argv) {
  /* argv[0] is "profile", argv[1] the subcommand */
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    if (argc < 2) fprintf(stderr, "surgebox profile: no subcommand given (see surgebox profile --help)\n");
    else usage(stdout);
    return argc < 2 ? 1 : 0;
  }
  if (global_option(argv[1])) return refuse_global(global_option(argv[1]));
  const char *cmd = argv[1];
  profile_args o = {0};
  /* the subcommand plays argv[0] */
  sbo_parser p;
  fill_footer();
  int rc = sbo_parse(&p, &profile_cmd, argc - 1, argv + 1, &o, NULL, NULL);
  sbo_done(&p);
  if (rc) return rc < 0 ? 0 : rc;
  const char *dir = o.dir, *defs = o.defs;
  /* run NAME -- COMMAND...: the command after "--" (or the positionals after NAME) */
  int rest = p.n_pos;
  char **args = p.pos;
  if (!strcmp(cmd, "run") && p.dashdash) {
    if (p.n_pos != 1 || p.n_rest < 1) return sbo_usage_error(&p, "run NAME -- COMMAND [ARGS...]");
    return cmd_run(dir ? dir : sbf_default_dir(), p.pos[0], p.rest);
  }
  if (!dir) dir = sbf_default_dir();
  if (!defs) defs = sbf_defs_dir();
  if (strcmp(cmd, "run") == 0) {
    if (rest < 2) return sbo_usage_error(&p, "run NAME -- COMMAND [ARGS...]");
    return cmd_run(dir, args[0], args + 1);
  }
  if (strcmp(cmd, "list") == 0) {
    if (rest != 0) return sbo_usage_error(&p, "list takes no NAME");
    return cmd_list(dir, o.json);
  }
  if (strcmp(cmd, "create") && strcmp(cmd, "show") && strcmp(cmd, "delete") && strcmp(cmd, "verify")) {
    static const char *const subs[] = {"create", "list", "show", "verify", "delete", "run"};
    const char *near = sbu_nearest(cmd, subs, sizeof subs / sizeof *subs);
    if (near) return sbo_usage_error(&p, "unknown subcommand '%s': did you mean %s?", cmd, near);
    return sbo_usage_error(&p, "unknown subcommand '%s' (create, list, show, verify, delete, run)", cmd);
  }
  if (rest != 1) return sbo_usage_error(&p, "%s takes one NAME", cmd);
  const char *name = args[0];
  if (strcmp(cmd, "create") == 0) {
    sbf_create_opts co = {.dir = dir, .defs = defs, .mirror = o.mirror, .force = o.force, .quiet = o.quiet};
    char err[SBF_ERR_MAX * 2];
    rc = sbf_profile_create(name, &co, err, sizeof err);
    if (rc) fprintf(stderr, "surgebox profile create: %s\n", err);
    return rc ? 2 : 0;
  }
  if (strcmp(cmd, "show") == 0) return cmd_show(dir, name);
  if (strcmp(cmd, "delete") == 0) return cmd_delete(dir, name);
  if (strcmp(cmd, "verify") == 0) return cmd_verify(dir, name, o.quick);
  return sbo_usage_error(&p, "unknown subcommand '%s'", cmd);
}
