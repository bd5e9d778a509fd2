/* A helper thread that never takes a process signal. */
#ifndef SURGEBOX_COMMON_THREAD_H
#define SURGEBOX_COMMON_THREAD_H

#include <pthread.h>

/* pthread_create with every signal blocked in the new thread (it inherits
 * the mask in force at its creation; the caller's is restored). A signal
 * the daemon handles (SIGHUP, SIGTERM: libuv's handler, for the loop) is
 * otherwise delivered to whichever thread does not block it, and a helper
 * thread's poll() or nanosleep() then returns EINTR, which SA_RESTART does
 * not restart. Returns pthread_create's value. */
int sbu_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

#endif
