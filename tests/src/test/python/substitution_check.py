"""Read a hintfs mount through a DataLoader with substitution on, checking every byte string.

Usage: /usr/bin/python3 substitution_check.py MOUNT SOURCE EPOCHS [--rules "max 0.2 reuse"]
       [--losses]
The ImageFolder root is MOUNT/train (SOURCE/train on the source). Every sample the DataLoader
delivers must be the bytes of a real file of the requested sample's class, and PIL must decode it.
With --losses every batch sends a (random) loss per sample, so importance is known. Prints one
JSON line: reads; per epoch the substituted reads (bytes of another file), the distinct files
served, and the repeats (a file served as a substitute more than once in the epoch); the least
share of the dataset served in two consecutive epochs; and the mount's substitution stats.
"""
import argparse
import collections
import hashlib
import io
import json
import os
import random
import sys

from PIL import Image
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "mount-scripts"))
from hintfs_hints import Hints, HintSampler  # noqa: E402


def raw(path):
    with open(path, "rb") as f:
        return f.read()


def keep(batch):
    return batch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mount")
    ap.add_argument("source")
    ap.add_argument("epochs", type=int)
    ap.add_argument("--rules", default="", help="options after 'substitution on'")
    ap.add_argument("--losses", action="store_true")
    args = ap.parse_args()
    src = ImageFolder(os.path.join(args.source, "train"), loader=raw)
    index_of = {hashlib.sha256(b).hexdigest(): i for i, (b, _) in enumerate(src)}
    assert len(index_of) == len(src), "the check needs every file's bytes to differ"
    class_of = [t for _, t in src.samples]
    ds = ImageFolder(os.path.join(args.mount, "train"), loader=raw)
    hints = Hints(args.mount, dataset="train")
    hints.policy("impact")
    hints.send(("substitution on " + args.rules).strip())
    # No order hint: this check needs misses to substitute, not a prefetcher that avoids them.
    sampler = HintSampler(hints, len(ds), seed=1, send_order=False)
    loader = DataLoader(ds, batch_size=16, sampler=sampler, num_workers=4, collate_fn=keep)
    rnd = random.Random(3)
    reads = 0
    epochs = []
    served_sets = []
    for epoch in range(args.epochs):
        hints.epoch(epoch)
        as_sub = collections.Counter()
        served = set()
        substituted = 0
        for b, batch in enumerate(loader):
            wanted = sampler.batch(b, 16)
            for i, (data, target) in zip(wanted, batch):
                got = index_of.get(hashlib.sha256(data).hexdigest())
                assert got is not None, "sample #%d: bytes of no file in the dataset" % i
                assert class_of[got] == target, "sample #%d (class %d) got a class %d file" % (
                    i, target, class_of[got])
                Image.open(io.BytesIO(data)).load()  # complete and decodable
                reads += 1
                served.add(got)
                if got != i:
                    substituted += 1
                    as_sub[got] += 1
            if args.losses:
                hints.losses(wanted, [rnd.random() for _ in wanted])
        epochs.append({"substituted": substituted, "distinct": len(served),
                       "repeats": sum(c - 1 for c in as_sub.values() if c > 1)})
        served_sets.append(served)
    pairs = [len(a | b) / len(src) for a, b in zip(served_sets, served_sets[1:])]
    stats = hints.stats()
    print(json.dumps({"reads": reads, "dataset": len(src), "epochs": epochs,
                      "substituted": sum(e["substituted"] for e in epochs),
                      "repeats": sum(e["repeats"] for e in epochs),
                      "least_two_epoch_coverage": min(pairs) if pairs else None,
                      "stats_substitutions": stats["substitutions"],
                      "substitution": stats["substitution"], "policy": stats["policy"]}))


if __name__ == "__main__":
    main()
