/* Who may connect: the allow lists, the socket's group, and the one line a
 * refused peer reads (conn.c's check at accept). */
#include "internal.h"

#include <grp.h>
#include <stdio.h>
#include <sys/socket.h>

/* Was the peer in group gid when it connected (SO_PEERGROUPS, Linux 4.13)? */
static bool peer_in_group(int fd, gid_t gid) {
  gid_t groups[256];
  socklen_t len = sizeof groups;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) return false;
  for (size_t i = 0; i < len / sizeof(gid_t); i++)
    if (groups[i] == gid) return true;
  return false;
}

bool sbd_peer_allowed(const sbd_server *srv, uid_t uid, gid_t gid, int fd) {
  for (size_t i = 0; i < srv->cfg->n_allow_uid; i++)
    if (srv->cfg->allow_uid[i] == uid) return true;
  for (size_t i = 0; i < srv->cfg->n_allow_gid; i++)
    if (srv->cfg->allow_gid[i] == gid) return true;
  /* the socket's group (--socket-group, systemd's SocketGroup=) is the policy */
  if (srv->has_socket_gid && (gid == srv->socket_gid || peer_in_group(fd, srv->socket_gid))) return true;
  return false;
}

void sbd_peer_refusal(const sbd_server *srv, bool uid_known, uid_t uid, char *buf, size_t len) {
  if (!uid_known) { /* an unprivileged daemon sees only its own user */
    snprintf(buf, len, "your uid is not allowed to use this daemon: it runs unprivileged and serves only the user who "
                       "started it; use a daemon of your own (surgebox starts one when none answers at your default socket)");
    return;
  }
  char group[96] = "";
  if (srv->has_socket_gid) {
    const struct group *g = getgrgid(srv->socket_gid);
    if (g) snprintf(group, sizeof group, "add you to group %s (then log in again), or to ", g->gr_name);
    else snprintf(group, sizeof group, "add you to group %u (then log in again), or to ", (unsigned)srv->socket_gid);
  }
  snprintf(buf, len,
           "uid %u is not allowed to use this daemon: ask its administrator to %sallow your uid (surgeboxd --allow-uid %u, "
           "or allow-uid = %u in surgeboxd.conf)",
           (unsigned)uid, group, (unsigned)uid, (unsigned)uid);
}
