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
  private final int blockSize;
  private final CacheStats stats;

  SourceTier(DatasetSource source, int blockSize, CacheStats stats) {
    this.source = source;
    this.blockSize = blockSize;
    this.stats = stats;
  }

  @Override
  public byte[] get(Unit u) throws IOException {
    stats.misses.increment();
    long offset = (long) u.block() * blockSize;
    int length = u.length();
    byte[] b = new byte[length];
    ByteBuffer buf = ByteBuffer.wrap(b);
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
    return b;
  }
}
