/* NULL-terminated string arrays (argv, envp): a deep copy and its free, one
 * of each for every room. Prefix sbu_. */
#ifndef SURGEBOX_STRV_H
#define SURGEBOX_STRV_H

#include <stddef.h>

size_t sbu_strv_len(const char *const *v); /* 0 for NULL */
/* Every string and the array malloc'd (NULL stays an empty array); NULL: no
 * memory, nothing left allocated. */
char **sbu_strv_copy(const char *const *v);
void sbu_strv_free(char **v); /* each string, then the array; NULL is fine */

#endif
