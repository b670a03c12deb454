#!/bin/bash
# hintfs in one container, a PyTorch trainer in another, as a Kubernetes DaemonSet or sidecar runs
# them: the hintfs container mounts into a volume with shared propagation, the trainer sees it
# through an rslave bind, both with the host's pid namespace (`shared`, hostPID) or each its own
# (`separate`), and the hintfs container is restarted between the trainer's two epochs.
#
#   mount-scripts/container/two-containers.sh [shared|separate|both]     (as root; default both)
#
# Builds (once) the base from Debian's mirror, the hintfs image (Containerfile) and a trainer
# image (python3-torch from Debian). Prints the trainer's JSON lines and PASS or FAIL.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
modes=${1:-both}
[[ $modes == both ]] && modes="shared separate"
P=(podman --runtime runc --cgroup-manager=cgroupfs)
run=(--ulimit nofile=20000:20000 --ulimit nproc=1024:1024)
base=localhost/hintfs-base:bookworm
"$here/debian-base.sh" "$base"
[[ -f $root/fs/target/hintfs.jar ]] || (cd "$root" && mvn -B -q -DskipTests package)
"${P[@]}" build -q "${run[@]}" --build-arg BASE=$base -t localhost/hintfs:dev -f "$root/Containerfile" "$root" >/dev/null
"${P[@]}" image exists localhost/hintfs-trainer:dev ||
  "${P[@]}" build -q "${run[@]}" --build-arg BASE=$base -t localhost/hintfs-trainer:dev \
    -f "$here/Containerfile.trainer" "$here" >/dev/null

w=$(mktemp -d /tmp/hintfs-2c.XXXXXX)
cleanup() {
  "${P[@]}" rm -f -t 5 hintfs-2c trainer-2c >/dev/null 2>&1 || true
  umount -l "$w/mnt/ds" 2>/dev/null || true
  umount -l "$w/mnt" 2>/dev/null || true
  rm -rf "$w"
}
trap cleanup EXIT
# 1,200 files of 1-3 KB in 4 classes (recognition looks within the first quarter of a dataset): the reference copy and the source.
python3 - "$w/data" <<'PY'
import os, random, sys
r = random.Random(62)
for i in range(1200):
    d = os.path.join(sys.argv[1], "class%d" % (i % 4))
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "img%04d.jpg" % i), "wb").write(r.randbytes(1000 + r.randrange(2000)))
PY
mkdir -p "$w/mnt" "$w/cache" "$w/work"
# The volume: a bind of itself made rshared, as a kubelet's Bidirectional volume is.
mount --bind "$w/mnt" "$w/mnt" && mount --make-rshared "$w/mnt"
mkdir -p "$w/mnt/ds"
fail=0
for mode in $modes; do
  pid=(); [[ $mode == shared ]] && pid=(--pid=host)
  rm -f "$w/work/"*
  "${P[@]}" run -d --name hintfs-2c "${run[@]}" "${pid[@]}" --device /dev/fuse --cap-add SYS_ADMIN \
    --security-opt label=disable -v "$w/mnt:/mnt/hintfs:rshared" -v "$w/data:/data:ro" \
    -v "$w/cache:/cache" localhost/hintfs:dev mount --foreground /data /mnt/hintfs/ds \
    --cache-dir /cache -o allow_other >/dev/null
  "${P[@]}" run -d --name trainer-2c "${run[@]}" "${pid[@]}" --security-opt label=disable \
    -v "$w/mnt:/mnt/hintfs:rslave" -v "$w/data:/ref:ro" -v "$w/work:/work" \
    -v "$here/trainer_check.py:/trainer_check.py:ro" localhost/hintfs-trainer:dev \
    python3 /trainer_check.py "$mode" >/dev/null
  for _ in $(seq 600); do [[ -e $w/work/epoch1-done ]] && break; sleep 0.5
    "${P[@]}" container exists trainer-2c || break; done
  # SIGTERM: the daemon unmounts and the container exits.
  t0=$SECONDS
  "${P[@]}" stop -t 30 hintfs-2c >/dev/null
  stopped=$(( SECONDS - t0 ))
  code=$("${P[@]}" inspect -f '{{.State.ExitCode}}' hintfs-2c)
  if grep -q " $w/mnt/ds " /proc/self/mountinfo; then left=yes; else left=no; fi
  echo "$mode: hintfs container stopped by SIGTERM in ${stopped} s, exit code $code, mount left behind: $left"
  "${P[@]}" start hintfs-2c >/dev/null
  touch "$w/work/go2"
  rc=$("${P[@]}" wait trainer-2c)
  "${P[@]}" logs trainer-2c
  "${P[@]}" logs hintfs-2c 2>&1 | grep -iE "error|exception" | head -5 || true
  out=$("${P[@]}" logs trainer-2c 2>&1)
  ok=1
  [[ $rc == 0 && $left == no && $code == 0 ]] || ok=0
  python3 - "$mode" "$out" <<'PY' || ok=0
import json, sys
mode, lines = sys.argv[1], [json.loads(l) for l in sys.argv[2].splitlines() if l.startswith("{")]
assert len(lines) == 2, lines
e1, e2 = lines
assert e1["wrong"] == 0 and e2["wrong"] == 0 and e1["read"] == e2["read"] == 1200, lines
if mode == "shared":
    # No hint: the order is recognised (a RandomSampler seeded 1234), by ancestry across pids of
    # the host's namespace. Checked in the first epoch; the restarted daemon's search is reported.
    for e in lines:
        d = [s["detection"] for s in e["streams"] if s.get("detection")]
        print("epoch %d: recognised: %s" % (e["epoch"], [x.get("found") and "seed %s %s/%s" % (
            x["generator_seed"], x["matched"], x["sampler"]) for x in d]))
    assert any(s.get("detection") and s["detection"].get("found") for s in e1["streams"]), e1
else:
    # Own pid namespaces: the job/rank-named hints (an explicit order) are applied.
    for e in lines:
        assert any(s["job"] == "train" and s["prediction"] == "order" for s in e["streams"]), e
print(mode, "ok: both epochs, every byte right, the second through the restarted container's mount")
PY
  ((ok)) || fail=1
  echo "$mode: $([[ $ok == 1 ]] && echo PASS || echo FAIL)"
  "${P[@]}" rm -f -t 5 hintfs-2c trainer-2c >/dev/null
  umount -l "$w/mnt/ds" 2>/dev/null || true
done
exit $fail
