package org.hintfs.fs;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.hintfs.backing.DatasetSource;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.catalog.CatalogBuilder;
import org.hintfs.fs.store.TieredCache;
import org.hintfs.policy.Policies;

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
  private final TieredCache cache;

  /** A filesystem over a listed source, reading through {@code cache}. */
  public HintFs(DatasetSource source, Catalog catalog, MountConfig config, TieredCache cache) {
    this.source = source;
    this.catalog = catalog;
    this.config = config;
    this.cache = cache;
    this.statsReport = new StatsReport(this);
  }

  /**
   * A filesystem with the cache the config describes: its disk tier in {@code config.cacheDir()}
   * (none if null), capacity resolved against the dataset's size.
   */
  public static HintFs create(DatasetSource source, Catalog catalog, MountConfig config) {
    long footprint = TieredCache.footprint(catalog, config.wholeObjectLimit(), config.blockSize());
    long capacity = config.cacheDir() == null ? 0 : Sizes.parse(config.cacheSize(), footprint);
    if (config.cacheDir() != null) {
      capacity = Math.min(capacity, diskRoomFor(config.cacheDir()));
    }
    TieredCache cache =
        TieredCache.open(
            source,
            catalog,
            Policies.create(config.policy(), catalog.entryCount()),
            config.cacheDir(),
            new TieredCache.Config(
                capacity,
                config.ramCacheBytes(),
                config.wholeObjectLimit(),
                config.blockSize(),
                config.maxFetches()));
    return new HintFs(source, catalog, config, cache);
  }

  /**
   * 90% of what the cache directory's disk can hold: its free space plus what the cache already
   * occupies (10% left for LMDB's own pages and for the other users of that disk).
   */
  static long diskRoomFor(java.nio.file.Path dir) {
    try {
      java.nio.file.Files.createDirectories(dir);
      long free = java.nio.file.Files.getFileStore(dir).getUsableSpace();
      java.nio.file.Path db = dir.resolve("data.mdb");
      // LMDB's file is sparse: count the blocks it really holds, not its apparent size.
      long held = 0;
      if (java.nio.file.Files.exists(db)) {
        Object blocks = java.nio.file.Files.getAttribute(db, "unix:blocks");
        held = blocks instanceof Long b ? b * 512 : java.nio.file.Files.size(db);
      }
      long room = (long) ((free + held) * 0.9);
      return room;
    } catch (IOException | RuntimeException e) {
      return Long.MAX_VALUE; // the store will report the real problem when it opens
    }
  }

  /** The cache reads go through. */
  public TieredCache cache() {
    return cache;
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
    if (f.isVirtual()) {
      dst.put(f.bytes(), (int) offset, n);
    } else if (!cache.isBlocked(f.id)) {
      byte[] whole = wholeObject(f);
      dst.put(whole, (int) offset, n);
    } else {
      // The kernel zero-fills a short reply to a regular read: fill the whole request, across
      // block boundaries if it spans them.
      int bs = cache.blockSize();
      int done = 0;
      while (done < n) {
        long pos = offset + done;
        int b = (int) (pos / bs);
        byte[] block = f.block(b);
        if (block == null) {
          block = cache.read(f.id, b);
          f.setBlock(b, block);
        }
        int in = (int) (pos - (long) b * bs);
        int k = Math.min(n - done, block.length - in);
        dst.put(block, in, k);
        done += k;
      }
    }
    stats.bytesRead.add(n);
    return n;
  }

  /** The handle's bytes, read through the cache once per handle. */
  private byte[] wholeObject(OpenFile f) throws IOException {
    byte[] b = f.bytes();
    if (b != null) {
      return b;
    }
    synchronized (f) {
      b = f.bytes();
      if (b == null) {
        b = cache.read(f.id, 0);
        f.setBytes(b);
      }
      return b;
    }
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
