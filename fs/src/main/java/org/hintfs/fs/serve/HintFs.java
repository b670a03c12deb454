package org.hintfs.fs.serve;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.hintfs.backing.DatasetSource;
import org.hintfs.fs.MountConfig;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.cluster.ClusterPeerTier;
import org.hintfs.fs.cluster.HomeServer;
import org.hintfs.fs.control.HintState;
import org.hintfs.fs.store.TieredCache;
import org.hintfs.fs.virtual.VirtualContent;
import org.hintfs.fs.virtual.VirtualFile;

/**
 * The filesystem service behind the FUSE adapter: path resolution, the open-file table and reads.
 *
 * <p>Metadata: every getattr, lookup and readdir is answered from the in-memory {@link Catalog};
 * the source is only called to read bytes.
 *
 * <p>Reads: a file up to {@link MountConfig#wholeObjectLimit()} is one unit: a miss is fetched
 * whole, starting at its open ({@link SampleOpener}; one source request however many 128 KiB FUSE
 * reads follow), and served from that array until release; a larger file is read in blocks, each a
 * unit of the cache.
 *
 * <p>Concurrency: all methods are called from libfuse's worker threads at once. The open-file table
 * is a concurrent map of {@link Handle}s; no lock is held while a read waits for a fetch.
 */
public final class HintFs {
  private final DatasetSource source;
  private final Catalog catalog;
  private final MountConfig config;
  private final MountStats stats = new MountStats();
  private final ErrorTable errors = new ErrorTable();
  private final ErrorTable backgroundErrors;
  private final ClusterPeerTier cluster; // null: not in a cluster
  private final HomeServer home; // null: not in a cluster
  private final Map<Long, Handle> handles = new ConcurrentHashMap<>();
  private final AtomicLong nextHandle = new AtomicLong(1);
  private final Instant started = Instant.now();
  private volatile java.util.function.Supplier<String> statsJson = () -> "{}";
  private final TieredCache cache;
  private final HintState hints;
  private final org.hintfs.fs.control.ControlInput control;
  private volatile TraceRecorder trace;
  private volatile RequestThreads requestThreads = RequestThreads.NONE;
  private final Workers workers;
  private final org.hintfs.fs.prefetch.Prefetcher prefetcher;
  private volatile long[] epochBase = {0, 0};

  /** The trace being recorded, or null. */
  public TraceRecorder trace() {
    return trace;
  }

  /** Open hits and misses now: the current epoch's counters start from them. */
  public void startEpochCounters() {
    epochBase = new long[] {cache.stats().openHits.sum(), cache.stats().openMisses.sum()};
  }

  private final SampleOpener opener;

  /** What the kernel's page cache may still hold of what this mount served (substitution). */
  private final PageCacheWindow pageCache;

  /** Fetches the blocks of large files ahead of their sequential readers. */
  private final ReadAhead readAhead;

  /** Tells the random readers of large files from the sequential ones. */
  private final ReadPattern readPattern;

  /** Fetches packed files' samples ahead of their readers, in their hinted order. */
  private final org.hintfs.fs.prefetch.PackedPrefetcher packed;

  /** Fetches randomly read large files whole in the background when the cache has room. */
  private final org.hintfs.fs.prefetch.WholeFileFill fill;

