package org.hintfs.backing;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.Consumer;

/**
 * A dataset held in the heap: a test double that is a real implementation, and the reference for
 * "what a FUSE filesystem serving from memory costs" in the benchmarks.
 */
public final class InMemorySource implements DatasetSource {
  private record Obj(byte[] bytes, String version, long mtime) {}

  private final Map<String, Obj> objects = new ConcurrentSkipListMap<>();
  private final String name;

  /** An empty source called {@code name} in {@link #describe()}. */
  public InMemorySource(String name) {
    this.name = name;
  }

  /** Adds or replaces a file; its version tag changes with every call. */
  public InMemorySource put(String path, byte[] bytes) {
    Obj old = objects.get(path);
    int gen = old == null ? 1 : Integer.parseInt(old.version.substring(1)) + 1;
    objects.put(path, new Obj(bytes.clone(), "g" + gen, System.currentTimeMillis()));
    return this;
  }

  /** Copies every file of another source into the heap. */
  public static InMemorySource copyOf(DatasetSource src) throws IOException {
    InMemorySource mem = new InMemorySource("mem:" + src.describe());
    java.util.List<SourceObject> files = new java.util.ArrayList<>();
    src.list(
        o -> {
          if (!o.directory()) {
            files.add(o);
          }
        });
    for (SourceObject o : files) {
      mem.objects.put(
          o.path(),
          new Obj(
              src.readRange(o.path(), null, 0, (int) o.size()), o.versionTag(), o.mtimeMillis()));
    }
    return mem;
  }

  @Override
  public String describe() {
    return name;
  }

  @Override
  public void list(Consumer<SourceObject> sink) {
    objects.forEach(
        (p, o) -> sink.accept(SourceObject.file(p, o.bytes.length, o.version, o.mtime)));
  }

  @Override
  public SourceObject stat(String path) throws IOException {
    Obj o = get(path);
    return SourceObject.file(path, o.bytes.length, o.version, o.mtime);
  }

  @Override
  public int read(String path, String expectedVersion, long offset, ByteBuffer dst)
      throws IOException {
    Obj o = get(path);
    if (expectedVersion != null && !expectedVersion.equals(o.version)) {
      throw new ObjectChangedException(path, expectedVersion, o.version);
    }
    if (offset >= o.bytes.length) {
      return 0;
    }
    int n = (int) Math.min(dst.remaining(), o.bytes.length - offset);
    dst.put(o.bytes, (int) offset, n);
    return n;
  }

  private Obj get(String path) throws NoSuchFileException {
    Obj o = objects.get(path);
    if (o == null) {
      throw new NoSuchFileException(path);
    }
    return o;
  }
}
