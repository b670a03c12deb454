package org.hintfs.fs.store;

import org.hintfs.fs.catalog.Catalog;

/**
 * How files are cut into cache units: a file up to the whole-object limit is one unit (block 0, its
 * whole length); a larger file is cut into fixed blocks, each a unit of its own.
 */
final class Units {
  private final Catalog catalog;
  private final int wholeObjectLimit;
  private final int blockSize;

  Units(Catalog catalog, int wholeObjectLimit, int blockSize) {
    this.catalog = catalog;
    this.wholeObjectLimit = wholeObjectLimit;
    this.blockSize = blockSize;
  }

  /** Whether a file is cached in blocks (larger than the whole-object limit). */
  boolean isBlocked(int id) {
    return catalog.size(id) > wholeObjectLimit;
  }

  int blockSize() {
    return blockSize;
  }

  int blockCount(int id) {
    if (!isBlocked(id)) {
      return 1;
    }
    return (int) ((catalog.size(id) + blockSize - 1) / blockSize);
  }

  int length(int id, int block) {
    if (!isBlocked(id)) {
      return (int) catalog.size(id);
    }
    long start = (long) block * blockSize;
    return (int) Math.min(blockSize, catalog.size(id) - start);
  }

  /**
   * What the whole dataset would occupy in the cache, in LMDB pages: the base of a capacity given
   * as a share ({@code 100%} must hold every file, page rounding included).
   */
  long footprint() {
    long sum = 0;
    for (int id = 0; id < catalog.entryCount(); id++) {
      if (catalog.isDirectory(id)) {
        continue;
      }
      long size = catalog.size(id);
      if (size <= wholeObjectLimit) {
        sum += StoredValue.charge((int) size);
      } else {
        long full = size / blockSize;
        sum += full * StoredValue.charge(blockSize);
        if (size % blockSize != 0) {
          sum += StoredValue.charge((int) (size % blockSize));
        }
      }
    }
    return sum;
  }
}
