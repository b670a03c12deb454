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
import org.hintfs.fs.concurrent.DaemonThreads;
import org.hintfs.fs.control.HintState;
import org.hintfs.fs.store.TieredCache;
import org.hintfs.fs.stream.Stream;
import org.hintfs.fs.stream.Streams;
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
  private final HintState hints;
  private final org.hintfs.fs.control.ControlInput control;
  private volatile TraceRecorder trace;
  private final org.hintfs.fs.prefetch.Prefetcher prefetcher;
  private final org.hintfs.fs.prefetch.OwedPrefetch owedPrefetch;
  private final org.hintfs.fs.admin.AdminOps admin;
  private volatile long[] epochBase = {0, 0};

  /** Background fetches of missed files: a few threads, the fetcher bounds the source requests. */
  private final java.util.concurrent.ExecutorService background =
      DaemonThreads.pool("background-fetch", 4);

  /** A filesystem over a listed source, reading through {@code cache}, steered by {@code hints}. */
  public HintFs(
      DatasetSource source,
      Catalog catalog,
      MountConfig config,
      TieredCache cache,
      HintState hints) {
    this.source = source;
    this.catalog = catalog;
    this.config = config;
    this.cache = cache;
    this.hints = hints;
    this.control =
        new org.hintfs.fs.control.ControlInput(
            new org.hintfs.fs.control.ControlParser(catalog, hints), hints);
    this.prefetcher =
        new org.hintfs.fs.prefetch.Prefetcher(
            hints.streams()::active,
            config.prefetchWindow(),
            config.prefetchWindowBytes(),
            config.prefetchThreads(),
            cache::isNear,
            catalog::size,
            id -> {
              try {
                cache.prefetch(id);
              } catch (IOException | RuntimeException e) {
                errors.record("prefetch", catalog.path(id), e);
              }
            });
    this.admin =
        new org.hintfs.fs.admin.AdminOps(
            cache, catalog, errors, config.cacheDir(), ADMIN_PREFETCH_THREADS);
    this.owedPrefetch =
        new org.hintfs.fs.prefetch.OwedPrefetch(
            cache,
            catalog::size,
            (id, e) -> errors.record("owed prefetch", catalog.path(id), e),
            OWED_PREFETCH_THREADS,
            OWED_SHARE);
    this.statsReport = new StatsReport(this);
    cache.setListener(
        new TieredCache.Listener() {
          @Override
          public void added(int id) {
            var c = hints.chooser();
            if (c != null) {
              c.cached(id);
            }
          }

          @Override
          public void removed(int id) {
            var c = hints.chooser();
            if (c != null) {
              c.uncached(id);
            }
          }
        });
    // A stream that ends leaves estimated next uses behind: re-key what is cached without them.
    hints.streams().onEnd(s -> cache.orderChanged());
    HintFs self = this;
    hints.setNextHeadLength(config.prefetchWindow());
    hints.connect(
        new HintState.Effects() {
          @Override
          public void underPolicyLock(Runnable r) {
            cache.underLock(r);
          }

          @Override
          public void switchPolicy(String name) {
            cache.switchPolicy(Policies.create(name, hints.context()));
          }

          @Override
          public void trace(boolean on) {
            try {
              self.setTrace(on ? config.tracePath() : null);
            } catch (IOException e) {
              errors.record("trace", String.valueOf(config.tracePath()), e);
            }
          }

          @Override
          public int[] cachedIds() {
            return cache.cachedIds();
          }

          @Override
          public void orderChanged(org.hintfs.fs.stream.Stream s) {
            cache.orderChanged();
            prefetcher.reset(s);
          }

          @Override
          public void epochStarted(int epoch) {
            epochBase = new long[] {cache.stats().openHits.sum(), cache.stats().openMisses.sum()};
          }

          @Override
          public void owed(int[] ids) {
            owedPrefetch.start(ids);
          }

          @Override
          public void admin(org.hintfs.fs.control.Hint.Admin a) {
            admin.apply(a);
          }

          @Override
          public void recordScores(boolean losses, int[] ids, float[] values) {
            TraceRecorder t = trace;
            if (t != null) {
              int[] samples = new int[ids.length];
              for (int k = 0; k < ids.length; k++) {
                samples[k] = hints.sampleOf(ids[k]);
              }
              t.scores(losses, samples, values);
            }
          }
        });
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
    HintState hints =
        new HintState(
            catalog.entryCount(),
            new org.hintfs.fs.stream.Streams(
                org.hintfs.fs.stream.ProcessTree.PROC, config.prefetchWindow(), REAP_EVERY_MS));
    TieredCache cache =
        TieredCache.open(
            source,
            catalog,
            Policies.create(config.policy(), hints.context()),
            config.cacheDir(),
            new TieredCache.Config(
                capacity,
                config.ramCacheBytes(),
                config.wholeObjectLimit(),
                config.blockSize(),
                config.maxFetches()));
    HintFs fs = new HintFs(source, catalog, config, cache, hints);
    if (config.tracePath() != null) {
      try {
        fs.setTrace(config.tracePath());
      } catch (IOException e) {
        throw new IllegalArgumentException(
            "cannot write the trace " + config.tracePath() + ": " + e.getMessage());
      }
    }
    return fs;
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
    return open(path, forWrite, 0);
  }

  /**
   * Opens a file for reading on behalf of process {@code pid} (0: unknown), which decides the
   * stream the open belongs to.
   */
  public long open(String path, boolean forWrite, long pid) throws IOException {
    int id = resolve(path);
    if (isDirectory(id)) {
      throw new IsDirectoryException(path);
    }
    if (forWrite && id != VirtualFile.CONTROL.id()) {
      throw new ReadOnlyException(path);
    }
    OpenFile f;
    if (id < 0) {
      byte[] content = virtualContent(VirtualFile.byId(id));
      f = new OpenFile(id, path, null, content.length, content);
    } else {
      f = openSample(id, pid);
    }
    long fh = nextHandle.getAndIncrement();
    handles.put(fh, f);
    stats.opens.increment();
    return fh;
  }

  private byte[] virtualContent(VirtualFile v) {
    if (v == VirtualFile.STATS || v == VirtualFile.CACHED) {
      // Read your writes: what a reader wrote to the control file before shows in what it reads.
      hints.awaitApplied(APPLIED_WAIT_MS);
    }
    String text =
        switch (v) {
          case STATS -> statsReport.json();
          case ERRORS -> hints.errorsText();
          case CACHED -> cachedText();
          default -> "";
        };
    return text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  /** The #index of every dataset sample cached now, one per line. */
  private String cachedText() {
    if (hints.view() == null) {
      return "";
    }
    StringBuilder sb = new StringBuilder();
    for (int id : cache.cachedIds()) {
      int s = hints.sampleOf(id);
      if (s >= 0) {
        sb.append('#').append(s).append('\n');
      }
    }
    return sb.toString();
  }

  /**
   * Opens a catalog file. For a sample of the declared dataset this is where substitution happens:
   * if substitution is on, the sample is not cached and the chooser allows it, the handle serves a
   * cached sample of the same class instead (the caller sets direct_io on it) and the missed sample
   * is fetched in the background.
   */
  private OpenFile openSample(int id, long pid) {
    if (cache.isBlocked(id)) {
      // Large files: accesses are recorded per block as they are read.
      return new OpenFile(id, catalog.path(id), catalog.versionTag(id), catalog.size(id), null);
    }
    Streams.Attribution stream = null;
    try {
      stream = attribute(id, pid);
      if (stream != null) {
        // The reader moves past this open before the policy hears of it: the next use the policy
        // then sees for this sample is its next read, not the one happening now.
        if (prefetcher.follow(stream.stream(), id)) {
          background.execute(cache::orderChanged); // re-key by the stream's new time map
        }
      }
    } catch (RuntimeException e) {
      // Prediction steers the cache; it is never a reason to fail an open.
      errors.record("stream", catalog.path(id), e);
      stream = null;
    }
    boolean hit = cache.access(id);
    // A fetch already under way (a prefetch that is late) is waited for, never substituted.
    boolean fetching = !hit && cache.isFetching(id);
    // The kernel's page cache may still hold this file and answer every read itself; the cache
    // must see the miss all the same, or it could never admit what the page cache serves. If the
    // kernel does ask, its read takes this fetch's bytes: one source request per miss, whether or
    // not the cache admitted them.
    java.util.concurrent.CompletableFuture<byte[]> fetched = hit ? null : fetchInBackground(id);
    if (stream != null) {
      try {
        followed(stream, id, hit);
      } catch (RuntimeException e) {
        errors.record("prefetch", catalog.path(id), e);
      }
    }
    int sub = hints.classOf(id) < 0 ? -1 : hints.opened(id, hit, fetching);
    if (hints.classOf(id) >= 0) {
      recordTrace(id);
    }
    if (sub >= 0) {
      return new OpenFile(
          sub, catalog.path(sub), catalog.versionTag(sub), catalog.size(sub), null, true);
    }
    OpenFile f = new OpenFile(id, catalog.path(id), catalog.versionTag(id), catalog.size(id), null);
    f.pending = fetched;
    return f;
  }

  /** After the cache saw the open: the stream's counters, recognition and prefetching. */
  private void followed(Streams.Attribution stream, int id, boolean hit) {
    Stream st = stream.stream();
    st.opened(hit, stream.byAncestry());
    if (!hit && prefetcher.isInFlight(id)) {
      st.lateMisses.increment(); // prefetched, but not in time
    }
    if (st.implicit() && !st.hinted()) {
      int[] o = st.order().order();
      if (o == null) {
        hints.observe(st, id);
      } else if (st.order().position() >= o.length) {
        hints.advanceDetected(st);
      }
    }
    prefetcher.scheduleAhead();
  }

  /**
   * The stream an open belongs to: a hinted one (by ancestry or window), else, with order detection
   * on, a stream of the reader's own in which its sampler's order is searched for. The reader's
   * ImageFolder root is taken to be the file's grandparent (root/class/file, torchvision's layout);
   * files nested deeper under their class give a root that is wrong, and no order is found.
   */
  private Streams.Attribution attribute(int id, long pid) {
    Streams ss = hints.streams();
    Streams.Attribution a = ss.attribute(pid, id);
    if (a != null || !config.detectOrder() || pid <= 1) {
      return a;
    }
    int cls = catalog.parent(id);
    if (cls == Catalog.ROOT) {
      return null; // a file at the mount root has no class directory
    }
    int root = catalog.parent(cls);
    Stream st = ss.implicitFor(pid);
    if (st == null) {
      return null;
    }
    if (st.view() == null) {
      try {
        st.setDetectionView(catalog.path(root), hints.view(catalog, root), catalog.entryCount());
      } catch (RuntimeException e) {
        return null; // not an ImageFolder root: nothing to recognise
      }
    }
    return new Streams.Attribution(st, true);
  }

  /** Fetches a missed file off the FUSE thread; its access was recorded at open. */
  private java.util.concurrent.CompletableFuture<byte[]> fetchInBackground(int id) {
    var f = new java.util.concurrent.CompletableFuture<byte[]>();
    background.execute(
        () -> {
          try {
            f.complete(cache.read(id, 0, false));
          } catch (IOException | RuntimeException e) {
            errors.record("background fetch", catalog.path(id), e);
            f.completeExceptionally(e);
          }
        });
    return f;
  }

  private void recordTrace(int id) {
    TraceRecorder t = trace;
    if (t != null) {
      t.read(hints.epoch(), hints.sampleOf(id), catalog.size(id), hints.classOf(id));
    }
  }

  /**
   * Takes bytes written to a control handle by process {@code pid}: every complete line is parsed
   * and applied for the writer's stream; a trailing piece waits for the rest (or for release).
   *
   * @throws org.hintfs.fs.control.InvalidHintException if a line was rejected (the others stand)
   */
  public int write(long fh, byte[] data, long pid) throws IOException {
    OpenFile f = handles.get(fh);
    if (f == null) {
      throw new BadHandleException(fh);
    }
    if (f.id != VirtualFile.CONTROL.id()) {
      throw new ReadOnlyException(f.path);
    }
    f.writer = pid;
    String firstError = control.write(f.partial, data, pid);
    if (firstError != null) {
      throw new org.hintfs.fs.control.InvalidHintException(firstError);
    }
    return data.length;
  }

  /** {@code open(..., 'w')} truncates first: allowed on the control file, EROFS elsewhere. */
  public void truncate(String path) throws IOException {
    if (resolve(path) != VirtualFile.CONTROL.id()) {
      throw new ReadOnlyException(path);
    }
  }

  /** True if the handle must bypass the page cache: generated content, or a substitute. */
  public boolean isDirectIo(long fh) {
    OpenFile f = handles.get(fh);
    return f != null && (f.isVirtual() || f.substituted);
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
    long t0 = System.nanoTime();
    if (f.isVirtual()) {
      dst.put(f.bytes(), (int) offset, n);
      stats.bytesRead.add(n);
      return n;
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
    stats.readSeconds.observe((System.nanoTime() - t0) / 1e9);
    stats.bytesRead.add(n);
    return n;
  }

  /** The handle's bytes, read through the cache once per handle. */
  private byte[] wholeObject(OpenFile f) throws IOException {
    byte[] b = f.bytes();
    if (b != null) {
      return b;
    }
    var pending = f.pending;
    if (pending != null) {
      // The miss's own fetch, started at open: wait for it with no monitor held.
      try {
        b = pending.get();
        f.setBytes(b);
        f.pending = null;
        return b;
      } catch (java.util.concurrent.ExecutionException e) {
        f.pending = null; // failed: the read below tries the source again and answers its error
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("interrupted waiting for " + f.path);
      }
    }
    synchronized (f) {
      b = f.bytes();
      if (b == null) {
        b = cache.read(f.id, 0, false); // the access was recorded at open
        f.setBytes(b);
      }
      return b;
    }
  }

  /** Closes a handle (no caller pid known). */
  public void release(long fh) {
    release(fh, 0);
  }

  /** Closes a handle; a control handle's unfinished last line is applied now, for its writer. */
  public void release(long fh, long pid) {
    OpenFile f = handles.remove(fh);
    if (f != null && f.id == VirtualFile.CONTROL.id()) {
      control.finish(f.partial, f.writer != 0 ? f.writer : pid);
    }
  }

  /** The hints this mount has received. */
  public HintState hints() {
    return hints;
  }

  /** Starts or stops recording every sample open to {@code file} (null: stop). */
  public synchronized void setTrace(java.nio.file.Path file) throws IOException {
    TraceRecorder old = trace;
    trace = file == null ? null : new TraceRecorder(file);
    if (old != null) {
      old.close();
    }
  }

  /** Open hits and misses when the current epoch began (zeros before any epoch hint). */
  public long[] epochBase() {
    return epochBase;
  }

  /** How often the owners of streams are checked: a dead rank's prefetching stops within 1 s. */
  static final long REAP_EVERY_MS = 1000;

  /** The longest a read of stats or cached waits for the hints written before it to apply. */
  static final long APPLIED_WAIT_MS = 2000;

  /** Concurrent fetches of the samples substitution owes the trainer. */
  static final int OWED_PREFETCH_THREADS = 4;

  /** The most of the cache the owed samples may hold at once. */
  static final double OWED_SHARE = 0.25;

  /** The owed samples' prefetch (for stats). */
  public org.hintfs.fs.prefetch.OwedPrefetch owedPrefetch() {
    return owedPrefetch;
  }

  /** Concurrent fetches of an admin's prefetch or pin. */
  static final int ADMIN_PREFETCH_THREADS = 16;

  /** An admin's prefetch, evict and pin (for stats). */
  public org.hintfs.fs.admin.AdminOps admin() {
    return admin;
  }

  /** The prefetcher (for stats). */
  public org.hintfs.fs.prefetch.Prefetcher prefetcher() {
    return prefetcher;
  }

  /** Stops background work and flushes the trace. */
  public void close() throws IOException {
    prefetcher.close();
    owedPrefetch.close();
    hints.streams().close();
    admin.close();
    background.shutdownNow();
    setTrace(null);
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
