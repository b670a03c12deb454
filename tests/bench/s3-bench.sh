#!/usr/bin/env bash
# Issue 4 benchmark: hintfs vs s3fs vs rclone mount over a real S3 server (S3Proxy 4.1.0 on
# loopback, filesystem backend), directly and behind a TCP proxy that adds 10 ms to every request
# (tc netem is not in this kernel). Dataset: 2,000 files of ~110 KB in 20 classes (220 MB).
# For each filesystem, endpoint and reader count (1, 8): a fresh mount with an empty cache, a first
# pass (every file a miss) and a second pass (page cache dropped before each pass, so the second
# pass is served by each filesystem's own disk cache). s3fs runs with its disk cache (use_cache),
# rclone with --vfs-cache-mode full. Prints files/s and the ratios hintfs/s3fs, hintfs/rclone.
# Usage: tests/bench/s3-bench.sh [WORKDIR] (root; after mvn package; needs s3fs and rclone)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-s3bench}
make_dataset "$work/src"
compile_reader "$work"
mkdir -p "$work/mnt" "$work/s3data"
unset AWS_CA_BUNDLE # rclone fails with it set in this environment
key=bench-key secret=bench-secret-0123456789
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/s3proxy.conf" <<CONF
s3proxy.endpoint=http://127.0.0.1:$port
s3proxy.authorization=aws-v2-or-v4
s3proxy.identity=$key
s3proxy.credential=$secret
jclouds.provider=filesystem-nio2
jclouds.filesystem.basedir=$work/s3data
CONF
java -Xmx1g -jar "$root/tests/target/s3proxy.jar" --properties "$work/s3proxy.conf" >"$work/s3proxy.log" 2>&1 &
s3pid=$!
coproc PROXY { exec java -cp "$root/tests/target/test-classes" org.hintfs.it.DelayProxy "$port" 10; }
read -r pport <&"${PROXY[0]}"
cleanup() {
  for fs in "$work/mnt"; do
    if grep -q " $fs " /proc/self/mountinfo; then umount "$fs" || umount -l "$fs"; fi
  done
  kill "$s3pid" "$PROXY_PID" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
export RCLONE_CONFIG_S3P_TYPE=s3 RCLONE_CONFIG_S3P_PROVIDER=Other RCLONE_CONFIG_S3P_ACCESS_KEY_ID=$key \
  RCLONE_CONFIG_S3P_SECRET_ACCESS_KEY=$secret RCLONE_CONFIG_S3P_ENDPOINT=http://127.0.0.1:$port \
  RCLONE_CONFIG_S3P_FORCE_PATH_STYLE=true
export RCLONE_CONFIG_S3X_TYPE=s3 RCLONE_CONFIG_S3X_PROVIDER=Other RCLONE_CONFIG_S3X_ACCESS_KEY_ID=$key \
  RCLONE_CONFIG_S3X_SECRET_ACCESS_KEY=$secret RCLONE_CONFIG_S3X_ENDPOINT=http://127.0.0.1:$pport \
  RCLONE_CONFIG_S3X_FORCE_PATH_STYLE=true
rclone mkdir s3p:bench
rclone copy --transfers 16 "$work/src" s3p:bench/ds
echo "$key:$secret" >"$work/s3fs.passwd" && chmod 600 "$work/s3fs.passwd"

mount_fs() { # FS ENDPOINT_PORT REMOTE
  rm -rf "$work/cache"
  case $1 in
    hintfs) AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret "$hintfs" mount s3://bench/ds \
      "$work/mnt" --endpoint "http://127.0.0.1:$2" --cache-dir "$work/cache" --ram-cache 0 >/dev/null ;;
    s3fs) s3fs bench:/ds "$work/mnt" -o "passwd_file=$work/s3fs.passwd,url=http://127.0.0.1:$2" \
      -o "use_path_request_style,ro,use_cache=$work/cache,parallel_count=8" ;;
    rclone) rclone mount "$3:bench/ds" "$work/mnt" --read-only --vfs-cache-mode full \
      --cache-dir "$work/cache" --daemon ;;
  esac
  for _ in $(seq 100); do [[ -d $work/mnt/n00000000 ]] && return 0; sleep 0.1; done
  echo "mount of $1 did not appear" >&2; return 1
}
unmount_fs() {
  if [[ $1 == hintfs ]]; then "$hintfs" unmount "$work/mnt"; else umount "$work/mnt"; fi
}

declare -A r
for ep in direct proxy; do
  if [[ $ep == direct ]]; then p=$port remote=s3p; else p=$pport remote=s3x; fi
  for fs in hintfs s3fs rclone; do
    for t in 1 8; do
      mount_fs $fs $p $remote
      drop; r[$ep,$fs,$t,1]=$(run "$work/mnt" $t 1)
      drop; r[$ep,$fs,$t,2]=$(run "$work/mnt" $t 2)
      unmount_fs $fs
      echo "$ep $fs $t readers: ${r[$ep,$fs,$t,1]} then ${r[$ep,$fs,$t,2]} files/s" >&2
    done
  done
done
echo "| endpoint | readers | pass | hintfs files/s | s3fs | rclone | hintfs/s3fs | hintfs/rclone |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for ep in direct proxy; do for t in 1 8; do for pass in 1 2; do
  h=${r[$ep,hintfs,$t,$pass]} s=${r[$ep,s3fs,$t,$pass]} c=${r[$ep,rclone,$t,$pass]}
  printf '| %s | %s | %s | %.0f | %.0f | %.0f | %.1fx | %.1fx |\n' "$ep" "$t" \
    "$([[ $pass == 1 ]] && echo first || echo second)" "$h" "$s" "$c" "$(ratio "$h" "$s")" "$(ratio "$h" "$c")"
done; done; done
