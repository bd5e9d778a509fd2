#!/bin/sh
# Entrypoint of the surgebox images (docker/Dockerfile, docker/Dockerfile.surge-2025).
#
#   docker run IMAGE                  surgeboxd on $SURGEBOX_SOCKET (default /run/surgebox/surgebox.sock)
#   docker run IMAGE --jobs 4 ...     the same, extra surgeboxd options
#   docker run IMAGE bash             any other command instead of the daemon
#
# Before the daemon starts, cgroups are prepared the way surgebox needs it
# inside a container (see docker/README.md, "cgroups"):
#   * the container must have its own cgroup namespace (--cgroupns=private),
#     so that /sys/fs/cgroup is the container's own sub-tree;
#   * a read-only /sys/fs/cgroup (Docker without --privileged) is remounted
#     read-write, which needs CAP_SYS_ADMIN and no AppArmor mount denial;
#   * every process is moved into /sys/fs/cgroup/init (tini, and later
#     `docker exec` processes, which runc puts beside PID 1), memory and pids
#     are enabled for the children, and surgeboxd gets a cgroup of its own,
#     /sys/fs/cgroup/surgeboxd, in which it creates its supervisor leaf and
#     one cgroup per job. cgroup v2 forbids processes in a cgroup whose
#     children have controllers ("no internal processes"): that is why
#     nothing may stay in the root or beside the daemon.
# On a cgroup v1 (or hybrid) host each controller's hierarchy is remounted
# read-write instead (setup_cgroup_v1).
# When any of this is impossible the daemon still starts; it then falls back
# to rlimits and says so in the "warnings" of every result.
#
# Environment:
#   SURGEBOX_SOCKET        socket path (the image sets /run/surgebox/surgebox.sock)
#   SURGEBOX_CGROUP_SETUP  0 to leave /sys/fs/cgroup alone (default 1)
#   SURGEBOX_HOST_UID      a uid outside the container allowed to use the socket
#                          when its directory is bind-mounted from the host:
#                          the daemon gets --allow-uid, the socket is chowned to it
set -eu

SOCK=${SURGEBOX_SOCKET:-/run/surgebox/surgebox.sock}
CG=/sys/fs/cgroup

note() { printf 'surgebox-entrypoint: %s\n' "$*" >&2; }

# A command that is not an option: run it instead of the daemon.
if [ "$#" -gt 0 ] && [ "${1#-}" = "$1" ]; then
  exec "$@"
fi

cgroup_ready=0
# cgroup v1 (or a hybrid host): one hierarchy per controller, each mounted
# read-only by Docker. One `remount,bind,rw` per controller surgebox uses
# (memory, pids, cpuacct; cpu where it is a mount of its own) makes the
# container's own sub-tree writable (CAP_SYS_ADMIN, no AppArmor mount
# denial); v1 has no "no internal processes" rule, so nothing moves.
setup_cgroup_v1() {
  missing=''
  for c in memory pids cpuacct cpu; do
    d="$CG/$c"
    [ -d "$d" ] || { [ "$c" = cpu ] || missing="$missing $c"; continue; }
    [ -w "$d/cgroup.procs" ] || mount -o remount,bind,rw "$d" 2>/dev/null || true
    [ -w "$d/cgroup.procs" ] || { [ "$c" = cpu ] || missing="$missing $c"; }
  done
  if [ -n "$missing" ]; then
    note "cgroup v1:$missing not writable (needs CAP_SYS_ADMIN and apparmor=unconfined, or --privileged): limits by rlimits"
  else
    note "cgroup v1: memory, pids and cpuacct writable"
    cgroup_ready=v1
  fi
}
setup_cgroup() {
  [ "${SURGEBOX_CGROUP_SETUP:-1}" = 1 ] || { note "SURGEBOX_CGROUP_SETUP=0: cgroups left as they are"; return 0; }
  [ "$(id -u)" = 0 ] || return 0 # user-namespace mode: nothing of ours to prepare
  if [ "$(stat -fc %T "$CG" 2>/dev/null || true)" != cgroup2fs ]; then
    setup_cgroup_v1
    return 0
  fi
  if [ "$(cat /proc/self/cgroup)" != "0::/" ]; then
    note "no private cgroup namespace (run with --cgroupns=private): cgroups left as they are"
    return 0
  fi
  if [ ! -w "$CG/cgroup.subtree_control" ]; then
    mount -o remount,rw "$CG" 2>/dev/null || mount -o remount,bind,rw "$CG" 2>/dev/null || true
  fi
  if [ ! -w "$CG/cgroup.subtree_control" ]; then
    note "$CG is read-only and cannot be remounted (needs CAP_SYS_ADMIN and apparmor=unconfined, or --privileged)"
    return 0
  fi
  mkdir -p "$CG/init" "$CG/surgeboxd"
  # Move everything out of the namespace root (this shell is PID 1).
  # shellcheck disable=SC2013 # one pid per line
  for pid in $(cat "$CG/cgroup.procs"); do
    echo "$pid" >"$CG/init/cgroup.procs" 2>/dev/null || true
  done
  for c in memory pids; do
    if ! grep -qw "$c" "$CG/cgroup.controllers"; then
      note "the container's cgroup lacks the $c controller (not delegated by the host)"
      return 0
    fi
    if ! grep -qw "$c" "$CG/cgroup.subtree_control"; then
      echo "+$c" >"$CG/cgroup.subtree_control" 2>/dev/null || { note "cannot enable $c in $CG"; return 0; }
    fi
  done
  cgroup_ready=1
}
setup_cgroup

mkdir -p "$(dirname "$SOCK")"

if [ -n "${SURGEBOX_HOST_UID:-}" ]; then
  set -- --allow-uid "$SURGEBOX_HOST_UID" "$@"
  # The socket is born root:root 0660; hand it to that uid once it exists.
  (
    i=0
    while [ ! -S "$SOCK" ] && [ "$i" -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
    chown "$SURGEBOX_HOST_UID" "$SOCK" 2>/dev/null || note "cannot chown $SOCK to $SURGEBOX_HOST_UID"
  ) &
fi

# tini is PID 1: it forwards SIGTERM (surgeboxd then drains for --grace
# seconds) and reaps orphans. The daemon enters its own cgroup before exec.
export SURGEBOX_CG_LEAF=
[ "$cgroup_ready" = 1 ] && SURGEBOX_CG_LEAF="$CG/surgeboxd"
# shellcheck disable=SC2016 # expanded by the inner shell
exec tini -- /bin/sh -c '
  if [ -n "$SURGEBOX_CG_LEAF" ]; then echo $$ >"$SURGEBOX_CG_LEAF/cgroup.procs"; fi
  unset SURGEBOX_CG_LEAF
  exec surgeboxd "$@"' surgeboxd --socket "$SOCK" "$@"
