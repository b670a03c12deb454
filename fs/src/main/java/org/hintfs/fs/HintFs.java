package org.hintfs.fs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.hintfs.backing.DatasetSource;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.catalog.CatalogBuilder;

/**
 * The filesystem service behind the FUSE adapter: path resolution, the open-file table and reads.
 *
 * <p>Metadata: every getattr, lookup and readdir is answered from the in-memory {@link Catalog};
 * the source is only called to read bytes.
 *
 * <p>Reads: a file up to {@link MountConfig#wholeObjectLimit()} is fetched whole on its handle's
 * first read (one source request however many 128 KiB FUSE reads follow) and served from that array
 * until release; a larger file is read from the source range by range.
 *
 * <p>Concurrency: all methods are called from libfuse's worker threads at once. The open-file table
 * is a concurrent map; a handle's lazy fetch is guarded by the handle.
 */
public final class HintFs {
  private final DatasetSource source;
  private final Catalog catalog;
  private final MountConfig config;
  private final MountStats stats = new MountStats();
  private final ErrorTable errors = new ErrorTable();
  private final Map<Long, OpenFile> handles = new ConcurrentHashMap<>();
  private final AtomicLong nextHandle = new AtomicLong(1);
  private final Instant started = Instant.now();
  private final StatsReport statsReport;

  /** A filesystem over a listed source. */
  public HintFs(DatasetSource source, Catalog catalog, MountConfig config) {
    this.source = source;
    this.catalog = catalog;
    this.config = config;
    this.statsReport = new StatsReport(this);
  }

  /**
   * Lists a source into a catalog, leaving out the source's own {@code .hintfs} at the root: that
   * name is reserved for the control files and shadows whatever the source has there.
   */
  public static Catalog listCatalog(DatasetSource source) throws IOException {
    CatalogBuilder b = new CatalogBuilder();
    source.list(
        o -> {
          if (!VirtualFile.isReservedPath(o.path())) {
            b.add(o);
          }
        });
    return b.build();
  }

  /** The catalog this filesystem serves. */
  public Catalog catalog() {
    return catalog;
  }

  /** The source bytes come from. */
  public DatasetSource source() {
    return source;
  }

  /** The configuration of this mount. */
  public MountConfig config() {
    return config;
  }

  /** Live counters. */
  public MountStats stats() {
    return stats;
  }

  /** Errors answered to the kernel, by errno. */
  public ErrorTable errors() {
    return errors;
  }

  /** When this filesystem was created. */
  public Instant started() {
    return started;
  }

  /** Number of handles open now. */
  public int openHandles() {
    return handles.size();
  }

  /**
   * Resolves a mount path to a catalog id (>= 0) or a {@link VirtualFile} id (< 0). {@code .hintfs}
   * entries of the source never reach the catalog (see {@link #listCatalog}).
   *
   * @throws NoSuchFileException if nothing is there
   */
  public int resolve(String path) throws NoSuchFileException {
    VirtualFile v = VirtualFile.byPath(path);
    if (v != null) {
      return v.id();
    }
    if (VirtualFile.isReservedPath(path)) {
      throw new NoSuchFileException(path);
    }
    int id = catalog.lookup(path);
    if (id < 0) {
      throw new NoSuchFileException(path);
    }
    return id;
  }

  /** True for an id that names a directory (catalog or virtual). */
  public boolean isDirectory(int id) {
    return id >= 0 ? catalog.isDirectory(id) : id == VirtualFile.DIR.id();
  }

  /** Names in a directory, in order; {@code /.hintfs} and its content are never listed. */
  public void list(int dir, DirSink sink) throws IOException {
    if (dir == VirtualFile.DIR.id()) {
      return;
    }
    if (dir < 0 || !catalog.isDirectory(dir)) {
      throw new NotDirectoryException(dir < 0 ? "virtual" : catalog.path(dir));
    }
    int n = catalog.childCount(dir);
    for (int i = 0; i < n; i++) {
      int c = catalog.child(dir, i);
      if (!sink.accept(c, catalog.name(c), catalog.isDirectory(c))) {
        return;
      }
    }
  }

  /** Receives directory entries; returns false to stop. */
  @FunctionalInterface
  public interface DirSink {
    /** One entry. */
    boolean accept(int id, String name, boolean directory);
  }

  /**
   * Opens a file for reading.
   *
   * @return a handle for {@link #read} and {@link #release}
   * @throws ReadOnlyException if a write mode is asked for
   */
  public long open(String path, boolean forWrite) throws IOException {
    int id = resolve(path);
    if (isDirectory(id)) {
      throw new IsDirectoryException(path);
    }
    if (forWrite) {
      throw new ReadOnlyException(path);
    }
    OpenFile f;
    if (id < 0) {
      byte[] content = statsReport.json().getBytes(java.nio.charset.StandardCharsets.UTF_8);
      f = new OpenFile(id, path, null, content.length, content);
    } else {
      f = new OpenFile(id, catalog.path(id), catalog.versionTag(id), catalog.size(id), null);
    }
    long fh = nextHandle.getAndIncrement();
    handles.put(fh, f);
    stats.opens.increment();
    return fh;
  }

  /** True if the handle must bypass the page cache (generated content with no fixed size). */
  public boolean isDirectIo(long fh) {
    OpenFile f = handles.get(fh);
    return f != null && f.isVirtual();
  }

  /**
   * Copies up to {@code length} bytes at {@code offset} into {@code dst}.
   *
   * @return bytes copied; 0 at or past the end
   */
  public int read(long fh, long offset, int length, ByteSink dst) throws IOException {
    OpenFile f = handles.get(fh);
    if (f == null) {
      throw new BadHandleException(fh);
    }
    stats.reads.increment();
    if (offset >= f.size || length <= 0) {
      return 0;
    }
    int n = (int) Math.min(length, f.size - offset);
    byte[] whole = f.bytes();
    if (whole == null && f.size <= config.wholeObjectLimit()) {
      whole = fetchWhole(f);
    }
    if (whole != null) {
      n = (int) Math.min(n, whole.length - offset);
      if (n <= 0) {
        return 0;
      }
      dst.put(whole, (int) offset, n);
    } else {
      byte[] buf = new byte[n];
      int got = source.read(f.path, f.version, offset, ByteBuffer.wrap(buf));
      countSourceRead(got);
      n = Math.max(got, 0);
      dst.put(buf, 0, n);
    }
    stats.bytesRead.add(n);
    return n;
  }

  private byte[] fetchWhole(OpenFile f) throws IOException {
    synchronized (f) {
      byte[] b = f.bytes();
      if (b == null) {
        b = source.readRange(f.path, f.version, 0, (int) f.size);
        countSourceRead(b.length);
        f.setBytes(b);
      }
      return b;
    }
  }

  private void countSourceRead(long bytes) {
    stats.sourceReads.increment();
    stats.sourceBytes.add(Math.max(bytes, 0));
  }

  /** Closes a handle; unknown handles are ignored. */
  public void release(long fh) {
    handles.remove(fh);
  }

  /** Receives bytes read. */
  @FunctionalInterface
  public interface ByteSink {
    /** Copies {@code len} bytes of {@code src} from {@code off}. */
    void put(byte[] src, int off, int len);
  }

  /** The handle is not open (a bug in the kernel or in us). */
  public static final class BadHandleException extends IOException {
    BadHandleException(long fh) {
      super("no open file with handle " + fh);
    }
  }

  /** A file operation on a directory. */
  public static final class IsDirectoryException extends IOException {
    IsDirectoryException(String path) {
      super("is a directory: " + path);
    }
  }
}
