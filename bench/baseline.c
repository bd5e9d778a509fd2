/* bench_baseline: replay exec requests (JSON Lines, as `surgebox regen
 * --dump-requests` / `surgebox dr-matrix --dump-requests` write them) with
 * plain fork + exec + wait and NO isolation, at a given parallelism: the
 * baseline the regen and dr-matrix benchmarks divide by.
 *
 *   bench_baseline --requests FILE --jobs N --out FILE.json [--work DIR] [--every K]
 *
 * Each job gets a fresh directory holding its files; the steps run one after
 * another in it (a later step only when the earlier one exited 0, as the
 * daemon does), their stdout/stderr read through pipes and discarded, stdin
 * from the request, the step's wall limit enforced by SIGKILL of its process
 * group. Toolchain-form requests are expanded by the same code the daemon
 * uses (sbt_plan_make on the host's registry). The sandbox's paths are
 * "/app/..."; here every "/app" in argv, environment and cwd becomes the
 * job's directory, the one deliberate difference in the commands.
 *
 * It runs programs unsandboxed, so bench/run starts it inside the throw-away
 * unshare wrapper like every other driver, and only ever feeds it SURGE's
 * published (non-hostile) programs. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#include "clock.h"
#include "protocol.h"
#include "sandbox.h"
#include "toolchain.h"

/* "/app" as a path prefix (at the start or after '=', ':' or a space) -> dir */
static char *rewrite_app(const char *s, const char *dir) {
  size_t dl = strlen(dir), n = 0;
  for (const char *p = s; (p = strstr(p, "/app")); p += 4) n++;
  char *out = malloc(strlen(s) + n * dl + 1), *o = out;
  if (!out) return NULL;
  for (const char *p = s; *p;) {
    bool at_start = p == s || p[-1] == '=' || p[-1] == ':' || p[-1] == ' ';
    if (at_start && strncmp(p, "/app", 4) == 0 && (p[4] == '\0' || p[4] == '/' || p[4] == ':' || p[4] == ' ')) {
      memcpy(o, dir, dl);
      o += dl;
      p += 4;
    } else {
      *o++ = *p++;
    }
  }
  *o = '\0';
  return out;
}

static char **rewrite_strv(char *const *v, const char *dir) {
  size_t n = 0;
  while (v && v[n]) n++;
  char **out = calloc(n + 1, sizeof *out);
  for (size_t i = 0; out && i < n; i++) out[i] = rewrite_app(v[i], dir);
  return out;
}

static int write_file(const char *dir, const sbp_file *f) {
  char path[8192];
  snprintf(path, sizeof path, "%s/%s", dir, f->path);
  char *slash = strrchr(path, '/');
  *slash = '\0';
  if (sb_mkdir_p(path, 0755) < 0) return -1;
  *slash = '/';
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, f->has_mode ? f->mode : 0644);
  if (fd < 0) return -1;
  size_t off = 0;
  while (off < f->len) {
    ssize_t w = write(fd, f->data + off, f->len - off);
    if (w <= 0) {
      close(fd);
      return -1;
    }
    off += (size_t)w;
  }
  fchmod(fd, f->has_mode ? f->mode : 0644);
  return close(fd);
}

typedef struct {
  char **argv, **env;
  const unsigned char *stdin_data;
  size_t stdin_len;
  bool merge_output;
  double wall_s;
} step;

static bool verbose;