  /**
   * A filesystem over a listed source, reading through {@code cache}, steered by {@code hints},
   * with {@code workers} fetching in the background and recording their failures in {@code
   * backgroundErrors}. Built and wired by the mount's composition root.
   */
  public HintFs(
      DatasetSource source,
      Catalog catalog,
      MountConfig config,
      TieredCache cache,
      HintState hints,
      ClusterPeerTier cluster,
      HomeServer home,
      Workers workers,
      ErrorTable backgroundErrors) {
    this.source = source;
    this.cluster = cluster;
    this.home = home;
    this.catalog = catalog;
    this.config = config;
    this.cache = cache;
    this.hints = hints;
    this.backgroundErrors = backgroundErrors;
    this.control =
        new org.hintfs.fs.control.ControlInput(
            new org.hintfs.fs.control.ControlParser(catalog, hints), hints);
    this.workers = workers;
    this.prefetcher = workers.prefetcher();
    this.pageCache = PageCacheWindow.forMount(catalog.entryCount(), config.pageCacheReach());
    this.opener =
        new SampleOpener(
            catalog,
            cache,
            hints,
            prefetcher,
            backgroundErrors,
            config.detectOrder(),
            () -> trace,
            pageCache);
    this.readAhead = new ReadAhead(cache);
    this.readPattern = new ReadPattern(cache.blockSize());
    this.packed = new org.hintfs.fs.prefetch.PackedPrefetcher(cache);
    this.fill = new org.hintfs.fs.prefetch.WholeFileFill(cache);
  }

  /** What {@code .hintfs/stats} shows: the JSON {@code json} renders at each open. */
  public void renderStatsWith(java.util.function.Supplier<String> json) {
    this.statsJson = json;
  }

  /** The cluster tier this mount's misses go through, or null when it is not in a cluster. */
  public ClusterPeerTier cluster() {
    return cluster;
  }

  /** What this node serves to the other members (null when it is not in a cluster). */
  public HomeServer home() {
    return home;
  }

