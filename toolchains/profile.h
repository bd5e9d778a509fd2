/* Profiles: root file systems the sandbox mounts instead of the host's
 * /usr, /lib*, /bin, /sbin and /etc (prefix sbf_).
 *
 * A profile lives in <dir>/<name>/:
 *   rootfs/            the root file system (debootstrap + host imports)
 *   manifest.json      what it is and how to check it (written last: a
 *                      profile without it is incomplete)
 *   rootfs.sha256      the canonical listing whose SHA-256 is content_hash
 *   toolchains/        toolchain files (toolchains/defs format) valid inside
 *                      the profile, with paths as seen inside rootfs
 * The profile "host" is implicit: no root (the host's own file system), the
 * default toolchain directory.
 *
 * manifest.json:
 *   name              the directory's name
 *   format            1
 *   origin            {suite, mirror, variant, packages[]} (debootstrap's input)
 *   package_versions  {package: version}: dpkg-query inside the rootfs
 *   created           ISO 8601 UTC ("2025-06-01T12:00:00Z")
 *   content_hash      "sha256:<hex>" of the listing below
 *   quick_hash        "sha256:<hex>" of the quick listing below
 *   files, size_bytes entries in rootfs and the sum of their sizes
 *   imports, toolchains, timings, definition, notes: informational
 *
 * content_hash and quick_hash are the SHA-256 of the two listings that
 * profile_hash.h describes. */
#ifndef SURGEBOX_PROFILE_H
#define SURGEBOX_PROFILE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile_hash.h"

#define SBF_ERR_MAX 512
#define SBF_NAME_MAX 64

/* The profiles directory: $SURGEBOX_PROFILES, else /var/lib/surgebox/profiles
 * as root, else $XDG_DATA_HOME/surgebox/profiles, else
 * ~/.local/share/surgebox/profiles. */
const char *sbf_default_dir(void);
/* The directory holding profile definitions (<name>.json and the folder <name>/):
 * $SURGEBOX_PROFILE_DEFS, else the source tree's toolchains/profiles
 * (compiled in), else /usr/share/surgebox/profiles. */
const char *sbf_defs_dir(void);
/* [A-Za-z0-9][A-Za-z0-9._+-]*, at most SBF_NAME_MAX bytes. */
bool sbf_name_ok(const char *name);

typedef enum {
  SBF_VERIFY_NONE = 0,  /* the manifest only */
  SBF_VERIFY_QUICK,     /* + quick_hash (stat every entry: ~0.1 s for 40k files) */
  SBF_VERIFY_FULL,      /* + content_hash (read everything: seconds per GB) */
} sbf_verify_mode;

typedef struct {
  char name[SBF_NAME_MAX + 1];
  bool is_host;
  char path[4096];       /* <dir>/<name>, "" for host */
  char root[4096];       /* <dir>/<name>/rootfs, "" for host */
  json_object *manifest; /* NULL for host; owned */
  const char *created, *content_hash, *quick_hash; /* point into manifest */
  uint64_t files, size_bytes;
} sbf_profile;

/* Load <dir>/<name>/manifest.json (dir NULL: sbf_default_dir()), check every
 * required field and that the name matches, then verify quickly (quick_hash)
 * when the manifest has one. "host" always succeeds. Returns 0, -ENOENT (no
 * such profile, or incomplete: no manifest), -EINVAL (bad manifest),
 * -EBADMSG (the rootfs does not match), or another -errno; err says why. */
int sbf_profile_open(const char *dir, const char *name, sbf_profile *out, char *err, size_t n);
/* The same with an explicit verification. */
int sbf_profile_open_mode(const char *dir, const char *name, sbf_verify_mode mode, sbf_profile *out, char *err,
                          size_t n);
void sbf_profile_close(sbf_profile *p);
/* The root to put in sb_spec.root: NULL for host. */
const char *sbf_profile_root(const sbf_profile *p);
/* Where the profile's toolchain files are: <dir>/<name>/toolchains, or for
 * host sbt_default_dir(). 0 or -ENAMETOOLONG. */
int sbf_profile_toolchains_dir(const sbf_profile *p, char *out, size_t n);
/* Verify an open profile again. full: the content; else the quick hash.
 * On a content mismatch err names (up to a few of) the entries that differ. */
int sbf_profile_verify(const sbf_profile *p, sbf_verify_mode mode, char *err, size_t n);

/* Enter a profile's root to run something in it without the sandbox (e.g.
 * toolchain detection with chroot): a private mount namespace in which the
 * rootfs is bound read-only onto itself, with a fresh /proc (JVMs need it
 * for $ORIGIN and libjli) and a tmpfs on /tmp (JVMs write hsperfdata there),
 * then chroot and chdir("/"). Without this, javac -version run by a bare
 * chroot fails (no /proc) or, with /proc, rewrites rootfs/tmp/hsperfdata_root
 * and the profile no longer verifies. Call it in a forked, single-threaded
 * child that will exec or _exit; needs CAP_SYS_ADMIN (root). 0 or -errno. */
int sbf_enter_root(const char *root, char *err, size_t n);

/* After a full verification passes, store the current quick hash (files
 * were touched but their content, modes and sizes are as sealed: e.g. a JVM
 * run by chroot rewrote rootfs/tmp/hsperfdata_root). -EBADMSG when the
 * content does not verify. */
int sbf_profile_refresh_quick(sbf_profile *p, char *err, size_t n);

/* Seal a profile whose rootfs/ and toolchains/ are in place: hash rootfs,
 * write rootfs.sha256 and, last, manifest.json with origin, package_versions,
 * the hashes and extra's members (each optional; a reference is taken on none
 * of them: they are copied). dir NULL: sbf_default_dir(). */
int sbf_profile_seal(const char *dir, const char *name, json_object *origin, json_object *package_versions,
                     json_object *extra, sbf_tree_hash *hash_out, char *err, size_t n);

/* surgebox profile create|list|show|delete|verify (argv[0] is "profile"). */
int sbf_profile_main(int argc, char **argv);

#endif
