#!/usr/bin/env bash
# Installs what hintfs needs on Debian/Ubuntu and builds it. Idempotent: installs only what is
# missing. Used by quickstart.sh, test.sh and CI.
set -euo pipefail
# Debian's Maven 3.8 writes colour resets (ESC[0m) even with -B into a pipe or a file, and no
# jansi or style.color setting stops it: when the output is not a terminal, they are filtered out.
mvn_quiet() {
  if [[ -t 2 ]]; then
    mvn "$@"
  else
    mvn "$@" 2>&1 | sed -u $'s/\e\\[[0-9;]*m//g' >&2
  fi
}
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# fuse3: /dev/fuse tooling and fusermount; libfuse2: what jnr-fuse loads.
# python3-torch/torchvision/pil: the PyTorch client the demo and the tests read through.
# e2fsprogs: mkfs.ext4 for the full-disk test on a loop device.
# python3-numpy, python3-h5py: the packed-file tests (numpy.memmap, an HDF5 DataLoader).
# python3-pytest, python3-venv and the *-whl packages: the Python helper's tests (pytest against
# a real mount, and a pip install into a fresh venv with no network).
for p in fuse3 libfuse2 python3-torch python3-torchvision python3-pil maven openjdk-17-jdk-headless \
  python3-pytest python3-venv python3-pip-whl python3-setuptools-whl python3-wheel-whl e2fsprogs \
  python3-numpy python3-h5py; do
  have_pkg "$p" || need+=("$p")
done
# A JDK and Maven that were installed some other way (Temurin, SDKMAN) count too.
if command -v javac >/dev/null && javac -version 2>&1 | grep -Eq 'javac (1[7-9]|2[0-9])'; then
  need=("${need[@]/openjdk-17-jdk-headless/}")
fi
if command -v mvn >/dev/null; then need=("${need[@]/maven/}"); fi
pkgs=$(printf '%s ' "${need[@]}" | xargs)
if [[ -n $pkgs ]]; then
  echo "setup: installing $pkgs" >&2
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
fi
if [[ ! -e /dev/fuse ]]; then
  echo "setup: /dev/fuse is missing: modprobe fuse, or start the container with --device /dev/fuse" >&2
  exit 1
fi
if [[ ${1:-} != --no-build ]]; then
  echo "setup: building (mvn package)" >&2
  (cd "$root" && mvn_quiet -B -q -DskipTests package)
  # The AOT cache: a ~20 s training run through /dev/fuse, after which every mount's daemon starts
  # warm (docs/CONFIGURATION.md). Mounts work without it.
  echo "setup: building the AOT cache (hintfs aot-cache)" >&2
  "$root/mount-scripts/hintfs" aot-cache >&2 || echo "setup: going on without the AOT cache" >&2
fi
