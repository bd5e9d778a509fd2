/* Where a surgebox daemon's socket lives by default, shared by the daemon
 * (which listens there) and its clients (which connect there). Prefix sbu_
 * (common utilities). */
#ifndef SURGEBOX_RUNTIME_PATHS_H
#define SURGEBOX_RUNTIME_PATHS_H

#include <stddef.h>
#include <sys/types.h>

/* The runtime directory for host_euid (root: /run/surgebox; else
 * $XDG_RUNTIME_DIR when private, else /tmp/surgebox-UID, made 0700). 0, or
 * -1 with the reason in out. host_euid is the uid outside any user namespace
 * of the caller's own (the daemon's sb_host_euid(); a client's geteuid()). */
int sbu_runtime_dir(uid_t host_euid, char *out, size_t cap);
/* Where sockets go (the default one, private daemons'): $SURGEBOX_SOCKET_DIR
 * when set (an absolute directory of ours nobody else can write, else -1
 * with the reason), else the runtime directory. */
int sbu_socket_dir(uid_t host_euid, char *out, size_t cap);
/* <socket dir>/surgebox.sock */
void sbu_default_socket(uid_t host_euid, char *out, size_t cap);
/* Where profiles live by default (toolchains/profile.c, surgebox doctor):
 * $SURGEBOX_PROFILES, else root's /var/lib/surgebox/profiles, else
 * $XDG_DATA_HOME/surgebox/profiles or ~/.local/share/surgebox/profiles. */
const char *sbu_profiles_dir(void);
/* <prefix> when this binary is <prefix>/bin/NAME (the directory above
 * its own): /proc/self/exe, else (a chroot without /proc, or one whose
 * /proc names the file as the host sees it) the absolute path it was
 * executed by; NULL when neither says. */
const char *sbu_own_prefix(char *buf, size_t cap);
/* <prefix>/share/surgebox/<sub> when this binary is <prefix>/bin/... and that
 * directory exists (an installed surgebox), else NULL: data files found
 * relative to the binary, so any `cmake --install --prefix` works. */
const char *sbu_installed_dir(const char *sub, char *buf, size_t cap);
/* One of surgebox's data directories: $env, else the installed one (sub, in
 * buf), else built (the source or build tree's; given a fallback, only when
 * readable, else the fallback). */
const char *sbu_data_dir(const char *env, const char *sub, char *buf, size_t cap, const char *built,
                         const char *fallback);

#endif
