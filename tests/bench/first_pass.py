"""A trainer's first pass over a mount, as a user runs one (issue 39, warmup-bench.sh; run with the
system python3, which has torch and torchvision).

  first_pass.py ROOT T0   imports torch and torchvision, scans ROOT with ImageFolder, then reads
                          every sample once through a DataLoader (8 workers, batch 32, a seeded
                          shuffle: RandomSampler, seed 0), the raw bytes of each file (no decode).
                          T0: the time.time() the mount was started at. Prints JSON: seconds from
                          T0 to the import's end, the scan's end, the first 2,000 samples and the
                          pass's end; the pass's images/s.
"""

import json
import sys
import time
import warnings

import torch
import torchvision  # noqa: F401 (a trainer's start imports it)
from torch.utils.data import DataLoader, RandomSampler
from torchvision.datasets import ImageFolder

warnings.filterwarnings("ignore", message="This DataLoader will create")


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def collate(batch):
    return sum(len(b) for b, _ in batch)


def main():
    root, t0 = sys.argv[1], float(sys.argv[2])
    imported = time.time() - t0
    ds = ImageFolder(root, loader=read_bytes)
    scanned = time.time() - t0
    g = torch.Generator()
    g.manual_seed(0)
    loader = DataLoader(
        ds, batch_size=32, num_workers=8, sampler=RandomSampler(ds, generator=g), collate_fn=collate
    )
    p0 = time.time()
    n = 0
    first2k = None
    for b in loader:
        n += 32 if b else 0
        if first2k is None and n >= 2000:
            first2k = time.time() - t0
    end = time.time()
    print(
        json.dumps(
            {
                "import_s": round(imported, 2),
                "scan_s": round(scanned, 2),
                "first_2000_s": round(first2k, 2),
                "end_s": round(end - t0, 2),
                "pass_s": round(end - p0, 2),
                "images_per_s": round(len(ds) / (end - p0), 1),
                "files": len(ds),
            }
        )
    )


if __name__ == "__main__":
    main()
