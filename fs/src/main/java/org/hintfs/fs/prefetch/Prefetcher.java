package org.hintfs.fs.prefetch;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;
import java.util.function.IntPredicate;
import java.util.function.IntToLongFunction;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.hintfs.fs.concurrent.DaemonThreads;
import org.hintfs.fs.stream.PredictedOrder;
import org.hintfs.fs.stream.Stream;
import org.hintfs.fs.stream.Streams;

/**
 * Keeps the files each stream's reader will open next already local.
 *
 * <p>Following a reader: every open attributed to a stream is looked up in that stream's predicted
 * order a little behind and ahead of its position (DataLoader workers open a few files out of
 * order). Found, the position moves past it; not found, it is counted as off-order, and when fewer
 * than half of the stream's last {@link Stream#JUDGE_OVER} opens were expected, that stream's
 * prediction is dropped: a wrong or stale hint degrades to no prefetching for that stream, never to
 * wrong bytes, a stuck mount or a loss for the other streams.
 *
 * <p>Window and budget: each stream may have up to {@code window} files ahead of its position
 * fetched or in flight; all streams share {@code windowBytes} of fetches in flight and the fetch
 * threads. The windows of all streams with an order together take at most {@link #CACHE_SHARE} of
 * the cache ({@link #windowPerStream}): a window's files must stay cached until their reader gets
 * there, and windows that fill the cache evict each other's files before they are read (world 4
 * with a cache of half the dataset lost a quarter of its opens so). When the budget has room, the
 * next fetch goes to the stream whose next unfetched file is soonest in time (its distance from the
 * reader at that stream's pace): the reader closest to the end of what is local is served first.
 * Scheduling runs on every attributed open and whenever a fetch completes. Near the end of an epoch
 * the window runs on into the next epoch's head, when the stream's seed makes it known.
 *
 * <p>A stream that ends (its owner exited) has its queued fetches skipped.
 */
public final class Prefetcher implements AutoCloseable {
  private final Supplier<Stream[]> streams;
  private final int window;
  private final long windowBytes;
  private final IntPredicate isCached;
  private final IntToLongFunction sizeOf;
  private final IntConsumer fetch;
  private final LongSupplier cacheFiles;
  private final ExecutorService pool;
  private final ConcurrentHashMap<Integer, Stream> inFlight = new ConcurrentHashMap<>();
  private final AtomicLong bytesInFlight = new AtomicLong();
  private final java.util.concurrent.atomic.AtomicInteger largeInFlight =
      new java.util.concurrent.atomic.AtomicInteger();

  /** Large files (shards) prefetched at once, at most. */
  public static final int MAX_LARGE_IN_FLIGHT = 2;

  /** A file over this is large: fetched a block at a time, charged this much of the budget. */
  private long largeBytes() {
    return windowBytes / 8;
  }

  public final LongAdder prefetched = new LongAdder();
  public final LongAdder offOrder = new LongAdder();
  public final LongAdder staleDrops = new LongAdder();
  public final LongAdder cancelled = new LongAdder();

  /** The share of the cache that all streams' windows together may fill. */
  public static final double CACHE_SHARE = 0.5;

  /** The smallest window a crowded cache cuts a stream's to. */
  public static final int MIN_WINDOW = 8;

  /**
   * @param streams the live streams, oldest first
   * @param fetch fetches one id through the cache (blocking)
   * @param cacheFiles how many files of the dataset's mean size the cache holds (0: no limit)
   */
  public Prefetcher(
      Supplier<Stream[]> streams,
      int window,
      long windowBytes,
      int threads,
      IntPredicate isCached,
      IntToLongFunction sizeOf,
      IntConsumer fetch,
      LongSupplier cacheFiles) {
    this.streams = streams;
    this.cacheFiles = cacheFiles;
    this.window = window;
    this.windowBytes = windowBytes;
    this.isCached = isCached;
    this.sizeOf = sizeOf;
    this.fetch = fetch;
    this.pool = DaemonThreads.pool("prefetch", threads);
  }

  /** A stream's order changed: schedule it from its beginning and judge it afresh. */
  public synchronized void reset(Stream s) {
    s.resetJudging();
    schedule();
  }

  /**
   * An open of a dataset sample attributed to stream {@code s}: moves its reader past it (or counts
   * it off-order) and judges the prediction. Call before the cache records the access, then {@link
   * #scheduleAhead}.
   *
   * @return true if the stream's time map was re-drawn: the cache must re-key its next uses
   */
  public boolean follow(Stream s, int id) {
    return follow(s, id, 0);
  }

  /**
   * {@link #follow(Stream, int)} for an open by process {@code pid}: each DataLoader worker's opens
   * are also followed on from its own last one (see {@link Stream#expectedPosition(int, int, int,
   * long)}).
   */
  public synchronized boolean follow(Stream s, int id, long pid) {
    int[] o = s.order().order();
    if (o == null) {
      return false;
    }
    int pos = s.order().position();
    if (pos >= o.length) {
      // The reader went past the end: this epoch's order is spent, and opens from here on belong
      // to the next one, whose hint may still be on its way. They say nothing about this order.
      return false;
    }
    int p = s.expectedPosition(id, window, Streams.MIN_BEHIND, pid);
    boolean catchUp = s.recognition().takeCatchUp(); // only the first open after a recognition
    if (p < 0 && catchUp) {
      p = s.order().occurrenceFrom(id, pos); // a late recognition: this open places the reader
    }
    // The reader read on while the search ran: the time map starts where this open places it, not
    // as if the opens before it were still to come.
    boolean placed = catchUp && p >= pos;
    boolean expected = p >= 0;
    s.noteReader(pid, id, p);
    if (expected) {
      s.order().markRead(p);
      if (placed) {
        s.order().startAt(p + 1);
      } else if (p >= pos) {
        s.order().moveTo(p + 1);
      }
    } else {
      offOrder.increment();
      s.offOrder.increment();
    }
    if (s.judge(expected)) {
      org.slf4j.LoggerFactory.getLogger(Prefetcher.class)
          .info(
              "stream {}: most of its last {} opens were not where its order said; dropping it"
                  + " (position {} of {})",
              s.id(),
              Stream.JUDGE_OVER,
              pos,
              o.length);
      staleDrops.increment();
      s.staleDrops.increment();
      s.order().clear();
      return false;
    }
    return s.order().reanchorIfDrifted(s.pace()) || placed;
  }

