package org.hintfs.fs.store;

import org.hintfs.fs.catalog.Catalog;

/**
 * How files are cut into cache units: a file up to the whole-object limit is one unit (block 0, its
 * whole length); a larger file is cut into fixed blocks, each a unit of its own.
 */
final class Units {
  /**
   * The only block size before {@code --block-size} (4 MiB): its keys are never salted, so the
   * caches and builds of before keep theirs ({@link CacheKey}).
   */
  static final int FIRST_BLOCK_SIZE = 4 << 20;

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

  /** The size that salts the keys of a blocked file's blocks after block 0 ({@link CacheKey}). */
  private int keySalt(int block) {
    return block == 0 || blockSize == FIRST_BLOCK_SIZE ? 0 : blockSize;
  }

  /** The disk key of block {@code block} of the file at {@code path} (a blocked one if past 0). */
  CacheKey key(String path, int block) {
    return CacheKey.of(path, block, keySalt(block));
  }

  /**
   * Whether a stored entry of blocked file {@code id} was cut in this block size: its length is
   * this size's for its block, and past block 0 its key is this size's. (Block 0's key is the same
   * in every size, and its length differs in any two sizes that cut the file at all.)
   */
  boolean cutAsHere(int id, LmdbStore.Meta m) {
    return m.charge() == StoredValue.charge(length(id, m.block()))
        && (m.block() == 0
            || java.util.Arrays.equals(m.key(), key(catalog.path(id), m.block()).key()));
  }

  /** Block {@code block} of file {@code id} as a unit, keyed for this block size. */
  Unit unit(int id, int block, boolean forPeer) {
    return new Unit(catalog, id, block, length(id, block), forPeer, keySalt(block));
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