/* 0: exited 0; 1: ran and failed; 2: timed out; 3: could not run */
static int run_step(const step *s, const char *cwd, const char *dir) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) return 3;
  /* stdin from an unlinked file, as the sandbox feeds it from memory */
  int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (s->stdin_data) {
    char tmpl[4200];
    snprintf(tmpl, sizeof tmpl, "%s/.stdinXXXXXX", dir);
    int fd = mkostemp(tmpl, O_CLOEXEC);
    if (fd >= 0) {
      unlink(tmpl);
      if (write(fd, s->stdin_data, s->stdin_len) == (ssize_t)s->stdin_len && lseek(fd, 0, SEEK_SET) == 0) {
        close(in);
        in = fd;
      } else {
        close(fd);
      }
    }
  }
  pid_t pid = fork();
  if (pid < 0) return 3;
  if (pid == 0) {
    setpgid(0, 0);
    dup2(in, 0);
    dup2(out[1], 1);
    dup2(s->merge_output ? out[1] : err[1], 2);
    if (chdir(cwd) < 0) _exit(127);
    /* argv[0] is looked up in the job's PATH, as the sandbox does
     * (execvpe would search the driver's) */
    environ = s->env;
    execvp(s->argv[0], s->argv);
    _exit(127);
  }
  setpgid(pid, pid);
  close(in);
  close(out[1]);
  close(err[1]);
  double deadline = sbu_now_s() + s->wall_s;
  struct pollfd fds[2] = {{.fd = out[0], .events = POLLIN}, {.fd = err[0], .events = POLLIN}};
  int open_fds = 2;
  bool timed_out = false;
  char buf[65536], head[600];
  size_t head_len = 0;
  while (open_fds > 0) {
    double left = deadline - sbu_now_s();
    if (left <= 0) {
      timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    int r = poll(fds, 2, (int)(left * 1000) + 1);
    if (r < 0 && errno != EINTR) break;
    for (int k = 0; k < 2; k++) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[k].fd, buf, sizeof buf);
      if (n > 0 && head_len < sizeof head - 1) { /* the start of the output, for --verbose */
        size_t take = (size_t)n < sizeof head - 1 - head_len ? (size_t)n : sizeof head - 1 - head_len;
        memcpy(head + head_len, buf, take);
        head_len += take;
      }
      if (n <= 0) {
        close(fds[k].fd);
        fds[k].fd = -1;
        open_fds--;
      }
    }
  }
  for (int k = 0; k < 2; k++)
    if (fds[k].fd >= 0) close(fds[k].fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  kill(-pid, SIGKILL); /* whatever it left behind */
  int rc = timed_out ? 2 : WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  if (verbose) {
    head[head_len] = '\0';
    fprintf(stderr, "[%s] %s exit status 0x%x:\n%s\n", rc ? "FAIL" : "ok", s->argv[0], status, head);
  }
  return rc;
}

static const char *const default_env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", NULL};

static sbt_registry registry;
static bool have_registry;

static double step_wall_s(const sbp_step_limits *l) {
  sb_limits r;
  sbt_limits_resolve(&r, NULL, l);
  return r.wall_time_s;
}

/* One job, in a child of the driver: exit code as run_step's. */
static int run_job(const char *line, size_t len, const char *work, size_t index) {
  sbp_limits lim;
  sbp_limits_default(&lim);
  sbp_request *req = NULL;
  json_object *eresp = NULL;
  if (sbp_request_parse(line, len, &lim, &req, &eresp) < 0 || req->type != SBP_REQ_EXEC) return 3;
  const sbp_exec *ex = &req->exec;
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/job%zu", work, index);
  sb_rm_rf(dir);
  if (sb_mkdir_p(dir, 0755) < 0) return 3;
  for (size_t i = 0; i < ex->n_files; i++)
    if (write_file(dir, &ex->files[i]) < 0) return 3;
  step steps[SBP_DEFAULT_MAX_STEPS];
  size_t n = 0;
  char *cwd = strdup(dir);
  sbt_plan plan;
  if (ex->toolchain) {
    const sbt_toolchain *tc = have_registry ? sbt_find(&registry, ex->toolchain) : NULL;
    if (!tc) return 3;
    sbt_file *files = calloc(ex->n_files + 1, sizeof *files);
    for (size_t i = 0; i < ex->n_files; i++) files[i] = (sbt_file){ex->files[i].path, ex->files[i].data, ex->files[i].len};
    char msg[SBT_ERR_MAX];
    if (sbt_plan_make(tc, ex->options, files, ex->n_files, (const char *const *)ex->args, NULL, &plan, msg) != SBT_OK) return 3;
    if (plan.cwd) {
      free(cwd);
      cwd = rewrite_app(plan.cwd, dir);
    }
    for (size_t i = 0; i < plan.n_steps; i++) {
      const sbt_step *ps = &plan.steps[i];
      steps[n++] = (step){.argv = rewrite_strv(ps->argv, dir),
                          .env = rewrite_strv(plan.env ? plan.env : (char *const *)default_env, dir),
                          .stdin_data = ps->is_compile || !ex->has_stdin ? NULL : ex->stdin_data,
                          .stdin_len = ex->stdin_len,
                          .wall_s = ps->limits.wall_time_s > 0 ? ps->limits.wall_time_s : 30};
      if (!ps->is_compile && ex->limits.has_time_s) steps[n - 1].wall_s = ex->limits.time_s;
    }
  } else {
    for (size_t i = 0; i < ex->n_steps && n < SBP_DEFAULT_MAX_STEPS; i++) {
      const sbp_step *s = &ex->steps[i];
      steps[n++] = (step){.argv = rewrite_strv(s->argv, dir),
                          .env = rewrite_strv(s->env ? s->env : (char *const *)default_env, dir),
                          .stdin_data = s->has_stdin ? s->stdin_data : NULL,
                          .stdin_len = s->stdin_len,
                          .merge_output = s->merge_output,
                          .wall_s = step_wall_s(&s->limits)};
    }
  }
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) rc = run_step(&steps[i], cwd, dir);
  sb_rm_rf(dir);
  return rc;
}

