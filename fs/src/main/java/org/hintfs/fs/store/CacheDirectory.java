package org.hintfs.fs.store;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A cache directory belongs to one source and one running mount: {@code SOURCE} names the source it
 * caches, {@code lock} is held (flock) by the daemon that uses it.
 */
public final class CacheDirectory implements AutoCloseable {
  private final FileChannel channel;
  private final FileLock lock;

  private CacheDirectory(FileChannel channel, FileLock lock) {
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Claims {@code dir} for {@code source}.
   *
   * @throws IOException with a one-line reason: in use by another mount, or another source's
   */
  public static CacheDirectory claim(Path dir, String source) throws IOException {
    Files.createDirectories(dir);
    Path owner = dir.resolve("SOURCE");
    if (Files.exists(owner)) {
      String other = Files.readString(owner, StandardCharsets.UTF_8).strip();
      if (!other.equals(source)) {
        throw new IOException(
            "cache dir "
                + dir
                + " holds the cache of "
                + other
                + "; give this source its own --cache-dir");
      }
    }
    FileChannel ch =
        FileChannel.open(dir.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock l;
    try {
      l = ch.tryLock();
    } catch (OverlappingFileLockException e) {
      l = null;
    }
    if (l == null) {
      ch.close();
      throw new IOException("cache dir " + dir + " is in use by another hintfs mount");
    }
    if (!Files.exists(owner)) {
      Files.writeString(owner, source + "\n", StandardCharsets.UTF_8);
    }
    return new CacheDirectory(ch, l);
  }

  @Override
  public void close() throws IOException {
    lock.release();
    channel.close();
  }
}
