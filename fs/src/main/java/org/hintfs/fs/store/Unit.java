package org.hintfs.fs.store;

import org.hintfs.fs.catalog.Catalog;

/**
 * One unit of the cache on its way through the tiers: block {@code block} of catalog file {@code
 * id} ({@code length} bytes; block 0 of a small file is the whole file). Its path, version and key
 * are looked up in the catalog when a tier first asks (a RAM hit needs none of them).
 */
public final class Unit {
  private final Catalog catalog;
  private final int id;
  private final int block;
  private final int length;
  private final boolean forPeer;
  private String formerHome;
  private String path;
  private String version;
  private final int keySalt;
  private final long offset;
  private final int pageSize;
  private final int pageBlockSize;
  private CacheKey key;
  private long versionHash;
  private boolean versionHashed;

  Unit(Catalog catalog, int id, int block, int length, boolean forPeer) {
    this(catalog, id, block, length, forPeer, 0);
  }

  /** With {@code keySalt} the block size that salts its disk key (0: none; {@link CacheKey}). */
  Unit(Catalog catalog, int id, int block, int length, boolean forPeer, int keySalt) {
    this(catalog, id, block, length, forPeer, 0, keySalt, 0);
  }

  /**
   * Unit {@code block} (a slot: {@link Units}) starting at {@code offset} in its file; a page of
   * {@code pageSize} bytes of a file cut in blocks of {@code blockSize} when {@code pageSize} is
   * not 0 (its key is salted with both: {@link CacheKey#ofPage}), else a block or whole file whose
   * key {@code keySalt} salts.
   */
  Unit(
      Catalog catalog,
      int id,
      int block,
      int length,
      boolean forPeer,
      long offset,
      int keySaltOrPageSize,
      int blockSize) {
    this.catalog = catalog;
    this.id = id;
    this.block = block;
    this.length = length;
    this.forPeer = forPeer;
    this.offset = offset;
    this.pageSize = blockSize == 0 ? 0 : keySaltOrPageSize;
    this.pageBlockSize = blockSize;
    this.keySalt = blockSize == 0 ? keySaltOrPageSize : 0;
  }

  /** A unit whose key and version hash are already known ({@link RecentKeys}). */
  Unit(
      Catalog catalog,
      int id,
      int block,
      int length,
      boolean forPeer,
      CacheKey key,
      long versionHash) {
    this(catalog, id, block, length, forPeer);
    this.key = key;
    this.versionHash = versionHash;
    this.versionHashed = true;
  }

  /** The catalog id of the file. */
  public int id() {
    return id;
  }

  /** The block of the file (0 for a whole file). */
  public int block() {
    return block;
  }

  /** Where the unit starts in its file. */
  public long offset() {
    return offset;
  }

  /** True for a page of a file in blocks (a random reader's unit), false for a block or file. */
  public boolean isPage() {
    return pageSize != 0;
  }

  /** The unit's length in bytes. */
  public int length() {
    return length;
  }

  /** True when another member asked for the unit: this node is its home and never asks a peer. */
  public boolean forPeer() {
    return forPeer;
  }

  /**
   * For a unit another member asked for: the member the asker last knew as its home (a name), to be
   * asked before the source when this node does not hold it; null when there is none.
   */
  public String formerHome() {
    return formerHome;
  }

  Unit formerHome(String member) {
    this.formerHome = member;
    return this;
  }

  /** The file's path in the source. */
  public String path() {
    if (path == null) {
      path = catalog.path(id);
    }
    return path;
  }

  /** The file's version at the source, as listed (ETag or mtime and size). */
  public String version() {
    if (version == null) {
      version = catalog.versionTag(id);
    }
    return version;
  }

  /** The hash of {@link #version()} every disk entry carries. */
  public long versionHash() {
    if (!versionHashed) {
      versionHash = CacheKey.versionHash(version());
      versionHashed = true;
    }
    return versionHash;
  }

  /** The unit's key on disk. */
  public CacheKey key() {
    if (key == null) {
      key =
          pageSize != 0
              ? CacheKey.ofPage(path(), block, pageSize, pageBlockSize)
              : CacheKey.of(path(), block, keySalt);
    }
    return key;
  }

  /** The unit's key in the RAM tier: the id in the high 32 bits, the block in the low. */
  public long ramKey() {
    return ramKey(id, block);
  }

  /** The RAM tier's key of block {@code block} of file {@code id}. */
  static long ramKey(int id, int block) {
    return ((long) id << 32) | block;
  }
}
