#!/bin/sh
# Base images for docker/Dockerfile* without a registry: debootstrap a minbase
# tree per suite and `docker import` it under the name the Dockerfiles use.
#
#   docker/make-base-images.sh [--mirror URI] [--security-mirror URI]
#                              [--cache DIR] [--no-import] SUITE...
#
#   SUITE            bookworm (-> debian:12) or bullseye (-> debian:11)
#   --mirror         Debian archive to debootstrap from and to write into the
#                    image's sources.list; default: the first non-security
#                    "deb" URI of this machine's apt configuration
#   --security-mirror  the security archive (default: the first apt URI whose
#                    path holds "security"; none found: no security line)
#   --cache DIR      keep DIR/<suite>.tar (default $SURGEBOX_DOCKER_CACHE, else
#                    no cache): a later run imports it without debootstrap
#   --no-import      only make the tarballs
#
# Needs root and debootstrap; the docker client is $DOCKER (default: docker
# from PATH) and follows $DOCKER_HOST.
# The mirror logic is toolchains/apt_mirror.c's, in shell.
set -eu

note() { printf 'make-base-images: %s\n' "$*" >&2; }
die() { note "$*"; exit 1; }

MIRROR='' SECURITY='' CACHE=${SURGEBOX_DOCKER_CACHE:-} IMPORT=1
ETC_APT=${SURGEBOX_ETC_APT:-/etc/apt}
while [ "$#" -gt 0 ]; do
  case $1 in
    --mirror) MIRROR=$2; shift 2 ;;
    --security-mirror) SECURITY=$2; shift 2 ;;
    --cache) CACHE=$2; shift 2 ;;
    --no-import) IMPORT=0; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) break ;;
  esac
done
[ "$#" -gt 0 ] || die "no suite given (bookworm, bullseye)"

# Every "deb" URI of the apt configuration, deb822 files first, as apt_mirror.c.
apt_uris() {
  for f in "$ETC_APT"/sources.list.d/*.sources; do
    [ -f "$f" ] && sed -n 's/^[Uu][Rr][Ii][Ss]:[[:space:]]*//p' "$f" | tr ' \t' '\n\n'
  done
  for f in "$ETC_APT"/sources.list "$ETC_APT"/sources.list.d/*.list; do
    [ -f "$f" ] && awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ } print $i }' "$f"
  done
  return 0
}
first_uri() { # $1: "main" (no "security" in it) or "security"
  apt_uris | grep -E '^https?://' | if [ "$1" = security ]; then grep security; else grep -v security; fi | head -n 1
}
[ -n "$MIRROR" ] || MIRROR=$(first_uri main)
[ -n "$MIRROR" ] || die "no Debian mirror in $ETC_APT: pass --mirror URI"
[ -n "$SECURITY" ] || SECURITY=$(first_uri security)

tag_of() {
  case $1 in
    bookworm) echo debian:12 ;;
    bullseye) echo debian:11 ;;
    *) die "unknown suite $1 (bookworm, bullseye)" ;;
  esac
}

[ "$(id -u)" = 0 ] || die "needs root (debootstrap)"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sbbase.XXXXXX")
# debootstrap mounts /proc and /sys (and may bind the host's /dev) in the
# tree: unmount whatever is still there before anything is removed, and never
# let rm cross into another file system.
unmount_under() {
  awk -v d="$1/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r |
    while read -r m; do umount -l "$m" 2>/dev/null || true; done
}
cleanup() { unmount_under "$WORK"; rm -rf --one-file-system "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

make_tar() { # suite out.tar
  suite=$1 out=$2 root="$WORK/$1"
  command -v debootstrap >/dev/null || die "debootstrap is not installed"
  note "debootstrap $suite (minbase) from the configured mirror"
  debootstrap --variant=minbase "$suite" "$root" "$MIRROR" >"$WORK/$suite.log" 2>&1 ||
    { tail -n 20 "$WORK/$suite.log" >&2; die "debootstrap $suite failed"; }
  # The updates and security suites too: the surge-2025 image takes clang 19
  # from bullseye-security.
  {
    echo "deb $MIRROR $suite main"
    echo "deb $MIRROR $suite-updates main"
    [ -z "$SECURITY" ] || echo "deb $SECURITY $suite-security main"
  } >"$root/etc/apt/sources.list"
  chroot "$root" apt-get clean
  unmount_under "$root"
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
  tar --numeric-owner --one-file-system -C "$root" -cf "$out.part" .
  mv "$out.part" "$out"
  rm -rf --one-file-system "$root"
}

for suite in "$@"; do
  tag=$(tag_of "$suite")
  if [ -n "$CACHE" ]; then
    mkdir -p "$CACHE"
    tarball="$CACHE/$suite.tar"
  else
    tarball="$WORK/$suite.tar"
  fi
  if [ -s "$tarball" ]; then note "$suite: cached $tarball"; else make_tar "$suite" "$tarball"; fi
  # An image already imported from this tarball (created after it) is kept:
  # a new import gets a new id, which voids the build cache of every layer
  # built on it.
  created=$("${DOCKER:-docker}" image inspect -f '{{.Created}}' "$tag" 2>/dev/null || true)
  if [ "$IMPORT" = 1 ] && [ -n "$created" ] &&
     [ "$(date -d "$created" +%s 2>/dev/null || echo 0)" -gt "$(stat -c %Y "$tarball")" ]; then
    note "$suite: $tag is newer than $tarball: kept"
  elif [ "$IMPORT" = 1 ]; then
    "${DOCKER:-docker}" import \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["bash"]' "$tarball" "$tag" >/dev/null
    note "$suite: imported as $tag"
  fi
done
