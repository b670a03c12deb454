"""Print torchvision ImageFolder's classes and samples for a root, as JSON.

Usage: /usr/bin/python3 imagefolder_samples.py ROOT
Output: {"classes": [...], "samples": [[relative path, class index], ...]}
"""
import json
import os
import sys

from torchvision.datasets import ImageFolder

root = sys.argv[1]
ds = ImageFolder(root, loader=lambda p: p)
print(json.dumps({"classes": ds.classes,
                  "samples": [[os.path.relpath(p, root), t] for p, t in ds.samples]}))
