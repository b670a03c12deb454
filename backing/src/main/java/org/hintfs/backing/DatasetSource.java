package org.hintfs.backing;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * A read-only dataset: a directory tree or an object-store prefix.
 *
 * <p>Implementations are thread-safe; every method may be called from many FUSE threads at once.
 * Paths are relative to the dataset root and '/'-separated.
 */
public interface DatasetSource extends AutoCloseable {

  /** A short, credential-free description such as {@code dir:/data/imagenet}. */
  String describe();

  /** Streams every file (and every explicit directory) under the root, in no particular order. */
  void list(Consumer<SourceObject> sink) throws IOException;

  /** The current metadata of one object; throws {@link java.nio.file.NoSuchFileException}. */
  SourceObject stat(String path) throws IOException;

  /**
   * Reads up to {@code dst.remaining()} bytes at {@code offset}.
   *
   * @param expectedVersion the version tag the caller listed, or null to read whatever is there; if
   *     the object changed since, {@link ObjectChangedException} is thrown and nothing is read
   * @return bytes read; fewer than asked only at the end of the object
   */
  int read(String path, String expectedVersion, long offset, ByteBuffer dst) throws IOException;

  /** Reads exactly {@code length} bytes at {@code offset} (fewer only at the end of the object). */
  default byte[] readRange(String path, String expectedVersion, long offset, int length)
      throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(length);
    while (buf.hasRemaining()) {
      int n = read(path, expectedVersion, offset + buf.position(), buf);
      if (n <= 0) {
        break;
      }
    }
    if (buf.position() == length) {
      return buf.array();
    }
    byte[] shorter = new byte[buf.position()];
    System.arraycopy(buf.array(), 0, shorter, 0, shorter.length);
    return shorter;
  }

  /** Counters for {@code stats} (requests, bytes, retries...); empty when there are none. */
  default java.util.Map<String, Long> counters() {
    return java.util.Map.of();
  }

  /**
   * Where the credentials come from and when they expire, for {@code status}: never a secret; empty
   * for a source that needs none.
   */
  default java.util.Map<String, Object> credentials() {
    return java.util.Map.of();
  }

  @Override
  default void close() throws IOException {}
}
