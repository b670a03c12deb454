#!/bin/sh
# Builds a Debian bookworm base image from Debian's mirror (debootstrap + podman import), for
# machines that reach no container registry: `podman build --build-arg BASE=localhost/hintfs-base`.
# The root filesystem's tarball is kept (HINTFS_BASE_CACHE, default ~/.cache/hintfs/) and imported
# again on the next run: debootstrap runs once per machine.
#
#   mount-scripts/container/debian-base.sh [IMAGE]     (default localhost/hintfs-base:bookworm)
#
# Needs root (debootstrap), debootstrap and podman (or docker: HINTFS_ENGINE=docker).
set -eu
image=${1:-localhost/hintfs-base:bookworm}
engine=${HINTFS_ENGINE:-podman}
mirror=${HINTFS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${HINTFS_BASE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hintfs}
tarball=$cache/debian-bookworm-minbase.tar
set -- $engine
if [ "$engine" = podman ]; then
  set -- podman --runtime runc --cgroup-manager=cgroupfs
fi
if "$@" image exists "$image" 2>/dev/null; then
  echo "$image is there"
  exit 0
fi
if [ ! -s "$tarball" ]; then
  command -v debootstrap >/dev/null || { echo "debian-base.sh: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 1; }
  mkdir -p "$cache"
  root=$(mktemp -d "$cache/rootfs.XXXXXX")
  trap 'rm -rf "$root"' EXIT
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 \
    || { echo "debian-base.sh: debootstrap failed; see $cache/debootstrap.log" >&2; exit 1; }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" --numeric-owner -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
fi
"$@" import --change 'CMD ["/bin/bash"]' "$tarball" "$image" >/dev/null
echo "$image imported from $tarball"