  /** The cache reads go through. */
  public TieredCache cache() {
    return cache;
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

  /** Errors answered to the kernel, by errno: what readers and hint writers saw. */
  public ErrorTable errors() {
    return errors;
  }

  /**
   * Failures of background work (prefetches, background fetches, the trace): retried or dropped,
   * never answered to a reader, so counted apart from {@link #errors()}.
   */
  public ErrorTable backgroundErrors() {
    return backgroundErrors;
  }

  /** When this filesystem was created. */
  /** The threads serving kernel requests (set by the FUSE loop once it serves). */
  public RequestThreads requestThreads() {
    return requestThreads;
  }

  /** Called by the FUSE loop when its threads start. */
  public void servedBy(RequestThreads threads) {
    this.requestThreads = threads;
  }

  public Instant started() {
    return started;
  }

  /** Missed files queued or being fetched off the FUSE threads ({@code SampleOpener}). */
  public int missFetchesPending() {
    return opener.backgroundPending();
  }

  /** Number of handles open now. */
  public int openHandles() {
    return handles.size();
  }

  /**
   * Resolves a mount path to a catalog id (>= 0) or a {@link VirtualFile} id (< 0). {@code .hintfs}
   * entries of the source never reach the catalog (the mount's listing leaves them out).
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
    Handle f;
    if (pid != 0 && pid == warmUpThread && id >= 0) {
      // The warm-up at mount reading through the kernel: counted nowhere, seen by no policy.
      SampleHandle w = new SampleHandle(catalog, id);
      w.warmUp = true;
      long fh = nextHandle.getAndIncrement();
      handles.put(fh, w);
      return fh;
    }
    if (id < 0) {
      byte[] content = VirtualContent.render(VirtualFile.byId(id), hints, cache, statsJson);
      f =
          id == VirtualFile.CONTROL.id()
              ? new ControlHandle(path, content, control)
              : new VirtualHandle(path, content);
    } else {
      f = opener.open(id, pid);
      if (readsAhead(f)) {
        readAhead.opened(((SampleHandle) f).id);
      }
    }
    long fh = nextHandle.getAndIncrement();
    handles.put(fh, f);
    stats.opens.increment();
    return fh;
  }

  /**
   * Takes bytes written to a control handle by process {@code pid}: every complete line is parsed
   * and applied for the writer's stream; a trailing piece waits for the rest (or for release).
   *
   * @throws org.hintfs.fs.control.InvalidHintException if a line was rejected (the others stand)
   * @throws org.hintfs.fs.control.StillApplyingException if every line was accepted but a reader
   *     line was not applied within the write's bound (it will be, in order)
   */
  public int write(long fh, byte[] data, long pid) throws IOException {
    Handle h = handles.get(fh);
    if (h == null) {
      throw new BadHandleException(fh);
    }
    if (!(h instanceof ControlHandle c)) {
      throw new ReadOnlyException(h.path());
    }
    org.hintfs.fs.control.ControlInput.Written w = c.write(data, pid);
    if (w.error() != null) {
      throw new org.hintfs.fs.control.InvalidHintException(w.error());
    }
    if (w.stillApplying()) {
      throw new org.hintfs.fs.control.StillApplyingException(control.readerLineWaitMs());
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
    Handle h = handles.get(fh);
    return h != null && !(h instanceof SampleHandle s && !s.substituted && !s.warmUp);
  }

  /**
   * Copies up to {@code length} bytes at {@code offset} into {@code dst}.
   *
   * @return bytes copied; 0 at or past the end
   */
  public int read(long fh, long offset, int length, ByteSink dst) throws IOException {
    Handle h = handles.get(fh);
    if (h == null) {
      throw new BadHandleException(fh);
    }
    if (h instanceof SampleHandle w && w.warmUp) {
      // The path a reader's hit takes (counted nowhere), else the file read whole from disk.
      int m = (int) Math.max(0, Math.min(length, w.size() - offset));
      if (m > 0 && cache.copyOut(w.id, offset, m, false, dst::putNative)) {
        return m;
      }
      byte[] b = cache.peek(w.id);
      if (b == null) {
        return 0; // left the cache meanwhile: the warm-up reads an empty file, no reader's error
      }
      int n = (int) Math.max(0, Math.min(length, b.length - offset));
      dst.put(b, (int) offset, n);
      return n;
    }
    stats.reads.increment();
    if (offset >= h.size() || length <= 0) {
      return 0;
    }
    int n = (int) Math.min(length, h.size() - offset);
    if (!(h instanceof SampleHandle f)) {
      byte[] content = h instanceof ControlHandle c ? c.content() : ((VirtualHandle) h).content();
      dst.put(content, (int) offset, n);
      stats.bytesRead.add(n);
      return n;
    }
    long t0 = System.nanoTime();
    if (!cache.isBlocked(f.id)) {
      if (f.bytes() == null
          && f.pending == null
          && f.failure == null
          && cache.copyOut(f.id, offset, n, !f.diskHitCounted, dst::putNative)) {
        f.diskHitCounted = true; // a disk hit, counted once per open like one read into the heap
      } else {
        byte[] whole = wholeObject(f);
        dst.put(whole, (int) offset, n);
      }
    } else {
      // Its pages take room in the page cache too (large files are served with keep_cache).
      pageCache.served(-1, n);
      // The kernel zero-fills a short reply to a regular read: fill the whole request, across
      // block boundaries if it spans them.
      int bs = cache.blockSize();
      ReadPattern.Verdict pattern = readPattern.classify(f, offset, n);
      if (pattern.turnedRandom()) {
        fill.randomReader(f.id);
      }
      org.hintfs.policy.PackedOrder order = cache.packedOrder(f.id);
      int[] readNow = null;
      if (order != null) {
        // Before its pages are offered: a sample just read is next needed in the next epoch.
        readNow = order.read(offset, n);
        packed.moved(f.id);
      }
      long[] missed = readNow == null ? null : new long[] {Long.MAX_VALUE, Long.MIN_VALUE};
      int done = 0;
      while (done < n) {
        long pos = offset + done;
        int b = (int) (pos / bs);
        int in = (int) (pos - (long) b * bs);
        int k = Math.min(n - done, cache.blockLength(f.id, b) - in);
        byte[] block = f.block(b);
        if (block == null
            && pattern.paged()
            && f.mapped(b) == null
            && !f.substituted
            && cache.servesPages(f.id, b)) {
          // A random reader's READ: the pages it covers, fetched if missing, no block.
          cache.readPages(f.id, pos, k, pattern.want(), dst, missed);
          done += k;
          continue;
        }
        if (block == null) {
          // A block in RAM or on disk is copied from where it lies into the reply (from LMDB's
          // map checked once per handle), as is one read ahead that the RAM tier kept; one
          // fetched here, or read ahead and not kept, comes as an array, kept for the handle's
          // next READs.
          org.hintfs.fs.store.MappedBlock m = f.mapped(b);
          if (m != null) {
            if (cache.copyOut(m, in, k, false, dst::putNative)) {
              done += k;
              continue;
            }
            block = cache.read(f.id, b, false); // its stored copy went meanwhile
          } else {
            int at = in;
            org.hintfs.fs.store.TieredCache.Fetched got =
                readAhead.block(
                    f,
                    b,
                    () -> {
                      // Made only when no block was read ahead: the map or RAM is tried, by one
                      // READ of the handle at a time (SampleHandle.mapping); one that waited uses
                      // what the READ before it mapped.
                      synchronized (f.mapping) {
                        org.hintfs.fs.store.MappedBlock other = f.mapped(b);
                        if (other != null) {
                          return cache.copyOut(other, at, k, false, dst::putNative);
                        }
                        org.hintfs.fs.store.MappedBlock fresh = cache.mappedBlock(f.id, b);
                        if (!cache.copyOut(fresh, at, k, true, dst::putNative)) {
                          fresh.close();
                          return false;
                        }
                        f.setMapped(fresh);
                        return true;
                      }
                    },
                    !pattern.paged());
            if (got == null) {
              done += k;
              continue;
            }
            if (got.held() != null) {
              // Read ahead and held where the RAM tier put it: the handle keeps it from here.
              f.setMapped(got.held());
              if (cache.copyOut(got.held(), in, k, false, dst::putNative)) {
                done += k;
                continue;
              }
              block = cache.read(f.id, b, false);
            } else {
              block = got.bytes();
            }
          }
          f.setBlock(b, block);
        }
        dst.put(block, in, k);
        done += k;
      }
      if (readNow != null && readNow.length > 0) {
        // A sample is served from the cache if none of its own bytes came from the source: the
        // kernel's read-ahead reaches into its neighbours' pages, which are not this sample's.
        int hits = 0;
        for (int s : readNow) {
          long from = order.sampleStart(s);
          if (from + order.stride() <= missed[0] || from >= missed[1]) {
            hits++;
          }
        }
        cache.stats().packedSamples.add(readNow.length);
        cache.stats().packedSampleHits.add(hits);
      }
    }
    stats.readSeconds.observe((System.nanoTime() - t0) / 1e9);
    stats.bytesRead.add(n);
    return n;
  }

  /**
   * The handle's bytes, read through the cache once per handle. No lock is held while waiting:
   * reads racing on one handle both ask the cache, which coalesces them into one fetch.
   *
   * <p>A fetch that failed has already retried for the source's whole retry time: the handle keeps
   * its error and answers every later read with it at once (the kernel reads a failed page again,
   * and each would otherwise wait out the retry time anew). A new open fetches anew.
   */
  private byte[] wholeObject(SampleHandle f) throws IOException {
    byte[] b = f.bytes();
    if (b != null) {
      return b;
    }
    IOException failed = f.failure;
    if (failed != null) {
      throw failed;
    }
    try {
      MissFetch pending = f.pending;
      if (pending != null) {
        // The miss's own fetch: run here if no background thread has started it, else awaited.
        f.pending = null;
        b = pending.bytes();
      } else {
        b = cache.read(f.id, 0, false); // the access was recorded at open
      }
    } catch (java.io.InterruptedIOException e) {
      throw e;
    } catch (IOException e) {
      f.failure = e;
      throw e;
    }
    f.setBytes(b);
    return b;
  }

  /** True for a reader's own handle on a file in blocks: its reads are read ahead of. */
  private boolean readsAhead(Handle h) {
    return h instanceof SampleHandle s && !s.warmUp && !s.substituted && cache.isBlocked(s.id);
  }

  /** Closes a handle (no caller pid known). */
  public void release(long fh) {
    release(fh, 0);
  }

  /**
   * The OS thread id of the warm-up's reader while it reads ({@link WarmUp}), else 0. A FUSE
   * request carries the calling thread's id: only that thread's opens are the warm-up's.
   */
  volatile long warmUpThread;

  /** Closes a handle; a control handle's unfinished last line is applied now, for its writer. */
  public void release(long fh, long pid) {
    release(fh, () -> pid);
  }

  /**
   * {@link #release(long, long)} with the closing process's pid asked for only when the handle is a
   * control handle (every other release needs none).
   */
  public void release(long fh, java.util.function.LongSupplier pid) {
    Handle h = handles.remove(fh);
    if (h instanceof ControlHandle c) {
      c.release(pid.getAsLong());
    } else if (readsAhead(h)) {
      readAhead.closed((SampleHandle) h);
    }
    if (h instanceof SampleHandle s) {
      if (cache.isBlocked(s.id)) {
        s.closeMapped(); // the RAM tier's blocks it held where they lie
      }
      if (s.inUse) {
        s.inUse = false;
        cache.doneWith(s.id);
      }
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

  /** The owed samples' prefetch (for stats). */
  public org.hintfs.fs.prefetch.OwedPrefetch owedPrefetch() {
    return workers.owedPrefetch();
  }

  /** An admin's prefetch, evict and pin (for stats). */
  public org.hintfs.fs.admin.AdminOps admin() {
    return workers.admin();
  }

  /** Blocks of large files fetched ahead of sequential readers (for stats). */
  public long readAheadBlocks() {
    return readAhead.fetched.sum();
  }

  /** Blocks read ahead that their reader then read (for stats). */
  public long readAheadUsed() {
    return readAhead.used.sum();
  }

  /** Blocks read ahead and dropped unread (for stats). */
  public long readAheadDropped() {
    return readAhead.dropped.sum();
  }

  /**
   * A {@code packed} hint: the file's samples and their order are known from now on; its pages are
   * evicted among themselves by next use and its samples fetched ahead of the reader.
   */
  public void packed(org.hintfs.fs.control.Hint.Packed p) {
    org.hintfs.policy.PackedOrder order =
        new org.hintfs.policy.PackedOrder(
            p.base(), p.stride(), p.count(), p.seed(), p.epoch(), p.persistentWorkers());
    cache.index().setPacked(p.id(), order);
    packed.follow(p.id(), order);
  }

  /** The background fills of randomly read large files (for stats). */
  public org.hintfs.fs.prefetch.WholeFileFill fill() {
    return fill;
  }

  /** Packed files' samples fetched ahead of their readers (for stats). */
  public org.hintfs.fs.prefetch.PackedPrefetcher packedPrefetcher() {
    return packed;
  }

  /** The prefetcher (for stats). */
  public org.hintfs.fs.prefetch.Prefetcher prefetcher() {
    return prefetcher;
  }

  /** Stops background work and flushes the trace. */
  public void close() throws IOException {
    if (cluster != null) {
      try {
        cluster.member().close(); // leaves the view: the others take over this node's homes
      } catch (RuntimeException e) {
        org.slf4j.LoggerFactory.getLogger(HintFs.class)
            .warn("leaving the cluster: {}", e.toString());
      }
    }
    workers.close();
    hints.streams().close();
    opener.close();
    readAhead.close();
    packed.close();
    fill.close();
    setTrace(null);
  }

  /** Receives bytes read. */
  @FunctionalInterface
  public interface ByteSink extends org.hintfs.fs.store.ReadSink {
    /**
     * Copies {@code len} bytes of {@code src} from {@code off}, after those of the previous call
     * for the same read (a read that spans cache blocks is delivered in one call per block).
     */
    @Override
    void put(byte[] src, int off, int len);

    /**
     * Copies {@code len} bytes at native {@code address} (a cache hit in LMDB's map), after those
     * of the previous call; this default goes through a Java array.
     */
    @Override
    default void putNative(long address, int len) {
      byte[] b = new byte[len];
      org.hintfs.fs.store.NativeSink.copy(address, b, 0, len);
      put(b, 0, len);
    }
  }
}
