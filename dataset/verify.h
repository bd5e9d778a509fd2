/* `surgebox verify --benchmark NAME ...` (dataset/verify_cli.c, a table of
 * benchmarks); argv[0] is "verify". Exit status: 0 done, 1 usage, 2 failure. */
#ifndef SURGEBOX_VERIFY_H
#define SURGEBOX_VERIFY_H
#include "command.h"
int sbr_verify_main(const sbc_ctx *ctx, int argc, char **argv);
/* A benchmark's own table takes its --benchmark NAME (the dispatch's), storing nothing. */
#define SBR_VERIFY_BENCHMARK_OPT(NAME) {"benchmark", 0, NAME, "this benchmark (surgebox verify's dispatch)", SBO_SKIP}
#endif
