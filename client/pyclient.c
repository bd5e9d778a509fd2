/* pyclient.h: the Python client's modules as commands. */
#include "pyclient.h"
#include "runtime_paths.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SURGEBOX_PYTHON_CLIENT_SOURCE_DIR
#define SURGEBOX_PYTHON_CLIENT_SOURCE_DIR "/usr/share/surgebox/python"
#endif

extern char **environ;

const char *sbc_py_client_dir(void) {
  static char buf[PATH_MAX];
  return sbu_data_dir("SURGEBOX_PYTHON_CLIENT", "python", buf, sizeof buf, SURGEBOX_PYTHON_CLIENT_SOURCE_DIR, NULL);
}

static void write_all_fd(int fd, const char *text) {
  void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
  size_t n = strlen(text), off = 0;
  while (off < n) {
    ssize_t w = write(fd, text + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += (size_t)w;
  }
  signal(SIGPIPE, old_pipe);
}

int sbc_py_module(const char *module, const char *const *args, const char *stdin_text, char *err, size_t err_len) {
  char pp[PATH_MAX + 64];
  const char *old = getenv("PYTHONPATH");
  snprintf(pp, sizeof pp, "%s%s%s", sbc_py_client_dir(), old && *old ? ":" : "", old && *old ? old : "");
  setenv("PYTHONPATH", pp, 1);
  size_t n = 0;
  while (args && args[n]) n++;
  char **argv = calloc(n + 4, sizeof *argv);
  argv[0] = "python3", argv[1] = "-m", argv[2] = (char *)module;
  for (size_t i = 0; i < n; i++) argv[3 + i] = (char *)args[i];
  int pfd[2] = {-1, -1};
  if (stdin_text && pipe2(pfd, O_CLOEXEC) < 0) {
    free(argv);
    snprintf(err, err_len, "pipe: %s", strerror(errno));
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (stdin_text) posix_spawn_file_actions_adddup2(&fa, pfd[0], 0);
  pid_t pid;
  int rc = posix_spawnp(&pid, "python3", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  free(argv);
  if (stdin_text) close(pfd[0]);
  if (rc != 0) {
    if (stdin_text) close(pfd[1]);
    snprintf(err, err_len, "cannot run python3 -m %s: %s (install python3)", module, strerror(rc));
    return -1;
  }
  if (stdin_text) {
    write_all_fd(pfd[1], stdin_text);
    close(pfd[1]);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(st)) {
    snprintf(err, err_len, "python3 -m %s (from %s) died by signal %d", module, sbc_py_client_dir(), WTERMSIG(st));
    return -1;
  }
  return WEXITSTATUS(st);
}
