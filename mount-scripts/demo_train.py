"""Train a small CNN on an ImageFolder served by a hintfs mount. Unmodified torchvision code.

Usage: /usr/bin/python3 demo_train.py TRAIN_DIR TEST_DIR [--epochs N]
"""
import argparse
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
    args = ap.parse_args()
    torch.manual_seed(0)
    tf = transforms.Compose([transforms.Grayscale(), transforms.ToTensor()])
    train = datasets.ImageFolder(args.train, transform=tf)
    test = datasets.ImageFolder(args.test, transform=tf)
    loader = DataLoader(train, batch_size=64, shuffle=True, num_workers=2)
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    print("train: %d images in %d classes, read through %s" % (len(train), len(train.classes), args.train))
    for epoch in range(args.epochs):
        t0, total, n = time.time(), 0.0, 0
        for x, y in loader:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item() * len(y)
            n += len(y)
        print("epoch %d: loss %.3f, %.0f images/s" % (epoch, total / n, n / (time.time() - t0)))
    correct = 0
    with torch.no_grad():
        for x, y in DataLoader(test, batch_size=256, num_workers=2):
            correct += (model(x).argmax(1) == y).sum().item()
    print("test accuracy: %.1f%% on %d images" % (100.0 * correct / len(test), len(test)))


if __name__ == "__main__":
    main()
