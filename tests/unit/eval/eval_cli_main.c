/* Thin main for the end-to-end tests: `eval_cli ARGS` == `surgebox eval ARGS`. */
#include "eval_cli.h"

int main(int argc, char **argv) {
  sbc_ctx ctx;
  sbc_ctx_init(&ctx);
  return sbe_eval_main(&ctx, argc, argv);
}
