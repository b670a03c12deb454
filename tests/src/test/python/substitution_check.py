"""Read a hintfs mount through a DataLoader with substitution on, checking every byte string.

Usage: /usr/bin/python3 substitution_check.py MOUNT SOURCE EPOCHS
The ImageFolder root is MOUNT/train (SOURCE/train on the source). Every sample the DataLoader
delivers must be the bytes of a real file of the requested sample's class, and PIL must decode it.
Prints one JSON line: reads, substituted reads (bytes of another file), repeats (a substitute
served twice in one epoch), and the mount's stats.
"""
import collections
import hashlib
import io
import json
import os
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


def main(mount, source, epochs):
    src = ImageFolder(os.path.join(source, "train"), loader=raw)
    class_of = {hashlib.sha256(b).hexdigest(): t for b, t in src}
    own = [hashlib.sha256(raw(p)).hexdigest() for p, _ in src.samples]
    ds = ImageFolder(os.path.join(mount, "train"), loader=raw)
    hints = Hints(mount, dataset="train")
    hints.policy("impact")
    hints.substitution(True)
    # No order hint: this check needs misses to substitute, not a prefetcher that avoids them.
    sampler = HintSampler(hints, len(ds), seed=1, send_order=False)
    loader = DataLoader(ds, batch_size=16, sampler=sampler, num_workers=4, collate_fn=keep)
    reads = substituted = repeats = 0
    for epoch in range(epochs):
        hints.epoch(epoch)
        served_as_sub = collections.Counter()
        for b, batch in enumerate(loader):
            for i, (data, target) in zip(sampler.batch(b, 16), batch):
                d = hashlib.sha256(data).hexdigest()
                assert d in class_of, "sample #%d: bytes of no file in the dataset" % i
                assert class_of[d] == target, "sample #%d (class %d) got a class %d file" % (
                    i, target, class_of[d])
                Image.open(io.BytesIO(data)).load()  # complete and decodable
                reads += 1
                if d != own[i]:
                    substituted += 1
                    served_as_sub[d] += 1
        repeats += sum(c - 1 for c in served_as_sub.values() if c > 1)
    stats = hints.stats()
    print(json.dumps({"reads": reads, "substituted": substituted, "repeats": repeats,
                      "stats_substitutions": stats["substitutions"], "hits": stats["hits"],
                      "misses": stats["misses"], "policy": stats["policy"]}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
