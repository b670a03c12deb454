"""Compare torchvision's ImageFolder on a hintfs mount with the same tree on the source.

Usage: /usr/bin/python3 imagefolder_check.py MOUNT_ROOT SOURCE_ROOT
Asserts identical classes, samples (path order) and bytes, then iterates the mount with
DataLoader(num_workers=4, shuffle=True) and checks every sample arrived once with its label.
Prints one JSON line with the counts; exits non-zero on any difference.
"""
import collections
import hashlib
import json
import os
import sys

import torch
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def keep(batch):
    return batch


def main(mount_root, source_root):
    m = ImageFolder(mount_root, loader=digest)
    s = ImageFolder(source_root, loader=digest)
    assert m.classes == s.classes, (m.classes, s.classes)
    assert m.class_to_idx == s.class_to_idx
    rel_m = [(os.path.relpath(p, mount_root), t) for p, t in m.samples]
    rel_s = [(os.path.relpath(p, source_root), t) for p, t in s.samples]
    assert rel_m == rel_s, "sample lists differ:\n%s\n%s" % (rel_m, rel_s)
    for (pm, _), (ps, _) in zip(m.samples, s.samples):
        assert digest(pm) == digest(ps), pm

    torch.manual_seed(0)
    loader = DataLoader(m, batch_size=4, shuffle=True, num_workers=4, collate_fn=keep)
    seen = collections.Counter()
    for batch in loader:
        for d, target in batch:
            seen[(d, target)] += 1
    want = collections.Counter((digest(p), t) for p, t in s.samples)
    assert seen == want, "DataLoader over the mount returned other samples"
    print(json.dumps({"classes": m.classes, "samples": len(m.samples),
                      "loaded": sum(seen.values())}, ensure_ascii=True))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
