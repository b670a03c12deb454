package org.hintfs.fs.serve;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.concurrent.DaemonThreads;
import org.hintfs.fs.control.HintState;
import org.hintfs.fs.prefetch.Prefetcher;
import org.hintfs.fs.store.TieredCache;
import org.hintfs.fs.stream.Stream;
import org.hintfs.fs.stream.Streams;

/**
 * The open of a catalog file: which stream it belongs to, the prefetcher following that stream, the
 * cache's hit or miss (a miss fetched at once, off the FUSE thread), substitution and coverage, the
 * trace. Prediction steers the cache; nothing of it ever fails an open.
 */
final class SampleOpener implements AutoCloseable {
  private final Catalog catalog;
  private final TieredCache cache;
  private final HintState hints;
  private final Prefetcher prefetcher;
  private final ErrorTable errors;
  private final boolean detectOrder;
  private final Supplier<TraceRecorder> trace;
  private final PageCacheWindow pageCache;

  /**
   * The least silence of the source taken for a hang (its deadline is 4x its recent p90 above it):
   * a hiccup of a source that answers in milliseconds is waited out, never substituted for.
   */
  static final long HUNG_FLOOR_MILLIS = 1_000;

  /** Background fetches of missed files: a few threads, the fetcher bounds the source requests. */
  private final ExecutorService background = DaemonThreads.pool("background-fetch", 4);

  /** Missed files queued for {@link #background} or being fetched and stored there. */
  private final AtomicInteger backgroundPending = new AtomicInteger();

  SampleOpener(
      Catalog catalog,
      TieredCache cache,
      HintState hints,
      Prefetcher prefetcher,
      ErrorTable errors,
      boolean detectOrder,
      Supplier<TraceRecorder> trace,
      PageCacheWindow pageCache) {
    this.catalog = catalog;
    this.cache = cache;
    this.hints = hints;
    this.prefetcher = prefetcher;
    this.errors = errors;
    this.detectOrder = detectOrder;
    this.trace = trace;
    this.pageCache = pageCache;
  }

  /**
   * Opens a catalog file. For a sample of the declared dataset this is where substitution happens:
   * if substitution is on, the sample is not cached and the chooser allows it, the handle serves a
   * cached sample of the same class instead (the caller sets direct_io on it) and the missed sample
   * is fetched in the background if the cache would keep it.
   */
  SampleHandle open(int id, long pid) {
    if (cache.isBlocked(id)) {
      // Large files: accesses are recorded per block as they are read. A hinted stream's reader
      // moves past it all the same, so that what is prefetched whole is the shards after it.
      try {
        Streams.Attribution a = hints.streams().attribute(pid, id);
        if (a != null) {
          prefetcher.follow(a.stream(), id, pid);
          prefetcher.scheduleAhead();
        }
      } catch (RuntimeException e) {
        errors.record("stream", catalog.path(id), e);
      }
      return new SampleHandle(catalog, id);
    }
    Streams.Attribution stream = null;
    try {
      stream = attribute(id, pid);
      if (stream != null) {
        // The reader moves past this open before the policy hears of it: the next use the policy
        // then sees for this sample is its next read, not the one happening now.
        if (prefetcher.follow(stream.stream(), id, pid)) {
          background.execute(cache.index()::orderChanged); // re-key by the stream's new time map
        }
      }
    } catch (RuntimeException e) {
      // Prediction steers the cache; it is never a reason to fail an open.
      errors.record("stream", catalog.path(id), e);
      stream = null;
    }
    // A hit's stored bytes stay readable until this handle is closed: its reads come after this
    // access, and the policy may evict it before they do.
    int opened = cache.access(id, true);
    boolean hit = (opened & TieredCache.HIT) != 0;
    boolean inUse = (opened & TieredCache.IN_USE) != 0;
    // A fetch already under way (a prefetch that is late) is waited for, never substituted.
    boolean fetching = !hit && cache.isFetching(id);
    // The kernel's page cache may still hold this file and answer every read itself; the cache
    // must see the miss all the same (the access above), or it could never admit what the page
    // cache serves, and the fetch starts now if the cache would keep it. One the cache would not
    // keep is left to the first read: a reopen the page cache answers costs no GET. Either way the
    // kernel's read takes this fetch's bytes: one source request per miss.
    MissFetch fetched = hit ? null : cache.wouldKeep(id) ? fetchInBackground(id) : unstarted(id);
    if (stream != null) {
      try {
        followed(stream, id, hit);
      } catch (RuntimeException e) {
        errors.record("prefetch", catalog.path(id), e);
      }
    }
    boolean inDataset = hints.classOf(id) >= 0;
    boolean substituting = inDataset && hints.substitution.on();
    // A file this mount served as itself a little while ago may still be in the kernel's page
    // cache, which answers its reads: a stand-in would change what the trainer sees for no gain.
    boolean pageHeld = substituting && !hit && pageCache.mayHold(id);
    boolean late = false;
    if (!hit && substituting && (pageHeld || !hints.substitution.rulesAllow(id, fetching))) {
      // The rules would have the reader wait for this miss (the first epoch, an H-sample, an owed
      // one, a late prefetch, no stand-in free, its pages maybe in the page cache). If the source
      // has answered nothing within its deadline while this or another fetch waited, it hangs: a
      // stand-in under the cap alone, so a hung source costs the trainer the cap, not its pace.
      // The fetch goes on; the sample is owed as any other. The reader reads it unless it is
      // stood in for: start a fetch the cache would not keep. One the page cache may hold is not
      // waited for here: its reads may never reach the source.
      late =
          pageHeld
              ? cache.sourceSilentFor(cache.fetchDeadlineMillis(HUNG_FLOOR_MILLIS))
              : hung(start(fetched, id));
      if (late && !pageHeld) {
        hints.substitution.pastDeadline.increment();
      }
    }
    int sub = inDataset ? hints.substitution.opened(id, hit, fetching, late, pageHeld) : -1;
    recordTrace(id, stream);
    if (sub >= 0) {
      if (inUse) {
        cache.doneWith(id); // not this handle's to read (a stand-in is only for a miss)
      }
      SampleHandle h = new SampleHandle(catalog, sub, true);
      h.inUse = cache.use(sub);
      return h;
    }
    pageCache.served(id, catalog.size(id));
    SampleHandle f = new SampleHandle(catalog, id);
    f.pending = fetched;
    f.inUse = inUse;
    return f;
  }

