/* dataset/passk.c against values worked out by hand from the definition
 * 1 - C(n-c, k) / C(n, k). */
#include "check.h"
#include "passk.h"

int main(void) {
  /* n=5, c=2: k=1: 1 - C(3,1)/C(5,1) = 1 - 3/5 = 0.4; k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10 = 0.7;
   * k=3: 1 - C(3,3)/C(5,3) = 1 - 1/10 = 0.9; k=4: n - c = 3 < 4: 1 */
  CHECK_NEAR(sbr_pass_at_k(5, 2, 1), 0.4, 1e-12);
  CHECK_NEAR(sbr_pass_at_k(5, 2, 2), 0.7, 1e-12);
  CHECK_NEAR(sbr_pass_at_k(5, 2, 3), 0.9, 1e-12);
  CHECK_NEAR(sbr_pass_at_k(5, 2, 4), 1.0, 0);
  /* none passed: 0 for every k; all passed: 1 */
  CHECK_NEAR(sbr_pass_at_k(10, 0, 1), 0.0, 0);
  CHECK_NEAR(sbr_pass_at_k(10, 0, 10), 0.0, 0);
  CHECK_NEAR(sbr_pass_at_k(4, 4, 1), 1.0, 0);
  /* n=10, c=1, k=1: 1/10; k=5: 1 - C(9,5)/C(10,5) = 1 - 126/252 = 0.5 */
  CHECK_NEAR(sbr_pass_at_k(10, 1, 1), 0.1, 1e-12);
  CHECK_NEAR(sbr_pass_at_k(10, 1, 5), 0.5, 1e-12);
  /* large n, where C(n, k) overflows a double long before: n=1000, c=1,
   * k=500: 1 - C(999,500)/C(1000,500) = 1 - 500/1000 = 0.5 */
  CHECK_NEAR(sbr_pass_at_k(1000, 1, 500), 0.5, 1e-12);
  return check_exit();
}
