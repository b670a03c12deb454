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
 * caches, {@code lock} is held (flock) by the daemon that uses it and names that mount (its
 * mountpoint and pid), so that a second mount is told which one holds it.
 */
public final class CacheDirectory implements AutoCloseable {
  private final FileChannel channel;
  private final FileLock lock;

  private CacheDirectory(FileChannel channel, FileLock lock) {
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Claims {@code dir} for {@code source}, for the mount at {@code mountpoint} served by this
   * process.
   *
   * @throws IOException with a one-line reason: in use by another mount (named), another source's,
   *     or open to other users and not this process's to make private ({@link PrivateDirectory})
   */
  public static CacheDirectory claim(Path dir, String source, Path mountpoint) throws IOException {
    PrivateDirectory.prepare(dir);
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
      String holder = "";
      try {
        holder = Files.readString(dir.resolve("lock"), StandardCharsets.UTF_8).strip();
      } catch (IOException e) {
        // unreadable: say no more than that it is in use
      }
      throw new IOException(
          "cache dir "
              + dir
              + " is in use by another hintfs mount"
              + (holder.isEmpty() ? "" : " (" + holder + ")")
              + "; unmount it, or give this mount its own --cache-dir");
    }
    ch.truncate(0);
    ch.write(
        StandardCharsets.UTF_8.encode(
            "mounted at " + mountpoint + ", pid " + ProcessHandle.current().pid() + "\n"),
        0);
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
