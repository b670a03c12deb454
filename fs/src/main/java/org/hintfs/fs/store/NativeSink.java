package org.hintfs.fs.store;

import java.nio.ByteBuffer;

/**
 * Takes bytes where they lie in native memory (LMDB's map), so that a cache hit is copied once,
 * from the map into the reply, instead of into a Java array first and from there into the reply.
 */
@FunctionalInterface
public interface NativeSink {
  /**
   * Copies {@code len} bytes at native {@code address}; the memory is valid only during the call.
   */
  void put(long address, int len);

  /** The native address of a direct buffer's first byte (index 0, not its position). */
  static long address(ByteBuffer direct) {
    return com.kenai.jffi.MemoryIO.getInstance().getDirectBufferAddress(direct);
  }

  /** Copies native memory into a Java array (for sinks that have no native destination). */
  static void copy(long address, byte[] dst, int off, int len) {
    com.kenai.jffi.MemoryIO.getInstance().getByteArray(address, dst, off, len);
  }
}
