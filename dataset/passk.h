/* pass@k's unbiased estimator (Chen et al. 2021), shared by the benchmarks
 * that sample n solutions per problem (cruxeval/, tests/). */
#ifndef SURGEBOX_PASSK_H
#define SURGEBOX_PASSK_H
#include <stddef.h>
/* 1 - C(n-c, k) / C(n, k) for n samples of which c passed, computed as
 * 1 - prod_{j=n-c+1}^{n} (1 - k/j) (no binomials to overflow); 1 when
 * n - c < k. */
double sbr_pass_at_k(size_t n, size_t c, size_t k);
#endif
