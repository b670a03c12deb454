package org.hintfs.fs.store;

/**
 * Takes a read's bytes in order, each piece where it lies: from a Java array, or from native memory
 * (LMDB's map), so that a hit is copied once, into the reply.
 */
public interface ReadSink {
  /** Copies {@code len} bytes of {@code src} from {@code off}, after the previous piece. */
  void put(byte[] src, int off, int len);

  /** Copies {@code len} bytes at native {@code address}, valid only during the call. */
  void putNative(long address, int len);
}
