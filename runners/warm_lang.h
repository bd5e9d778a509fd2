/* What makes an interpreter warm-capable, as its toolchain file says it
 * ("warm": toolchains/def.c reads it, docs/toolchains.md describes it): the
 * sandbox library knows no language. The daemon hands the one that names a
 * step's interpreter to warm.c (sb_spec.warm_lang); the variables a client
 * sends are vetted against this list, which comes from the daemon's own
 * toolchain files, never from the client. */
#ifndef SURGEBOX_WARM_LANG_H
#define SURGEBOX_WARM_LANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SB_WARM_VAR_RANGES 4

/* A start-up variable the zygote may start with, and the values it takes:
 * one of words, a decimal (at most 10 digits) in one of ranges, or (has_chars)
 * at most max bytes, each a letter, a digit or one of chars, not holding
 * forbid. */
typedef struct {
  char *name;          /* "PYTHONHASHSEED"; with prefix, a name's start ("LC_": the rest capitals and '_') */
  bool prefix;
  char **words;        /* NULL-terminated, or NULL */
  uint64_t ranges[SB_WARM_VAR_RANGES][2];
  size_t n_ranges;
  bool has_chars;
  char *chars;
  size_t max;
  char *forbid;        /* or NULL */
  char *must;          /* what the value must be, said when it is not */
} sb_warm_var;

/* A variable whose presence makes a run cold, and why. */
typedef struct {
  char *name, *why;
} sb_warm_cold_var;

typedef struct sb_warm_lang {
  char *label;         /* "Python": "not a Python interpreter called by absolute path" */
  char *zygote;        /* its zygote's script, under the warm files' directory: "python/sbzygote.py" */
  char *own_prefix;    /* "PYTHON": any other variable so named makes the run cold; or NULL */
  char *seed_var;      /* "PYTHONHASHSEED": the zygote's own seed unless the job sets it; or NULL */
  sb_warm_var *vars;
  size_t n_vars;
  sb_warm_cold_var *cold, *userns_cold; /* cold with it set; in user-namespace mode too */
  size_t n_cold, n_userns_cold;
} sb_warm_lang;

#endif