typedef struct {
  pid_t pid;
  size_t index;
  double t0;
} slot;

int main(int argc, char **argv) {
  const char *requests = NULL, *out = NULL, *work = "/tmp/surgebox-baseline";
  int jobs = 2, every = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--requests") && v) requests = argv[++i];
    else if (!strcmp(a, "--out") && v) out = argv[++i];
    else if (!strcmp(a, "--work") && v) work = argv[++i];
    else if (!strcmp(a, "--jobs") && v) jobs = atoi(argv[++i]);
    else if (!strcmp(a, "--every") && v) every = atoi(argv[++i]);
    else if (!strcmp(a, "--verbose")) verbose = true;
    else {
      fprintf(stderr, "usage: bench_baseline --requests FILE --jobs N --out FILE.json [--work DIR] [--every K] [--verbose]\n");
      return 1;
    }
  }
  if (!requests || !out || jobs < 1 || every < 1) {
    fprintf(stderr, "bench_baseline: --requests, --out and --jobs >= 1 are required\n");
    return 1;
  }
  FILE *f = fopen(requests, "r");
  if (!f) {
    fprintf(stderr, "bench_baseline: %s: %s\n", requests, strerror(errno));
    return 1;
  }
  char **lines = NULL, *line = NULL;
  size_t n_lines = 0, cap = 0, lcap = 0;
  ssize_t len;
  /* --every K: a deterministic sample, every K-th request (the 8,000-job DR
   * matrix would otherwise take as long again as the run it is compared to) */
  for (size_t seen = 0; (len = getline(&line, &lcap, f)) > 0; seen++) {
    if (seen % (size_t)every) continue;
    if (n_lines == cap) lines = realloc(lines, (cap = cap ? cap * 2 : 256) * sizeof *lines);
    lines[n_lines++] = strndup(line, (size_t)len);
  }
  free(line);
  fclose(f);
  /* opened now: /tmp is about to be replaced */
  int out_fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0) {
    fprintf(stderr, "bench_baseline: %s: %s\n", out, strerror(errno));
    return 1;
  }
  char err[SBT_ERR_MAX];
  if (sbt_registry_load(&registry, sbt_default_dir(), err) == 0 && sbt_registry_detect(&registry, NULL, err) == 0)
    have_registry = true;
  else
    fprintf(stderr, "bench_baseline: no toolchain registry (%s): toolchain-form requests will fail\n", err);
  /* The sandbox gives programs a tmpfs /app and /tmp; here the root file
   * system may be ext4 (mounted with discard on this kind of machine). So
   * that the file system is not what the comparison measures, /tmp becomes a
   * private tmpfs too, in a mount namespace of our own (no other isolation:
   * same uid, same view of everything else). */
  if (unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
      mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") == 0)
    fprintf(stderr, "bench_baseline: /tmp is a private tmpfs for this run\n");
  else
    fprintf(stderr, "bench_baseline: warning: cannot mount a private tmpfs on /tmp (%s): programs write to the host's\n",
            strerror(errno));
  char *abs_work = NULL;
  if (sb_mkdir_p(work, 0755) < 0 || !(abs_work = realpath(work, NULL))) {
    fprintf(stderr, "bench_baseline: %s: %s\n", work, strerror(errno));
    return 1;
  }
  work = abs_work; /* steps chdir into their job's directory: paths must not be relative */
  slot *slots = calloc((size_t)jobs, sizeof *slots);
  double *job_wall = calloc(n_lines + 1, sizeof(double));
  int *job_rc = calloc(n_lines + 1, sizeof(int));
  size_t next = 0, running = 0, counts[4] = {0};
  double t0 = sbu_now_s();
  struct rusage ru0;
  getrusage(RUSAGE_CHILDREN, &ru0);
  while (next < n_lines || running > 0) {
    while (running < (size_t)jobs && next < n_lines) {
      int k = 0;
      while (slots[k].pid) k++;
      fflush(NULL);
      pid_t pid = fork();
      if (pid == 0) _exit(run_job(lines[next], strlen(lines[next]), work, next));
      if (pid < 0) {
        perror("fork");
        return 2;
      }
      slots[k] = (slot){pid, next++, sbu_now_s()};
      running++;
    }
    int status;
    pid_t pid = wait(&status);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int k = 0; k < jobs; k++)
      if (slots[k].pid == pid) {
        job_wall[slots[k].index] = sbu_now_s() - slots[k].t0;
        int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
        job_rc[slots[k].index] = rc > 3 ? 3 : rc;
        counts[job_rc[slots[k].index]]++;
        slots[k].pid = 0;
        running--;
      }
  }
  double wall = sbu_now_s() - t0;
  struct rusage ru1;
  getrusage(RUSAGE_CHILDREN, &ru1);
  double cpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec + ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
               (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec + ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
  json_object *o = json_object_new_object();
  json_object_object_add(o, "requests", json_object_new_string(requests));
  json_object_object_add(o, "jobs", json_object_new_int(jobs));
  json_object_object_add(o, "n", json_object_new_int64((int64_t)n_lines));
  json_object_object_add(o, "every", json_object_new_int(every));
  json_object_object_add(o, "wall_s", json_object_new_double(wall));
  json_object_object_add(o, "cpu_s", json_object_new_double(cpu));
  json_object_object_add(o, "ok", json_object_new_int64((int64_t)counts[0]));
  json_object_object_add(o, "failed", json_object_new_int64((int64_t)counts[1]));
  json_object_object_add(o, "timeout", json_object_new_int64((int64_t)counts[2]));
  json_object_object_add(o, "not_run", json_object_new_int64((int64_t)counts[3]));
  json_object *per = json_object_new_array();
  for (size_t i = 0; i < n_lines; i++) {
    json_object *j = json_object_new_object();
    json_object_object_add(j, "wall_s", json_object_new_double(job_wall[i]));
    json_object_object_add(j, "rc", json_object_new_int(job_rc[i]));
    json_object_array_add(per, j);
  }
  json_object_object_add(o, "per_job", per);
  if (json_object_to_fd(out_fd, o, JSON_C_TO_STRING_PLAIN) < 0 || close(out_fd) < 0) {
    fprintf(stderr, "bench_baseline: cannot write %s\n", out);
    return 2;
  }
  fprintf(stderr, "bench_baseline: %zu jobs in %.1f s at %d in parallel (%zu exited 0, %zu failed, %zu timed out, %zu not run)\n",
          n_lines, wall, jobs, counts[0], counts[1], counts[2], counts[3]);
  json_object_put(o);
  return 0;
}
