"""Epoch throughput of a DataLoader with DistributedSampler over a hintfs mount.

Usage: /usr/bin/python3 seed_epoch.py MOUNT SEED HINT EPOCHS
HINT 1 sends "seed SEED epoch E" before each epoch; 0 sends nothing. The page cache is dropped
before every epoch (root), as for a dataset larger than RAM. Prints images/s per epoch.
"""
import os
import sys
import time

from torch.utils.data import DataLoader, DistributedSampler
from torchvision.datasets import ImageFolder

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "mount-scripts"))
from hintfs_hints import Hints  # noqa: E402


def raw(path):
    with open(path, "rb") as f:
        return len(f.read())


mount, seed, hint, epochs = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", int(sys.argv[4])
ds = ImageFolder(mount, loader=raw)
hints = Hints(mount, dataset=".") if hint else None  # s3fs and rclone mounts have no control file
sampler = DistributedSampler(ds, num_replicas=1, rank=0, shuffle=True, seed=seed)
loader = DataLoader(ds, batch_size=32, sampler=sampler, num_workers=4, collate_fn=len)
rates = []
for epoch in range(epochs):
    # Drop the page cache (root): a dataset larger than RAM never finds last epoch's pages there.
    os.system("sync; echo 3 > /proc/sys/vm/drop_caches")
    sampler.set_epoch(epoch)
    if hint:
        hints.send("seed %d epoch %d" % (seed, epoch))
    t0 = time.time()
    n = sum(loader)
    rates.append(n / (time.time() - t0))
print(" ".join("%.0f" % r for r in rates))
