package org.hintfs.backing;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemLoopException;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.EnumSet;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A dataset in a local (or NFS) directory.
 *
 * <p>Symbolic links are followed the way torchvision's {@code os.walk(followlinks=True)} follows
 * them: a link to a directory is walked as a directory, a link to a file is a file, and a directory
 * reached twice through different links appears twice. Unlike {@code os.walk}, a link back to one
 * of its own ancestors (a cycle) is skipped with a warning instead of being walked until ELOOP.
 * Broken links are skipped.
 */
public final class LocalDirSource implements DatasetSource {
  private static final Logger log = LoggerFactory.getLogger(LocalDirSource.class);

  private final Path root;

  /** A source rooted at an existing directory. */
  public LocalDirSource(Path root) throws IOException {
    Path real = root.toAbsolutePath().normalize();
    if (!Files.exists(real)) {
      throw new NoSuchFileException(real.toString(), null, "source directory does not exist");
    }
    if (!Files.isDirectory(real)) {
      throw new NotDirectoryException(real.toString());
    }
    this.root = real;
  }

  /** Parses a plain path or a {@code file://} URI. */
  public static LocalDirSource fromSpec(String spec) throws IOException {
    Path p = spec.startsWith("file:") ? Path.of(URI.create(spec)) : Path.of(spec);
    return new LocalDirSource(p);
  }

  /** The directory this source reads. */
  public Path root() {
    return root;
  }

  @Override
  public String describe() {
    return "dir:" + root;
  }

  @Override
  public void list(Consumer<SourceObject> sink) throws IOException {
    Files.walkFileTree(
        root,
        EnumSet.of(FileVisitOption.FOLLOW_LINKS),
        Integer.MAX_VALUE,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
            sink.accept(
                withOwner(
                    SourceObject.dir(relative(dir), attrs.lastModifiedTime().toMillis()), dir));
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
            // With FOLLOW_LINKS a link is reported with its own attributes only when its target
            // cannot be read: a broken link, which no reader could open either.
            if (attrs.isRegularFile()) {
              sink.accept(
                  withOwner(
                      SourceObject.file(
                          relative(file),
                          attrs.size(),
                          versionTag(attrs),
                          attrs.lastModifiedTime().toMillis()),
                      file));
            }
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
            if (e instanceof FileSystemLoopException) {
              log.warn("skipping symlink cycle at {}", file);
              return FileVisitResult.CONTINUE;
            }
            if (file.equals(root)) {
              throw e;
            }
            log.warn("skipping unreadable {}: {}", file, e.toString());
            return FileVisitResult.CONTINUE;
          }
        });
  }

  @Override
  public SourceObject stat(String path) throws IOException {
    Path p = resolve(path);
    BasicFileAttributes attrs = Files.readAttributes(p, BasicFileAttributes.class);
    if (attrs.isDirectory()) {
      return withOwner(SourceObject.dir(path, attrs.lastModifiedTime().toMillis()), p);
    }
    return withOwner(
        SourceObject.file(
            path, attrs.size(), versionTag(attrs), attrs.lastModifiedTime().toMillis()),
        p);
  }

  /**
   * {@code o} with the mode, owner and group of {@code p} (its target, for a link), so that the
   * mount shows them and the kernel checks them ({@code default_permissions}) as bindfs does. One
   * more stat per entry: the walk's attributes carry no owner ids. If that stat fails (the entry
   * went away since), it is listed with no owner and gets the mount's defaults.
   */
  private static SourceObject withOwner(SourceObject o, Path p) {
    try {
      java.util.Map<String, Object> a = Files.readAttributes(p, "unix:mode,uid,gid");
      return o.withOwner((Integer) a.get("mode"), (Integer) a.get("uid"), (Integer) a.get("gid"));
    } catch (IOException | UnsupportedOperationException e) {
      return o;
    }
  }

  @Override
  public int read(String path, String expectedVersion, long offset, ByteBuffer dst)
      throws IOException {
    Path p = resolve(path);
    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
      if (expectedVersion != null) {
        String actual = versionTag(Files.readAttributes(p, BasicFileAttributes.class));
        if (!actual.equals(expectedVersion)) {
          throw new ObjectChangedException(path, expectedVersion, actual);
        }
      }
      int total = 0;
      while (dst.hasRemaining()) {
        int n = ch.read(dst, offset + total);
        if (n < 0) {
          break;
        }
        total += n;
      }
      return total;
    }
  }

  private Path resolve(String path) throws NoSuchFileException {
    Path p = root.resolve(path).normalize();
    if (!p.startsWith(root)) {
      throw new NoSuchFileException(path, null, "outside the dataset root");
    }
    return p;
  }

  private String relative(Path p) {
    return root.relativize(p).toString().replace('\\', '/');
  }

  /** Size and modification time in nanoseconds: what changes when a file is rewritten. */
  static String versionTag(BasicFileAttributes attrs) {
    long nanos = attrs.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS);
    return Long.toHexString(nanos) + "-" + Long.toHexString(attrs.size());
  }
}
