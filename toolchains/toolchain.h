/* Toolchains as data (prefix sbt_).
 *
 * A toolchain file (toolchains/defs/<name>.json) declares a family: where its
 * binaries are (paths and globs, one toolchain per binary found, named by a
 * template such as "{basename}" or "java-{major}"), how to read a version,
 * its options (each a flag template or a map value -> arguments, optionally
 * probed per binary, e.g. which -std= values a compiler accepts), compile and
 * run argv templates, environment, extra mounts, limit overrides and seccomp
 * additions. Adding a language is adding a file.
 *
 * Templates: "{bin}" (the binary as found), "{bin_real}" (its real path),
 * "{bin_dir}" (directory of the real path), "{main}", "{main_stem}",
 * "{version}", "{libraries}" (each declared library found at detection, after
 * its separator: ":/usr/share/java/javatuples.jar"; "" when none is
 * installed); an element that is exactly "{sources}", "{args}" or
 * "{option:NAME}" expands to zero or more arguments. */
#ifndef SURGEBOX_TOOLCHAIN_H
#define SURGEBOX_TOOLCHAIN_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "protocol.h"
#include "sandbox.h"
#include "warm_lang.h"

#include <regex.h>

#define SBT_ERR_MAX 512

typedef struct {
  char *name;
  char *flag;          /* "-std={value}", or NULL for the map form */
  char **values;       /* allowed values, NULL-terminated */
  char ***value_args;  /* map form: arguments per value (parallel to values) */
  size_t n_values;
  char *default_value;
  char **probe;        /* argv template run once per binary and value; NULL: no probe */
} sbt_option;

/* A toolchain file's "limits": {"compile": {...}, "run": {...}}, each read
 * by the protocol's reader (sbp_limits_read), caps included. */

/* The one merge rule for a step's limits: the sandbox's defaults
 * (sb_limits_default), then the toolchain file's, then the request's (either
 * may be NULL); a later layer's time_s without its cpu_time_s also sets the
 * CPU limit ("time_s: 120" means the program may compute for two minutes). */
void sbt_limits_resolve(sb_limits *out, const sbp_step_limits *toolchain, const sbp_step_limits *request);
/* One layer over limits already resolved (a test case's over its step's). */
void sbt_limits_apply(sb_limits *l, const sbp_step_limits *o);

typedef struct {
  char *path;          /* exact path, or */
  char *glob;          /* a glob(3) pattern */
  char *name;          /* name template: {basename}, {version}, {major}, {major_minor} */
} sbt_binary;

typedef struct {
  char *file;          /* where it was read from */
  char *name, *language, *description, *install, *default_source;
  char **sources;      /* extensions (".cpp") or exact names ("Makefile") */
  sbt_binary *binaries;
  size_t n_binaries;
  char **version_argv;
  char *version_regex;
  sbt_option *options;
  size_t n_options;
  char **compile;      /* NULL: no compile step */
  char **run;
  char **env;          /* "K=V" templates */
  char **mount_sources, **mount_targets;
  size_t n_mounts;
  char *cwd;
  char *rename_regex, *rename_to;
  int rename_group;
  /* no match: the last match of this regex before the first of "before"
   * (Java without a public class: the class that declares main) */
  char *rename_fallback_regex, *rename_fallback_before;
  int rename_fallback_group;
  sbp_step_limits compile_limits, run_limits;
  char **seccomp_deny;
  /* libraries put on the path where installed (Java test libraries): each
   * used only if it exists under the default binds at detection */
  char **library_paths;
  char *library_join;  /* written before each path found (":") */
  /* the language level the compiler accepts (see level.c); all optional */
  char *level_text;    /* fixed ("C# 7") */
  char **level_argv;   /* run at detection; its output matched by level_regex */
  char *level_regex;   /* on that output, else on the version */
  int level_group;
  char *level_format;  /* "Java {1}": {1} is the group matched */
  char *level_option;  /* or: the accepted values of this option ("std") */
  /* "trace": {"tracer": "python"|"gdb"}: the tracer its steps run under;
   * NULL: not traceable (trace_wrap.c) */
  char *tracer;
} sbt_def;

typedef struct {
  char *name;          /* "g++-12" */
  const sbt_def *def;
  char *bin, *bin_real, *bin_dir, *version;
  char *prefix_mount;  /* installation outside the default binds, bound read-only; or NULL */
  bool **value_ok;     /* [option][value]: the probe accepted it (all true without a probe) */
  uint64_t bin_mtime_ns, bin_size;
  char *libraries;     /* "{libraries}": the declared libraries found, or "" */
  char *level_raw;     /* what level_argv printed that level_regex matched, or NULL */
} sbt_toolchain;

