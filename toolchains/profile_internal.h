/* Shared between profile*.c (not installed, not for other modules). */
#ifndef SURGEBOX_PROFILE_INTERNAL_H
#define SURGEBOX_PROFILE_INTERNAL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


/* Run argv (argv[0] looked up in PATH). stdout goes to out_fd (-1: captured
 * into *captured, malloc'd, when captured is not NULL; else inherited);
 * stderr to err_fd (-1: inherited). Returns the exit status (0..255), 128+sig
 * when killed, or a negative errno when it could not start. */
int sbf_run(const char *const *argv, int out_fd, int err_fd, char **captured);

/* Unmount (lazily) everything mounted at or under path, deepest first. Returns
 * how many were unmounted, or a negative errno. */
int sbf_unmount_under(const char *path);

/* "2025-06-01T12:00:00Z" */
void sbf_iso_now(char out[32]);
/* apt_mirror.c: the first non-security "deb" URI of etc_apt (normally
 * "/etc/apt"); false when there is none. */
bool sbf_apt_mirror(const char *etc_apt, char *out, size_t n);
bool sbf_iso_ok(const char *s);
bool sbf_hash_ok(const char *s); /* "sha256:" + 64 lowercase hex digits */

/* A number of seconds printed with 3 decimals. */
json_object *sbf_json_seconds(double s);

/* "1.07 GiB" */
void sbf_human_size(uint64_t bytes, char out[32]);

/* The listing diff: up to max differing paths between two listings, into out. */
void sbf_listing_diff(const char *expected_path, const char *actual_path, int max, char *out, size_t n);

/* Create a profile from its definition (profile_create.c). */
typedef struct {
  const char *dir;    /* profiles directory */
  const char *defs;   /* definitions directory */
  const char *mirror; /* NULL: the definition's */
  bool force;         /* delete an existing profile first */
  bool quiet;
} sbf_create_opts;
int sbf_profile_create(const char *name, const sbf_create_opts *o, char *err, size_t n);

/* An exclusive lock on <dir>/.<name>.lock (created); returns the fd or -errno.
 * Says on stderr when it has to wait for another process. */
int sbf_lock(const char *dir, const char *name);

#endif
