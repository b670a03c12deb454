package org.hintfs.fs;

/**
 * One open handle: a catalog file, or a virtual file whose content was generated at open.
 *
 * <p>A small catalog file's bytes are fetched on the first read, not at open, so opens the kernel
 * answers from its page cache (a warm second pass) cost no source read at all.
 */
final class OpenFile {
  final int id;
  final String path;
  final String version;
  final long size;
  private volatile byte[] bytes;

  /** True if the bytes are another sample's, served in this one's place. */
  final boolean substituted;

  OpenFile(int id, String path, String version, long size, byte[] bytes) {
    this(id, path, version, size, bytes, false);
  }

  OpenFile(int id, String path, String version, long size, byte[] bytes, boolean substituted) {
    this.id = id;
    this.path = path;
    this.version = version;
    this.size = size;
    this.bytes = bytes;
    this.substituted = substituted;
  }

  /**
   * The background fetch a miss started at open, whose bytes the first read takes: with the RAM
   * tier off and admission declined, reading through the cache again would be a second GET.
   */
  volatile MissFetch pending;

  /** The pid that last wrote to this control handle (0: none yet). */
  volatile long writer;

  /** A control handle's bytes not yet ending in a newline. */
  final java.io.ByteArrayOutputStream partial = new java.io.ByteArrayOutputStream();

  private int blockIndex = -1;
  private byte[] block;

  /** The block this handle used last, if it is block {@code b}. */
  synchronized byte[] block(int b) {
    return b == blockIndex ? block : null;
  }

  synchronized void setBlock(int b, byte[] bytes) {
    blockIndex = b;
    block = bytes;
  }

  byte[] bytes() {
    return bytes;
  }

  void setBytes(byte[] b) {
    bytes = b;
  }

  boolean isVirtual() {
    return id < 0;
  }
}
