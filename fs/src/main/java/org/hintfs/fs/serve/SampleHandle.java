package org.hintfs.fs.serve;

/**
 * A handle on a catalog file: a sample, or (substituted) another sample served in its place.
 *
 * <p>A missed file's fetch starts at its open, off the FUSE thread ({@code pending}), if the cache
 * would keep it (else at the first read, so a reopen the page cache answers costs no GET); the
 * first read takes its bytes, whether or not the cache admitted them, so a miss costs one source
 * request however the kernel reads. A cached file's bytes are read from the tiers on the first
 * read. A failed fetch is kept: the kernel's re-reads of the page get EIO at once, not after
 * another retry time (a reader waits at most --retry-timeout); a new open fetches anew.
 */
final class SampleHandle implements Handle {
  final int id;
  final long size;

  /** Where the path comes from when asked (an error's message): never built on an open. */
  private final org.hintfs.fs.catalog.Catalog catalog;

  private volatile byte[] bytes;

  /** True if the bytes are another sample's, served in this one's place. */
  final boolean substituted;

  /**
   * True if the cache keeps this handle's file's stored bytes readable until the handle is closed
   * ({@link org.hintfs.fs.store.TieredCache#doneWith}), even if it is evicted meanwhile.
   */
  volatile boolean inUse;

  /** True for the warm-up's own reads at mount ({@link WarmUp}): counted nowhere. */
  boolean warmUp;

  SampleHandle(org.hintfs.fs.catalog.Catalog catalog, int id) {
    this(catalog, id, false);
  }

  SampleHandle(org.hintfs.fs.catalog.Catalog catalog, int id, boolean substituted) {
    this.catalog = catalog;
    this.id = id;
    this.size = catalog.size(id);
    this.substituted = substituted;
  }

  @Override
  public String path() {
    return catalog.path(id);
  }

  @Override
  public long size() {
    return size;
  }

  /**
   * The background fetch a miss started at open, whose bytes the first read takes: with the RAM
   * tier off and admission declined, reading through the cache again would be a second GET.
   */
  volatile MissFetch pending;

  /** True once a read of this handle was served from LMDB's map and counted as a disk hit. */
  volatile boolean diskHitCounted;

  /** Why this handle's fetch failed, once it has: later reads answer with it at once. */
  volatile java.io.IOException failure;

  /**
   * The two blocks this handle used last: the kernel's READs of one handle come on several threads,
   * a little out of order, and straddle a block's end.
   */
  private final int[] blockIndex = {-1, -1};

  private final byte[][] blocks = new byte[2][];

  /** The block this handle used last or the one before, if it is block {@code b}. */
  synchronized byte[] block(int b) {
    for (int i = 0; i < 2; i++) {
      if (blockIndex[i] == b) {
        return blocks[i];
      }
    }
    return null;
  }

  synchronized void setBlock(int b, byte[] bytes) {
    blockIndex[1] = blockIndex[0];
    blocks[1] = blocks[0];
    blockIndex[0] = b;
    blocks[0] = bytes;
  }

  /**
   * The two blocks this handle last served from where they lie (read ahead, the RAM tier, LMDB's
   * map), as {@link #blocks}: each may hold native memory until {@link #setMapped} shifts it out or
   * {@link #closeMapped}.
   */
  private final org.hintfs.fs.store.MappedBlock[] mapped = new org.hintfs.fs.store.MappedBlock[2];

  /**
   * Held while a READ of this handle maps a block from LMDB and checks it (the CRC32C of its 8 MiB,
   * read from the disk): the handle's other READs of that block wait for that check and use its
   * mapping. Without it, the kernel's READs of a block just begun, several at once on several FUSE
   * threads, each found no mapping and each checked the block whole: a read again from the disk
   * tier checked 109 blocks for 64, a third of its time (BENCHMARKS.md, twelfth stop).
   */
  final Object mapping = new Object();

  /** The block served where it lies that this handle used last or the one before, if {@code b}. */
  synchronized org.hintfs.fs.store.MappedBlock mapped(int b) {
    for (org.hintfs.fs.store.MappedBlock m : mapped) {
      if (m != null && m.block() == b) {
        return m;
      }
    }
    return null;
  }

  /** Keeps {@code m} as the last block; the one before the last is given up. */
  void setMapped(org.hintfs.fs.store.MappedBlock m) {
    org.hintfs.fs.store.MappedBlock out;
    synchronized (this) {
      out = mapped[1];
      mapped[1] = mapped[0];
      mapped[0] = m;
    }
    if (out != null) {
      out.close();
    }
  }

  /** The handle was closed: the blocks it kept (their RAM tier references) are given up. */
  void closeMapped() {
    org.hintfs.fs.store.MappedBlock[] out;
    synchronized (this) {
      out = mapped.clone();
      java.util.Arrays.fill(mapped, null);
    }
    for (org.hintfs.fs.store.MappedBlock m : out) {
      if (m != null) {
        m.close();
      }
    }
  }

  /** The last block this handle's reads moved to ({@link ReadAhead}), -1 before any; guarded. */
  int aheadLast = -1;

  /** Blocks this handle's read-ahead keeps asked for beyond {@link #aheadLast}; guarded. */
  int aheadWindow;

  /** The furthest block this handle's window has asked for (or found cached); guarded. */
  int aheadAsked = -1;

  /** Where this handle's READs of a large file go ({@link ReadPattern}); guarded by the handle. */
  final ReadPattern.Streams streams = new ReadPattern.Streams();

  byte[] bytes() {
    return bytes;
  }

  void setBytes(byte[] b) {
    bytes = b;
  }
}
