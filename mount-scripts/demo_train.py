"""Train a small CNN on an ImageFolder served by a hintfs mount. Unmodified torchvision code.

Usage: /usr/bin/python3 demo_train.py TRAIN_DIR TEST_DIR [--epochs N] [--seed-hint] [--json]

--seed-hint: shuffle with a seeded DistributedSampler and tell the mount its seed (four lines of
hintfs_hints), so the mount prefetches each epoch's files ahead of the loader. --json: one last
line with each epoch's seconds and the mount's hit ratio in it.
"""
import argparse
import json
import os
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--seed-hint", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    mount = os.path.dirname(os.path.abspath(args.train))
    torch.manual_seed(0)
    tf = transforms.Compose([transforms.Grayscale(), transforms.ToTensor()])
    train = datasets.ImageFolder(args.train, transform=tf)
    test = datasets.ImageFolder(args.test, transform=tf)
    sampler = None
    if args.seed_hint:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from torch.utils.data import DistributedSampler
        from hintfs_hints import Hints
        hints = Hints(mount, dataset=os.path.basename(os.path.abspath(args.train)))
        sampler = hints.follow(DistributedSampler(train, num_replicas=1, rank=0, seed=0))
    loader = DataLoader(train, batch_size=64, shuffle=sampler is None, sampler=sampler,
                        num_workers=2)
    epochs = []
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    print("train: %d images in %d classes, read through %s" % (len(train), len(train.classes), args.train))
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        before = mount_opens(mount)
        t0, total, n = time.time(), 0.0, 0
        for x, y in loader:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item() * len(y)
            n += len(y)
        seconds = time.time() - t0
        after = mount_opens(mount)
        hits, opens = after[0] - before[0], after[0] + after[1] - before[0] - before[1]
        epochs.append({"seconds": seconds, "hit_ratio": hits / opens if opens else 0.0})
        print("epoch %d: loss %.3f, %.0f images/s" % (epoch, total / n, n / seconds))
    correct = 0
    with torch.no_grad():
        for x, y in DataLoader(test, batch_size=256, num_workers=2):
            correct += (model(x).argmax(1) == y).sum().item()
    print("test accuracy: %.1f%% on %d images" % (100.0 * correct / len(test), len(test)))
    if args.json:
        print(json.dumps({"epochs": epochs, "accuracy": correct / len(test)}))


def mount_opens(mount):
    """The mount's open hits and misses so far ((0, 0) when TRAIN_DIR is not in a hintfs mount)."""
    try:
        with open(os.path.join(mount, ".hintfs", "stats")) as f:
            s = json.load(f)
        return s["open_hits"], s["open_misses"]
    except OSError:
        return 0, 0


if __name__ == "__main__":
    main()