typedef struct {
  sbt_def *defs;
  size_t n_defs;
  sbt_toolchain *tcs;
  size_t n_tcs;
  char cache_file[4096]; /* detection cache, "" for none */
  char root[4096];       /* "" for the host, else the profile root detected in */
  double detect_s;       /* how long the last detection took */
  size_t probes_run, probes_cached;
} sbt_registry;

/* Read every *.json in dir (sorted). */
int sbt_registry_load(sbt_registry *r, const char *dir, char err[SBT_ERR_MAX]);
/* Find the binaries, read versions, run option probes (in parallel), using
 * and refreshing the cache file (keyed by binary path, mtime and size). */
int sbt_registry_detect(sbt_registry *r, const char *cache_file, char err[SBT_ERR_MAX]);
/* The same inside another root file system (a profile): binaries, their
 * symlinks and versions as seen from inside it. Needs root (chroot). */
int sbt_registry_detect_in_root(sbt_registry *r, const char *root, const char *cache_file, char err[SBT_ERR_MAX]);
void sbt_registry_free(sbt_registry *r);
/* The directory holding the toolchain files: $SURGEBOX_TOOLCHAINS, else the
 * source tree's (compiled in), else /usr/share/surgebox/toolchains. */
const char *sbt_default_dir(void);
/* <prefix>/share/surgebox/<sub> when this binary is <prefix>/bin/... and that
 * directory exists (an installed surgebox), else NULL (datadir.c). */
const char *sbt_installed_dir(const char *sub, char *buf, size_t cap);

const sbt_toolchain *sbt_find(const sbt_registry *r, const char *name);
/* A family that would own this name if it were installed (for
 * toolchain_missing and its install hint), or NULL. */
const sbt_def *sbt_family_of(const sbt_registry *r, const char *name);
/* The installed toolchain whose name is nearest to a mistyped one
 * ("did you mean"), or NULL when none is close. */
const char *sbt_nearest_name(const sbt_registry *r, const char *name);
/* The list for the "toolchains" response / `surgebox toolchains`. */
json_object *sbt_list_json(const sbt_registry *r);

/* ---- a job expanded from a toolchain ---- */
typedef struct {
  char *name;          /* "compile" or "run" */
  char **argv;
  sb_limits limits;
  bool is_compile;
} sbt_step;

typedef struct {
  sbt_step steps[2];
  size_t n_steps;
  char **env;
  sb_mount *mounts;
  size_t n_mounts;
  char *cwd;
  char *main_path;          /* the main source's path in /app (maybe renamed) */
  size_t main_index;        /* which job file it is */
  char **seccomp_deny;      /* copied from the def */
  json_object *identity;    /* {"name","version","path","language","options","flags"} */
} sbt_plan;

typedef struct {
  const char *path;
  const unsigned char *data;
  size_t len;
} sbt_file;

typedef enum {
  SBT_OK = 0,
  SBT_BAD_OPTION,      /* unknown option or value not allowed: bad_request */
  SBT_UNSUPPORTED,     /* allowed value this binary rejects (probe): reported as such */
  SBT_NO_SOURCE,       /* no file the toolchain can use */
  SBT_NOMEM,
} sbt_plan_result;

/* options: the request's "options" object (string values) or NULL; args:
 * NULL-terminated program arguments (or NULL); run_override: the request's
 * limits, applied to the run step over the toolchain's own (or NULL). */
sbt_plan_result sbt_plan_make(const sbt_toolchain *tc, json_object *options, const sbt_file *files, size_t n_files,
                              const char *const *args, const sbp_step_limits *run_override, sbt_plan *out,
                              char err[SBT_ERR_MAX]);
void sbt_plan_free(sbt_plan *p);

/* ---- warm-capable languages: <warm dir>/<lang>/warm.json (warm_def.c) ---- */
typedef struct {
  sb_warm_lang *lang;
  regex_t *interp;     /* its "interpreter", matched on argv[0]'s last component */
} sbt_warm_def;
typedef struct {
  sbt_warm_def *defs;
  size_t n;
} sbt_warm_langs;
/* The warm files' directory: $SURGEBOX_WARM, an installed
 * <prefix>/share/surgebox/warm, else the source tree's (as runners/warm.c
 * finds the zygotes). */
