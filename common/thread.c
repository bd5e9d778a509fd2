/* sbu_thread_start: see thread.h */
#include "thread.h"

#include <signal.h>
#include <unistd.h>

int sbu_thread_start(pthread_t *t, void *(*fn)(void *), void *arg) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(t, NULL, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}

static pthread_rwlock_t fork_guard = PTHREAD_RWLOCK_INITIALIZER;

void sbu_fork_guard_enter(void) { pthread_rwlock_rdlock(&fork_guard); }
void sbu_fork_guard_leave(void) { pthread_rwlock_unlock(&fork_guard); }

pid_t sbu_fork_guarded(void) {
  pthread_rwlock_wrlock(&fork_guard);
  pid_t pid = fork();
  if (pid != 0) pthread_rwlock_unlock(&fork_guard); /* the child never touches it again */
  return pid;
}