  /** Fetches what the streams' windows now lack (after an open). */
  public synchronized void scheduleAhead() {
    schedule();
  }

  /** {@link #follow}, then {@link #scheduleAhead}. */
  public void opened(Stream s, int id) {
    follow(s, id);
    scheduleAhead();
  }

  /** Schedules fetches while the byte budget has room, soonest-needed stream first. */
  private void schedule() {
    if (window <= 0) {
      // --prefetch-window 0: nothing ahead of the readers. Without this, a confirmed order's
      // schedule started at its oldest unread position, the file being opened, and fetched it
      // beside the reader's own fetch: joined most times, a second GET when it came after that
      // fetch (ClairvoyantMountIT: 296 "prefetched", 501 GETs for 500 misses in 1 run of 7).
      return;
    }
    Stream[] ss = streams.get();
    int perStream = windowPerStream();
    while (bytesInFlight.get() < windowBytes) {
      Stream best = null;
      int[] bestOrder = null;
      int bestAt = 0;
      int bestId = -1;
      double bestLead = Double.MAX_VALUE;
      for (Stream s : ss) {
        int[] o = s.order().order();
        if (o == null || s.ended()) {
          continue;
        }
        PredictedOrder po = s.order();
        int pos = po.position();
        // From the oldest unread position once the order is confirmed: a slower DataLoader
        // worker's files behind the furthest open are needed first. Not before: a wrong order's
        // furthest open races ahead by chance matches, and all it passed would be fetched.
        int i =
            s.becameConfirmed(o)
                ? po.lowMark()
                : Math.max(s.confirmed() ? po.lowMark() : pos, s.scheduledUpTo(o));
        int limit = Math.min(po.extent(), pos + perStream);
        int next = -1;
        while (i < limit
            && (next = po.at(i)) >= 0
            && (isCached.test(next) || inFlight.containsKey(next))) {
          i++;
        }
        s.scheduledUpTo(o, i);
        if (i < limit
            && next >= 0
            && largeInFlight.get() >= MAX_LARGE_IN_FLIGHT
            && sizeOf.applyAsLong(next) > largeBytes()) {
          continue; // two large files come already: this stream's next waits for one of them
        }
        if (i < limit && next >= 0) {
          double lead = (i - pos) * s.order().nsPerOpen();
          if (lead < bestLead) {
            bestLead = lead;
            best = s;
            bestOrder = o;
            bestAt = i;
            bestId = next;
          }
        }
      }
      if (best == null) {
        return;
      }
      // Read in bestOrder: if the order changed since, the new one is scheduled from its start.
      best.scheduledUpTo(bestOrder, bestAt + 1);
      submit(best, bestId);
    }
  }

  private void submit(Stream s, int id) {
    // A large file is fetched a block at a time: an eighth of the budget, and at most two at once
    // (schedule), so shards leave the rest of the budget to other streams' files.
    long whole = sizeOf.applyAsLong(id);
    boolean large = whole > largeBytes();
    long size = large ? largeBytes() : whole;
    if (large) {
      largeInFlight.incrementAndGet();
    }
    inFlight.put(id, s);
    bytesInFlight.addAndGet(size);
    prefetched.increment();
    s.prefetched.increment();
    pool.execute(
        () -> {
          try {
            if (s.ended()) {
              cancelled.increment();
            } else {
              fetch.accept(id);
            }
          } finally {
            if (large) {
              largeInFlight.decrementAndGet();
            }
            bytesInFlight.addAndGet(-size);
            inFlight.remove(id);
            scheduleAhead();
          }
        });
  }

  /** True while a prefetch of {@code id} runs. */
  public boolean isInFlight(int id) {
    return inFlight.containsKey(id);
  }

  /** Files being prefetched now. */
  public int filesInFlight() {
    return inFlight.size();
  }

  /** Files being prefetched now for stream {@code s}. */
  public long filesInFlight(Stream s) {
    return inFlight.values().stream().filter(x -> x == s).count();
  }

  public long bytesInFlight() {
    return bytesInFlight.get();
  }

  public int window() {
    return window;
  }

  /**
   * The window each of {@code streams} streams gets: {@link #window}, cut so that all of them
   * together fill at most {@link #CACHE_SHARE} of the cache, and never below {@link #MIN_WINDOW}.
   */
  public int windowPerStream(int streams) {
    if (streams <= 0) {
      return window; // no order to fetch ahead of (and no call into the cache on a plain read)
    }
    long files = cacheFiles.getAsLong();
    if (files <= 0) {
      return window;
    }
    long fit = (long) (files * CACHE_SHARE / streams);
    return (int) Math.min(window, Math.max(MIN_WINDOW, fit));
  }

  /** {@link #windowPerStream} for the streams that have an order now. */
  public int windowPerStream() {
    int ordered = 0;
    for (Stream s : streams.get()) {
      ordered += s.order().known() && !s.ended() ? 1 : 0;
    }
    return windowPerStream(ordered);
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
