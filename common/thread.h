/* A helper thread that never takes a process signal. */
#ifndef SURGEBOX_COMMON_THREAD_H
#define SURGEBOX_COMMON_THREAD_H

#include <pthread.h>
#include <sys/types.h>

/* pthread_create with every signal blocked in the new thread (it inherits
 * the mask in force at its creation; the caller's is restored). A signal
 * the daemon handles (SIGHUP, SIGTERM: libuv's handler, for the loop) is
 * otherwise delivered to whichever thread does not block it, and a helper
 * thread's poll() or nanosleep() then returns EINTR, which SA_RESTART does
 * not restart. Returns pthread_create's value. */
int sbu_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

#endif

/* Descriptors a fork must not copy. A child that forks and never execs
 * (toolchain detection inside a profile: seconds of probes) keeps every
 * descriptor open at the fork, O_CLOEXEC or not. Code that holds the write
 * ends of another process's pipes for a moment (a sandbox's start, between
 * the pipes' creation and closing its copies) does so inside
 * sbu_fork_guard_enter/leave; sbu_fork_guarded forks outside every such
 * moment, so the child never holds an end whose EOF someone waits for. */
void sbu_fork_guard_enter(void);
void sbu_fork_guard_leave(void);
pid_t sbu_fork_guarded(void);
