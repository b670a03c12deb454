"""A seeded DataLoader over an HDF5 file of fixed-size rows read through a hintfs mount.

usage: packed_loader.py make FILE N ROW        write N random rows of ROW bytes (contiguous)
       packed_loader.py read MOUNT FILE REF EPOCHS SEED hint|nohint
Each epoch: the page cache dropped (root), every row compared with REF's, and one JSON line
with the mount's counters over the epoch (packed_samples, packed_sample_hits, page_reads,
page_read_hits, source_bytes) and the rows that were wrong.
"""
import json
import os
import sys

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../../mount-scripts"))


class Rows(torch.utils.data.Dataset):
    def __init__(self, path):
        self.path, self.f = path, None
        with h5py.File(path, "r") as f:
            self.n = len(f["x"])

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.f is None:
            self.f = h5py.File(self.path, "r")  # once per worker: h5py handles do not fork
        return torch.from_numpy(self.f["x"][i]), i


def make(path, n, row):
    rng = np.random.default_rng(61)
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=rng.integers(0, 255, (n, row), dtype=np.uint8))


def read(mount, rel, ref_path, epochs, seed, hint):
    stats = lambda: json.load(open(os.path.join(mount, ".hintfs/stats")))
    ref = h5py.File(ref_path, "r")["x"]
    if hint:
        from hintfs_hints import Hints
        Hints(mount).packed_h5(os.path.join(mount, rel), "x", seed)
    loader = torch.utils.data.DataLoader(
        Rows(os.path.join(mount, rel)), batch_size=32, shuffle=True, num_workers=2,
        generator=torch.Generator().manual_seed(seed))
    keys = ["packed_samples", "packed_sample_hits", "page_reads", "page_read_hits",
            "source_bytes"]
    for e in range(epochs):
        with open("/proc/sys/vm/drop_caches", "w") as d:
            d.write("3\n")
        before = stats()
        wrong = 0
        for x, idx in loader:
            for k in range(len(idx)):
                if not np.array_equal(x[k].numpy(), ref[int(idx[k])]):
                    wrong += 1
        after = stats()
        out = {k: after[k] - before[k] for k in keys}
        out.update(epoch=e, wrong=wrong)
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        read(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]),
             sys.argv[7] == "hint")
