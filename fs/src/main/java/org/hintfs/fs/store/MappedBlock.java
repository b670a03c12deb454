package org.hintfs.fs.store;

/**
 * One reader's block of a file in blocks, served straight out of LMDB's map ({@link
 * TieredCache#copyOut(MappedBlock, long, int, boolean, NativeSink)}): its unit (the key made once)
 * and where its stored value was last found whole and intact. Every read checks the value's header
 * (magic, length, path, version); the payload's CRC32C is computed again only if the value is not
 * the one checked before (another address in the map, or another checksum in its header). So a 4
 * MiB block is checked once per handle, not once per 128 KiB READ, and no Java array is made for
 * it: before, each block a handle read was copied into a 4 MiB heap array, which the young
 * collections then copied while the handle held it (8 readers of cached shards, BENCHMARKS.md).
 *
 * <p>A block the RAM tier held when the handle came to it is served from there the same way, its
 * memory kept by a reference until the handle moves two blocks on or closes ({@link #close}).
 *
 * <p>LMDB never rewrites a committed value's pages in place: a value found at the address checked
 * before is the bytes checked then, or a later put of the same key, version and length (the same
 * bytes, fetched version-pinned) written to pages freed meanwhile.
 */
public final class MappedBlock implements AutoCloseable {
  final Unit unit;
  private volatile Seen seen;

  /**
   * The block's bytes in the RAM tier, if it was there when the handle came to it: one reference
   * held until {@link #close}, so the handle's READs copy from there without a Java array either.
   */
  private final java.util.concurrent.atomic.AtomicReference<NativeBytes> ram =
      new java.util.concurrent.atomic.AtomicReference<>();

  private record Seen(long address, int crc) {}

  MappedBlock(Unit unit) {
    this.unit = unit;
  }

  /** The block of the file. */
  public int block() {
    return unit.block();
  }

  /** True if the value at {@code address} with header checksum {@code crc} was checked whole. */
  boolean checked(long address, int crc) {
    Seen s = seen;
    return s != null && s.address == address && s.crc == crc;
  }

  void checkedAt(long address, int crc) {
    seen = new Seen(address, crc);
  }

  /** Keeps {@code e} (one reference, given up at {@link #close}); false if it already holds one. */
  boolean holdRam(NativeBytes e) {
    return ram.compareAndSet(null, e);
  }

  /** The RAM tier's bytes this block holds, or null. */
  NativeBytes ram() {
    return ram.get();
  }

  /** Gives up the RAM tier's bytes, if held (once: later calls do nothing). */
  @Override
  public void close() {
    NativeBytes e = ram.getAndSet(null);
    if (e != null) {
      e.release();
    }
  }
}
