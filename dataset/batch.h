/* surgebox batch: a JSON Lines file of exec requests through the daemon
 * (batch_cli.c). */
#ifndef SURGEBOX_BATCH_H
#define SURGEBOX_BATCH_H
#include "command.h"
#include <stdbool.h>
#include <stddef.h>

#include "shard.h"

/* socket_path/autostart/profile: the CLI's global options (batch's own
 * override them; profile goes to requests that name none). */
int sbr_batch_main(const sbc_ctx *ctx, int argc, char **argv);

/* batch --shard (batch_shard.c): mine[i] = item keys[i] is this shard's;
 * writes OUT.shard.json (or refuses another run's: -1). */
int sbr_batch_shard_plan(const sbr_shard *sh, const char *in, const char *out, const char *const *keys, size_t n,
                         bool *mine);
#endif