  /**
   * Waits for a miss's fetch until it comes (false) or the source is found silent for its deadline
   * (true): nothing answered while a fetch waited that long. A source that is slow on this request
   * but answers others is waited for, as the read would have.
   */
  private boolean hung(MissFetch fetched) {
    long deadline = cache.fetchDeadlineMillis(HUNG_FLOOR_MILLIS);
    if (cache.sourceSilentFor(deadline)) {
      return true;
    }
    long wait = deadline;
    while (!fetched.awaitWithin(wait)) {
      if (cache.sourceSilentFor(deadline)) {
        return true;
      }
      if (Thread.currentThread().isInterrupted()) {
        return false;
      }
      wait = 50;
    }
    return false;
  }

  /** After the cache saw the open: the stream's counters, recognition and prefetching. */
  private void followed(Streams.Attribution stream, int id, boolean hit) {
    Stream st = stream.stream();
    st.opened(hit, stream.byAncestry());
    if (!hit && prefetcher.isInFlight(id)) {
      st.lateMisses.increment(); // prefetched, but not in time
    }
    if (st.implicit() && !st.recognition().hinted()) {
      int[] o = st.order().order();
      if (o == null) {
        hints.recognition.observe(st, id);
      } else if (st.order().position() >= o.length) {
        hints.recognition.advanceDetected(st);
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
    if (a != null || !detectOrder || pid <= 1) {
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

  /** Queues the fetch of a missed file off the FUSE thread; its access was recorded at open. */
  private MissFetch fetchInBackground(int id) {
    return start(new MissFetch(cache, id), id);
  }

  /** Queues {@code f} off the FUSE thread (a no-op if its read has claimed it). */
  private MissFetch start(MissFetch f, int id) {
    backgroundPending.incrementAndGet();
    try {
      background.execute(
          () -> {
            try {
              f.run();
              Throwable t = f.failure();
              if (t != null) {
                errors.record("background fetch", catalog.path(id), t);
              }
            } finally {
              backgroundPending.decrementAndGet();
            }
          });
    } catch (RuntimeException rejected) {
      backgroundPending.decrementAndGet(); // not queued (the opener is closing)
      throw rejected;
    }
    return f;
  }

  /**
   * Missed files whose fetch waits in the background queue or runs (fetched, then stored): a miss
   * whose data the kernel still holds is answered at once, and its fetch (and the evictions its
   * admission makes) comes later.
   */
  int backgroundPending() {
    return backgroundPending.get();
  }

  /** The fetch of a missed file the cache would not keep: run by the handle's first read. */
  private MissFetch unstarted(int id) {
    return new MissFetch(cache, id);
  }

  /**
   * One line per open of a sample: numbered in the declared dataset, else in the ImageFolder its
   * stream recognised (so a trace starts at the first open, hint or none).
   */
  private void recordTrace(int id, Streams.Attribution a) {
    TraceRecorder t = trace.get();
    if (t == null) {
      return;
    }
    Stream st = a == null ? null : a.stream();
    int sample = hints.sampleOf(id);
    int cls = hints.classOf(id);
    int epoch = hints.epoch();
    if (sample < 0 && st != null) {
      sample = st.sampleOf(id);
      var view = st.view();
      cls = sample >= 0 && view != null ? view.classOf(sample) : -1;
      epoch = st.epoch();
    }
    if (sample >= 0) {
      t.read(epoch, sample, catalog.size(id), cls, st == null ? -1 : st.id());
    }
  }

  @Override
  public void close() {
    background.shutdownNow();
  }
}
