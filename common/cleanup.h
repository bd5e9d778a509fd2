/* Release on scope exit (__attribute__((cleanup))): a descriptor, a heap
 * block, a FILE, a json_object reference. Each helper keeps errno, so a
 * function may `return -errno` or leave errno for its caller as before.
 *
 *   SBU_AUTOCLOSE int fd = open(...);      closed at scope exit when >= 0
 *   SBU_AUTOFREE char *p = malloc(...);    freed at scope exit
 *   SBU_AUTOFCLOSE FILE *f = fopen(...);   fclosed (errors ignored: only for reading)
 *   SBU_AUTOPUT json_object *o = ...;      json_object_put
 *
 * Handing the resource over (returning it, storing it elsewhere): take it,
 * which clears the variable so the cleanup does nothing:
 *   return sbu_take_fd(&fd);     out->buf = sbu_take_ptr(&p);
 * Never in code that runs in the sandbox child after clone (HACKING.md). */
#ifndef SURGEBOX_CLEANUP_H
#define SURGEBOX_CLEANUP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <json-c/json.h>

/* Also by hand, on a descriptor kept in a struct: closes it and leaves -1. */
static inline void sbu_closep(int *fd) {
  if (*fd >= 0) {
    int e = errno;
    close(*fd);
    errno = e;
    *fd = -1;
  }
}
static inline void sbu_freep(void *p) {
  int e = errno;
  free(*(void **)p);
  errno = e;
}
static inline void sbu_fclosep(FILE **f) {
  if (*f) {
    int e = errno;
    fclose(*f);
    errno = e;
  }
}
static inline void sbu_json_putp(json_object **o) {
  int e = errno;
  json_object_put(*o);
  errno = e;
}

#define SBU_AUTOCLOSE __attribute__((cleanup(sbu_closep)))
#define SBU_AUTOFREE __attribute__((cleanup(sbu_freep)))
#define SBU_AUTOFCLOSE __attribute__((cleanup(sbu_fclosep)))
#define SBU_AUTOPUT __attribute__((cleanup(sbu_json_putp)))

/* The descriptor, leaving -1 behind (the cleanup then closes nothing). */
static inline int sbu_take_fd(int *fd) {
  int v = *fd;
  *fd = -1;
  return v;
}
/* The pointer, leaving NULL behind. */
static inline void *sbu_take_ptr(void *p) {
  void *v = *(void **)p;
  *(void **)p = NULL;
  return v;
}

#endif
