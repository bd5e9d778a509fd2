/* Minimal assertion helpers for unit tests: a failed CHECK prints file:line
 * and the expression, the test keeps going, and check_exit() returns 1 if any
 * check failed. No framework dependency. */
#ifndef SURGEBOX_CHECK_H
#define SURGEBOX_CHECK_H
#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures_;
static int check_count_;

#define CHECK(expr)                                                              \
  do {                                                                           \
    check_count_++;                                                              \
    if (!(expr)) {                                                               \
      check_failures_++;                                                         \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #expr);   \
    }                                                                            \
  } while (0)

#define CHECK_STR(a, b)                                                          \
  do {                                                                           \
    const char *ca_ = (a), *cb_ = (b);                                           \
    check_count_++;                                                              \
    if (!ca_ || !cb_ || strcmp(ca_, cb_) != 0) {                                 \
      check_failures_++;                                                         \
      fprintf(stderr, "%s:%d: CHECK_STR failed: %s == %s\n  got:      \"%s\"\n  expected: \"%s\"\n", \
              __FILE__, __LINE__, #a, #b, ca_ ? ca_ : "(null)", cb_ ? cb_ : "(null)"); \
    }                                                                            \
  } while (0)

#define CHECK_NEAR(a, b, eps)                                                    \
  do {                                                                           \
    double na_ = (a), nb_ = (b);                                                 \
    check_count_++;                                                              \
    if (!(fabs(na_ - nb_) <= (eps))) {                                           \
      check_failures_++;                                                         \
      fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.12g, expected %.12g\n",  \
              __FILE__, __LINE__, #a, na_, nb_);                                 \
    }                                                                            \
  } while (0)

static inline int check_exit(void) {
  fprintf(stderr, "%d checks, %d failed\n", check_count_, check_failures_);
  return check_failures_ ? 1 : 0;
}
#endif
