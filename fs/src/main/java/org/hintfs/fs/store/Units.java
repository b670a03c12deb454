package org.hintfs.fs.store;

import org.hintfs.fs.catalog.Catalog;

/**
 * How files are cut into cache units: a file up to the whole-object limit is one unit (block 0, its
 * whole length); a larger file is cut into fixed blocks, each a unit of its own, and also into
 * pages of {@link #PAGE_SIZE}, the units of its random readers ({@code fs.serve.ReadPattern}).
 *
 * <p>Slots: a unit of a file in blocks is named by a slot, its blocks first ({@code 0 ..
 * blockCount-1}), then its pages ({@code blockCount + page}). The slot is what the RAM tier's key,
 * the index's bit set of stored units and a stored entry's meta carry as its "block". A page's disk
 * key is salted with the page size and the block size ({@link CacheKey#ofPage}): a mount of another
 * block size numbers the slots otherwise, and finds none of these pages under its own keys.
 *
 * <p>One copy of each byte: a page is not stored while its block is, and a block once stored drops
 * the pages inside it ({@link CacheIndex}).
 */
final class Units {
  /**
   * The only block size before {@code --block-size} (4 MiB): its keys are never salted, so the
   * caches and builds of before keep theirs ({@link CacheKey}).
   */
  static final int FIRST_BLOCK_SIZE = 4 << 20;

  /**
   * A random reader's unit: 64 KiB. A miss fetches the pages its READ covers (more when the
   * reader's runs are longer, {@code ReadPattern}) in one ranged GET, so a 128 KiB read at a random
   * offset fetches 128-192 KiB, not a whole 8 MiB block (issue 61: 11x the bytes read, 32x with a
   * cache smaller than the file). Smaller pages fetch closer to a 4 KiB mmap fault but make each
   * 128 KiB READ a read of more entries (and LMDB rounds each up to its 4 KiB pages: 6% here);
   * larger ones fetch more than a 96 KiB sample. Every block size (1-16 MiB) is a multiple.
   */
  static final int PAGE_SIZE = 64 << 10;

  private final Catalog catalog;
  private final int wholeObjectLimit;
  private final int blockSize;
  private final int pageSize;

  Units(Catalog catalog, int wholeObjectLimit, int blockSize) {
    this.catalog = catalog;
    this.wholeObjectLimit = wholeObjectLimit;
    this.blockSize = blockSize;
    this.pageSize = Math.min(PAGE_SIZE, blockSize); // tests cut files in blocks of 16 KiB
  }

  /** The size of a page ({@link #PAGE_SIZE}, or the block size if that is smaller). */
  int pageSize() {
    return pageSize;
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

  /** The disk key of unit {@code slot} of file {@code id} (a block, or a page past the blocks). */
  CacheKey key(int id, int slot) {
    String path = catalog.path(id);
    return isPage(id, slot)
        ? CacheKey.ofPage(path, slot, pageSize, blockSize)
        : CacheKey.of(path, slot, keySalt(slot));
  }

  /** True if {@code slot} of file {@code id} names a page (a file in blocks, past its blocks). */
  boolean isPage(int id, int slot) {
    return isBlocked(id) && slot >= blockCount(id);
  }

  /** Pages in file in blocks {@code id}. */
  int pageCount(int id) {
    return (int) ((catalog.size(id) + pageSize - 1) / pageSize);
  }

  /** The slot of page {@code page} of file in blocks {@code id}. */
  int pageSlot(int id, int page) {
    return blockCount(id) + page;
  }

  /** Units a file may be stored in: its blocks and pages (1 for a whole file). */
  int slotCount(int id) {
    return isBlocked(id) ? blockCount(id) + pageCount(id) : 1;
  }

  /** Where unit {@code slot} of file {@code id} starts in the file. */
  long offset(int id, int slot) {
    if (!isBlocked(id)) {
      return 0;
    }
    int blocks = blockCount(id);
    return slot < blocks ? (long) slot * blockSize : (long) (slot - blocks) * pageSize;
  }

  /** The block that page slot {@code slot} of file {@code id} lies in. */
  int blockOfPage(int id, int slot) {
    return (int) (offset(id, slot) / blockSize);
  }

  /** The page slots inside block {@code block} of file {@code id}: {first, last}. */
  int[] pagesOfBlock(int id, int block) {
    int per = blockSize / pageSize;
    int first = pageSlot(id, block * per);
    int last = pageSlot(id, Math.min(pageCount(id), (block + 1) * per) - 1);
    return new int[] {first, last};
  }

  /**
   * Whether a stored entry of blocked file {@code id} was cut in this block size: its length is
   * this size's for its block, and past block 0 its key is this size's. (Block 0's key is the same
   * in every size, and its length differs in any two sizes that cut the file at all.)
   */
  boolean cutAsHere(int id, LmdbStore.Meta m) {
    return m.charge() == StoredValue.charge(length(id, m.block()))
        && (m.block() == 0 || java.util.Arrays.equals(m.key(), key(id, m.block()).key()));
  }

  /** Unit {@code slot} of file {@code id} (a block, or a page past the blocks), keyed for here. */
  Unit unit(int id, int slot, boolean forPeer) {
    if (isPage(id, slot)) {
      return new Unit(
          catalog, id, slot, length(id, slot), forPeer, offset(id, slot), pageSize, blockSize);
    }
    return new Unit(
        catalog, id, slot, length(id, slot), forPeer, offset(id, slot), keySalt(slot), 0);
  }

  int blockCount(int id) {
    if (!isBlocked(id)) {
      return 1;
    }
    return (int) ((catalog.size(id) + blockSize - 1) / blockSize);
  }

  /** The length of unit {@code slot} of file {@code id}. */
  int length(int id, int slot) {
    if (!isBlocked(id)) {
      return (int) catalog.size(id);
    }
    int unit = isPage(id, slot) ? pageSize : blockSize;
    return (int) Math.min(unit, catalog.size(id) - offset(id, slot));
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
