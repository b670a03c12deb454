package org.hintfs.fs.prefetch;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;
import java.util.function.IntPredicate;
import java.util.function.IntToLongFunction;

/**
 * Keeps the files the reader will open next already local.
 *
 * <p>Following the reader: every open of a dataset sample is looked up in the {@link
 * PredictedOrder} a little behind and ahead of the current position (DataLoader workers open a few
 * files out of order). Found, the position moves past it; not found, the open is counted as
 * off-order, and after {@link #STALE_AFTER} off-order opens in a row the prediction is dropped: a
 * wrong or stale hint degrades to no prefetching, never to wrong bytes or a stuck mount.
 *
 * <p>Window: after each open, the ids from the position onwards that are not cached or already
 * being fetched are fetched, until {@code window} files or {@code windowBytes} bytes are in flight
 * or ahead. Fetches run on their own threads and go through the cache (singleflight, admission by
 * policy).
 */
public final class Prefetcher implements AutoCloseable {
  /** The least distance behind the position at which an open still counts as expected. */
  static final int MIN_BEHIND = 64;

  /** The opens over which the prediction is judged. */
  public static final int JUDGE_OVER = 128;

  private final PredictedOrder order;
  private final int window;
  private final long windowBytes;
  private final IntPredicate isCached;
  private final IntToLongFunction sizeOf;
  private final IntConsumer fetch;
  private final ExecutorService pool;
  private final ConcurrentHashMap<Integer, Boolean> inFlight = new ConcurrentHashMap<>();
  private final AtomicLong bytesInFlight = new AtomicLong();
  private final boolean[] recent = new boolean[JUDGE_OVER];
  private int recentCount;
  private int recentExpected;
  private int recentNext;
  private int scheduledUpTo;
  public final LongAdder prefetched = new LongAdder();
  public final LongAdder offOrder = new LongAdder();
  public final LongAdder staleDrops = new LongAdder();

  /**
   * @param fetch fetches one id through the cache (blocking)
   */
  public Prefetcher(
      PredictedOrder order,
      int window,
      long windowBytes,
      int threads,
      IntPredicate isCached,
      IntToLongFunction sizeOf,
      IntConsumer fetch) {
    this.order = order;
    this.window = window;
    this.windowBytes = windowBytes;
    this.isCached = isCached;
    this.sizeOf = sizeOf;
    this.fetch = fetch;
    this.pool =
        Executors.newFixedThreadPool(
            threads,
            r -> {
              Thread t = new Thread(r, "prefetch");
              t.setDaemon(true);
              return t;
            });
  }

  /** The order changed: start scheduling from its beginning and judge it afresh. */
  public synchronized void reset() {
    recentCount = 0;
    recentExpected = 0;
    recentNext = 0;
    scheduledUpTo = 0;
    schedule();
  }

  /** A dataset sample was opened. */
  public synchronized void opened(int id) {
    int[] o = order.order();
    if (o == null) {
      return;
    }
    int pos = order.position();
    if (pos >= o.length) {
      // The reader went past the end: this epoch's order is spent, and opens from here on belong
      // to the next one, whose hint may still be on its way. They say nothing about this order.
      return;
    }
    int p = order.positionOf(id);
    // A slow worker can lag as many batches behind as a fast one runs ahead: one window back.
    boolean expected = p >= 0 && p >= pos - Math.max(MIN_BEHIND, window) && p < pos + 4 * window;
    if (expected) {
      if (p >= pos) {
        order.moveTo(p + 1);
      }
    } else {
      offOrder.increment();
    }
    if (recentCount == JUDGE_OVER) {
      recentExpected -= recent[recentNext] ? 1 : 0;
    } else {
      recentCount++;
    }
    recent[recentNext] = expected;
    recentExpected += expected ? 1 : 0;
    recentNext = (recentNext + 1) % JUDGE_OVER;
    if (recentCount == JUDGE_OVER && recentExpected * 2 < JUDGE_OVER) {
      staleDrops.increment();
      order.clear();
      return;
    }
    schedule();
  }

  private void schedule() {
    int[] o = order.order();
    if (o == null) {
      return;
    }
    int i = Math.max(order.position(), scheduledUpTo);
    int limit = Math.min(o.length, order.position() + window);
    while (i < limit && bytesInFlight.get() < windowBytes) {
      int id = o[i++];
      if (isCached.test(id) || inFlight.putIfAbsent(id, Boolean.TRUE) != null) {
        continue;
      }
      long size = sizeOf.applyAsLong(id);
      bytesInFlight.addAndGet(size);
      prefetched.increment();
      pool.execute(
          () -> {
            try {
              fetch.accept(id);
            } finally {
              bytesInFlight.addAndGet(-size);
              inFlight.remove(id);
            }
          });
    }
    scheduledUpTo = i;
  }

  public int filesInFlight() {
    return inFlight.size();
  }

  public long bytesInFlight() {
    return bytesInFlight.get();
  }

  public int window() {
    return window;
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
