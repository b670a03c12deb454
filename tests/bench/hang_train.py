"""Hangs the source of a training run: waits until the mount's hinted epoch reaches
EPOCH, then AFTER seconds more, stops the source process (SIGSTOP: its connections stay open and
nothing answers) for SECONDS, continues it, and prints one JSON line: when the hang began and ended
(seconds since this script started) and the mount's substitution counters at those moments.
With --drop, the kernel's page cache is dropped when the hang begins, so that the files a small
dataset left in memory are read from the mount again, as an ImageNet-sized set's would be.

Usage: /usr/bin/python3 hang_train.py MOUNT PID [--epoch 2] [--after 2] [--seconds 30] [--drop]
"""
import argparse
import json
import os
import signal
import time


def stats(mount):
    with open(os.path.join(mount, ".hintfs", "stats")) as f:
        return json.load(f)


def substitution(s):
    sub = s.get("substitution", {})
    out = {k: sub.get(k) for k in ("fetches_past_deadline", "not_substituted")}
    out["substitutions"] = s.get("substitutions")
    out["open_misses"] = s.get("open_misses")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mount")
    ap.add_argument("pid", type=int)
    ap.add_argument("--epoch", type=int, default=2)
    ap.add_argument("--after", type=float, default=2.0)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--drop", action="store_true")
    a = ap.parse_args()
    t0 = time.time()
    while True:
        try:
            if stats(a.mount)["hints"]["epoch"] >= a.epoch:
                break
        except (OSError, ValueError, KeyError):
            pass  # the mount or its dataset declaration is not there yet
        time.sleep(0.1)
    time.sleep(a.after)
    before = substitution(stats(a.mount))
    os.kill(a.pid, signal.SIGSTOP)
    began = time.time() - t0
    try:
        if a.drop:
            os.system("sync; echo 3 >/proc/sys/vm/drop_caches")
        time.sleep(a.seconds)
        during = substitution(stats(a.mount))  # the stats file answers while the source hangs
    finally:
        os.kill(a.pid, signal.SIGCONT)
    ended = time.time() - t0
    print(json.dumps({"hang_began_s": round(began, 2), "hang_ended_s": round(ended, 2),
                      "substitution_before": before, "substitution_at_end": during}))


if __name__ == "__main__":
    main()
