"""Generate the embedded demo dataset: hand-drawn-looking digits as an ImageFolder tree.

Usage: /usr/bin/python3 make_demo_dataset.py OUT_DIR [--per-class N]
Writes OUT_DIR/train/<digit>/<n>.png and OUT_DIR/test/<digit>/<n>.png: 10 classes, 28x28 grey
images of the digit drawn at a random place, size and slant with noise. Deterministic (seeded).
"""
import argparse
import os
import random

from PIL import Image, ImageDraw, ImageFilter, ImageFont


def draw_digit(digit, rnd):
    img = Image.new("L", (28, 28), 0)
    d = ImageDraw.Draw(img)
    font = ImageFont.load_default()
    glyph = Image.new("L", (10, 14), 0)
    ImageDraw.Draw(glyph).text((2, 1), str(digit), fill=255, font=font)
    scale = rnd.uniform(1.4, 2.0)
    glyph = glyph.resize((int(10 * scale), int(14 * scale)), Image.BILINEAR)
    glyph = glyph.rotate(rnd.uniform(-15, 15), resample=Image.BILINEAR, expand=True)
    x = rnd.randint(0, max(0, 28 - glyph.width))
    y = rnd.randint(0, max(0, 28 - glyph.height))
    img.paste(glyph, (x, y), glyph)
    for _ in range(rnd.randint(5, 25)):
        d.point((rnd.randrange(28), rnd.randrange(28)), fill=rnd.randint(60, 200))
    return img.filter(ImageFilter.GaussianBlur(rnd.uniform(0.0, 0.6)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--per-class", type=int, default=120)
    args = ap.parse_args()
    rnd = random.Random(1234)
    for split, n in (("train", args.per_class), ("test", max(10, args.per_class // 4))):
        for digit in range(10):
            cls = os.path.join(args.out, split, str(digit))
            os.makedirs(cls, exist_ok=True)
            for i in range(n):
                draw_digit(digit, rnd).save(os.path.join(cls, "%04d.png" % i))
    print("demo dataset: %s (10 classes, %d train and %d test images per class)"
          % (args.out, args.per_class, max(10, args.per_class // 4)))


if __name__ == "__main__":
    main()
