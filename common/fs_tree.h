/* mkdir -p and a link-safe rm -rf (fs_tree.c). Keep their sb_ names: the
 * daemon, runners/, toolchains/, dataset/ and bench/ call them. */
#ifndef SURGEBOX_FS_TREE_H
#define SURGEBOX_FS_TREE_H

#include <sys/types.h>

int sb_mkdir_p(const char *path, mode_t mode); /* parents 0755, the leaf mode; 0 or -errno */
int sb_rm_rf(const char *path);                /* never crosses mounts or follows symlinks */

#endif