const char *sbt_warm_dir(void);
/* Every <dir>/<lang>/warm.json: 0 (none: nothing is warm-capable), or -1 with
 * err naming the file and the field. */
int sbt_warm_langs_load(sbt_warm_langs *w, const char *dir, char err[SBT_ERR_MAX]);
void sbt_warm_langs_free(sbt_warm_langs *w);
/* The language whose interpreter argv0 is (by its last component), or NULL:
 * argv0 cannot start warm. */
const sb_warm_lang *sbt_warm_lang_of(const sbt_warm_langs *w, const char *argv0);

/* ---- a step under its language's tracer (trace_wrap.c) ---- */
#define SBT_TRACERS_TARGET "/opt/surgebox/tracers" /* bound read-only there in a traced step */
/* The tracers' directory on the host: $SURGEBOX_TRACERS, an installed
 * <prefix>/share/surgebox/tracers, else the source tree's. */
const char *sbt_tracers_dir(void);
/* argv runs a Python file as the tracer supports (python3[.N] [no-argument
 * flags] FILE ARGS); *file_at: FILE's index. */
bool sbt_trace_python_argv(const char *const *argv, size_t *file_at);
/* The toolchain has a tracer (its file's "trace": {"tracer": ...}). */
bool sbt_trace_language_ok(const sbt_toolchain *tc);
/* The traced toolchains of a registry, for a refusal ("python3 (python),
 * gcc (gdb), ..."): at most n bytes in buf, which is returned. */
const char *sbt_traced_names(const sbt_registry *r, char *buf, size_t n);
/* Which tracer a step's argv runs under: Python's for a Python file run,
 * gdb's for a program the job built (`./PROG`, `/app/...`), else none. */
typedef enum { SBT_TRACE_NONE, SBT_TRACE_PYTHON, SBT_TRACE_GDB } sbt_trace_kind;
sbt_trace_kind sbt_trace_kind_of(const char *const *argv);
/* A toolchain traced by gdb (its file says so): its compile step at -O0 -g. */
bool sbt_trace_gdb_language(const sbt_toolchain *tc);
/* ---- gdb's tracer (trace_gdb.c) ---- */
#define SBT_TRACERS_BIN_TARGET "/opt/surgebox/tracers-bin" /* sbtrace_launch, bound read-only there */
/* The directory holding sbtrace_launch on the host: $SURGEBOX_TRACERS_BIN,
 * an installed <prefix>/share/surgebox/tracers-bin, else the build tree's. */
const char *sbt_tracers_bin_dir(void);
/* `./PROG ARGS` as run under gdb (sbtrace_launch -g gdb ... --args
 * sbtrace_launch ./PROG ./PROG ARGS), or NULL (out of memory). */
char **sbt_trace_gdb_argv(const char *const *argv);
/* The plan's compile step made to build for the debugger: every -O flag
 * becomes -O0, -g appended (0, or -1 out of memory). */
int sbt_trace_plan_debug(sbt_plan *plan);
/* System calls the traced step's filter must allow (gdb: ptrace), or NULL. */
const char *const *sbt_trace_seccomp_allow(sbt_trace_kind kind);
/* SURGEBOX_TRACE_LIMITS' JSON: the request's limits, bytes the supervisor's cap (malloc'd). */
char *sbt_trace_limits_json(const sbp_trace *t, uint64_t bytes);
/* argv with the tracer inserted before FILE, env (NULL: the runner's
 * default) plus SURGEBOX_TRACE_FD/_LIMITS and PYTHONHASHSEED=0 unless set.
 * Both malloc'd NULL-terminated; -1 when argv is not a Python file run. */
int sbt_trace_wrap(const char *const *argv, const char *const *env, const char *limits_json, char ***argv_out,
                   char ***env_out);

/* Template expansion helpers (exposed for tests). */
typedef struct {
  const char *bin, *bin_real, *bin_dir, *main, *main_stem, *version, *value, *libraries;
} sbt_vars;
char *sbt_expand_string(const char *tmpl, const sbt_vars *v);
/* ${NAME:-default} expansion from the environment (mount sources). */
char *sbt_expand_env(const char *s);
/* The language level a toolchain accepts, for the listing ("Java 17",
 * "c++98..c++23"), or NULL when its file does not say (level.c). */
char *sbt_level(const sbt_toolchain *t);
/* The part of text the regex's group matched, or NULL (level.c). */
char *sbt_regex_group(const char *regex, int group, const char *text);
/* "17.0.15" -> major "17", major_minor "17.0" */
char *sbt_version_part(const char *version, int parts);

#endif
