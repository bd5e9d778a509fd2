/* surgebox batch: a JSON Lines file of exec requests through the daemon
 * (batch_cli.c). */
#ifndef SURGEBOX_BATCH_H
#define SURGEBOX_BATCH_H
#include <stdbool.h>

/* socket_path/autostart/profile: the CLI's global options (batch's own
 * override them; profile goes to requests that name none). */
int sbr_batch_main(int argc, char **argv, const char *socket_path, bool autostart, const char *profile);
#endif
