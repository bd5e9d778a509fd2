/* pass@k's unbiased estimator (passk.h). */
#include "passk.h"

double sbr_pass_at_k(size_t n, size_t c, size_t k) {
  if (n - c < k) return 1.0;
  double prod = 1.0;
  for (size_t j = n - c + 1; j <= n; j++) prod *= 1.0 - (double)k / (double)j;
  return 1.0 - prod;
}
