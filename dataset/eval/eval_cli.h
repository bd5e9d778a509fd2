/* `surgebox eval`: scores model predictions against SURGE references. */
#ifndef SURGEBOX_EVAL_CLI_H
#define SURGEBOX_EVAL_CLI_H

/* argv[0] is the command name ("eval"). Returns the exit status:
 * 0 done, 1 usage error, 2 an input could not be read (the surgebox CLI's
 * convention: 1 usage, 2 failure). */
int sbe_eval_main(int argc, char **argv);
#endif
