"""The trainer container's side of two-containers.sh: epochs read through the hintfs container's
mount (an rslave bind), every byte checked against the reference copy in /ref.

  python3 trainer_check.py MODE        MODE: shared (host pid namespace: no hint, order recognised)
                                             separate (own pid namespace: job/rank-named hints)
Epoch 1, then waits for /work/go2 (the hintfs container restarted meanwhile), then epoch 2.
Prints one JSON line per epoch.
"""
import json
import os
import sys
import time

import torch
from torchvision import datasets

mode = sys.argv[1]
root = "/mnt/hintfs/ds"
ref = "/ref"


def wait_for(path, seconds):
    end = time.time() + seconds
    while not os.path.exists(path):
        if time.time() > end:
            sys.exit(f"trainer: {path} did not appear in {seconds} s")
        time.sleep(0.2)


def epoch(n):
    ds = datasets.ImageFolder(root, loader=lambda p: open(p, "rb").read())
    # A seed the mount's search tries (HINTS.md, "No hint at all"); each epoch a fresh DataLoader
    # with a fresh generator, as a restarted script would have (epoch 0's order both times).
    g = torch.Generator().manual_seed(1234)
    if mode == "separate":
        # No shared pids: hintfs cannot tell whose opens these are, so the hints name the stream.
        order = torch.randperm(len(ds), generator=torch.Generator().manual_seed(99 + n)).tolist()
        with open(root + "/.hintfs/control", "w") as c:
            c.write("job train rank 0 dataset .\n")
            c.write("job train rank 0 order " + " ".join("#%d" % i for i in order) + "\n")
        loader = torch.utils.data.DataLoader(
            ds, batch_size=16, sampler=order, num_workers=2, collate_fn=lambda b: b)
    else:
        loader = torch.utils.data.DataLoader(
            ds, batch_size=16, shuffle=True, generator=g, num_workers=2, collate_fn=lambda b: b)
    wrong = read = 0
    t0 = time.time()
    for batch in loader:
        for data, label in batch:
            read += 1
    # the loader checked nothing: compare every file's bytes now, through the mount
    for path, _ in ds.samples:
        rel = os.path.relpath(path, root)
        if open(path, "rb").read() != open(os.path.join(ref, rel), "rb").read():
            wrong += 1
    stats = json.load(open(root + "/.hintfs/stats"))
    streams = [
        {k: s.get(k) for k in ("job", "rank", "prediction", "position", "length", "detection")}
        for s in stats.get("streams", [])
    ]
    print(json.dumps({"epoch": n, "mode": mode, "read": read, "wrong": wrong,
                      "seconds": round(time.time() - t0, 2), "daemon_pid": stats["pid"],
                      "streams": streams, "prefetched": stats["prediction"]["prefetched"]}),
          flush=True)


wait_for(root + "/.hintfs/stats", 120)
epoch(1)
open("/work/epoch1-done", "w").close()
wait_for("/work/go2", 300)
# The old mount's files are gone with its daemon; the new mount is seen through the rslave bind.
wait_for(root + "/.hintfs/stats", 120)
epoch(2)
