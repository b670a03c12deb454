package org.hintfs.fs.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.hintfs.backing.DatasetSource;

/**
 * The last tier: the source, read whole per unit (one request for a file up to the whole-object
 * limit, retried inside the source for its retry time), counted as a miss. It always answers or
 * throws: a short read is an error, never cached (the object is not what the catalog says).
 */
final class SourceTier implements Tier {
  private final DatasetSource source;
  private final CacheStats stats;

  SourceTier(DatasetSource source, CacheStats stats) {
    this.source = source;
    this.stats = stats;
  }

  @Override
  public byte[] get(Unit u) throws IOException {
    byte[] b = new byte[u.length()];
    fill(u, ByteBuffer.wrap(b));
    return b;
  }

  /**
   * The unit read straight into native memory from {@code allocate} (one reference, the caller's),
   * no Java array made for it; null if no memory could be had (the caller then uses {@link #get}).
   */
  NativeBytes getNative(Unit u, java.util.function.IntFunction<NativeBytes> allocate)
      throws IOException {
    NativeBytes e = allocate.apply(u.length());
    if (e == null) {
      return null;
    }
    boolean filled = false;
    try {
      fill(u, e.buffer());
      filled = true;
      return e;
    } finally {
      if (!filled) {
        e.release();
      }
    }
  }

  /** Fills {@code buf} (the unit's length) from the source, counted as a miss. */
  private void fill(Unit u, ByteBuffer buf) throws IOException {
    stats.misses.increment();
    long offset = u.offset();
    int length = u.length();
    long t0 = System.nanoTime();
    while (buf.hasRemaining()) {
      int n = source.read(u.path(), u.version(), offset + buf.position(), buf);
      if (n <= 0) {
        break;
      }
    }
    stats.sourceSeconds.observe((System.nanoTime() - t0) / 1e9);
    stats.bytesFromSource.add(buf.position());
    if (buf.position() != length) {
      throw new IOException(
          "short read of " + u.path() + ": " + buf.position() + " of " + length + " bytes");
    }
  }
}
