/* `surgebox eval`: scores model predictions against SURGE references. */
#ifndef SURGEBOX_EVAL_CLI_H
#define SURGEBOX_EVAL_CLI_H
#include "command.h"

/* argv[0] is the command name ("eval"). Returns the exit status:
 * 0 done, 1 usage error, 2 an input could not be read (or, under --strict,
 * a prediction line was not scored, or nothing was) (the surgebox CLI's
 * convention: 1 usage, 2 failure). */
int sbe_eval_main(const sbc_ctx *ctx, int argc, char **argv);

#include "cliopt.h"
/* eval's options, also parsed by eval --execute (dataset/surge/eval_execute.c) */
enum { SBE_O_REFS = 256, SBE_O_DATA, SBE_O_PREDS, SBE_O_ITEMS, SBE_O_BY, SBE_O_JSON, SBE_O_FL, SBE_O_EXECUTE,
       SBE_O_SUBSET, SBE_O_JOBS, SBE_O_STRICT };
/* The scoring options both take, declared once (T: the options struct, with
 * fields preds, items, json, by, fl_extract); PREDS is --predictions' kind
 * (--execute's must not be empty: SBO_PATH). */
#define SBE_SCORING_OPTS(T, PREDS)                                                                                     \
  {"predictions", SBE_O_PREDS, "FILE", "JSON Lines {\"subset\",\"index\"|\"question\",\"model\"?,\"prediction\"}, "    \
   "or SURGE's layout (items with one extra key per model)", PREDS, SBO_AT(T, preds)},                              \
  {"items", SBE_O_ITEMS, "FILE", "per-item scores as JSON Lines {\"subset\",\"index\",\"model\",\"score\"}", SBO_STR,    \
   SBO_AT(T, items)},                                                                                                  \
  {"json", SBE_O_JSON, NULL, "aggregate as JSON instead of a table", SBO_FLAG, SBO_AT(T, json)},                     \
  {"by", SBE_O_BY, "KEY", "breakdown: language (ML/CL/BG), difficulty (CL), config (DR)", SBO_STR, SBO_AT(T, by)},   \
  {"fl-extract", SBE_O_FL, NULL, "apply SURGE's extract_code() to FL predictions (not the published scoring)",       \
   SBO_FLAG, SBO_AT(T, fl_extract)}
extern const sbo_opt sbe_eval_opts[];
extern const sbo_cmd sbe_eval_cmd;
#endif
