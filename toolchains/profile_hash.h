/* Hashing a profile's root file system: the listings behind a manifest's
 * content_hash and quick_hash (profile.h), prefix sbf_. It knows nothing of
 * profiles: profile.c and profile_create.c call it, never the other way.
 *
 * Listing (content_hash): one line per entry of rootfs except rootfs itself,
 * sorted by strcmp() of the relative path, never crossing a mount:
 *     "<sha256 hex> <st_mode octal, 6 digits> <size> <path>\n"
 * sha256 of the content (regular files), of the link target (symlinks), of
 * "<major>:<minor>" (devices) or of nothing (directories, fifos, sockets);
 * size is st_size for files, the target's length for symlinks, else 0; path
 * is relative ("usr/bin/g++-9") with '\\' and '\n' escaped as "\\\\" and
 * "\\n". content_hash is the SHA-256 of the concatenated lines, i.e.
 * `sha256sum rootfs.sha256`.
 * Quick listing (quick_hash): "<st_mode octal> <size> <mtime s>.<9-digit ns>
 * <path>\n" per entry, same order; no file is read, so it catches anything
 * that touched the tree but not a change that restored size and mtime. */
#ifndef SURGEBOX_PROFILE_HASH_H
#define SURGEBOX_PROFILE_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  char content_hash[72]; /* "sha256:<64 hex>", "" when not computed */
  char quick_hash[72];
  uint64_t files, size_bytes;
  double seconds;
} sbf_tree_hash;

/* Hash root as described above. listing_path: where to write the listing
 * (NULL: nowhere); content false: only the quick hash. */
int sbf_hash_tree(const char *root, bool content, const char *listing_path, sbf_tree_hash *out, char *err,
                  size_t n);

#endif
