package org.hintfs.fs.prefetch;

import java.io.IOException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;
import java.util.function.IntToLongFunction;
import org.hintfs.fs.concurrent.DaemonThreads;
import org.hintfs.fs.store.TieredCache;

/**
 * Fetches ahead the samples substitution owes the trainer: those substituted away in the last epoch
 * and never served, which the chooser will not substitute again. Each is held in the cache until
 * its open (admitted whatever the policy says, never evicted for room), so the trainer finds it
 * local. Bounded: the holds take at most {@code share} of the cache's capacity; what does not fit
 * is read from the source when the trainer asks, as any miss. A new epoch cancels what is left of
 * the last one's list and releases its holds.
 */
public final class OwedPrefetch implements AutoCloseable {
  private final TieredCache cache;
  private final IntToLongFunction sizeOf;
  private final BiConsumer<Integer, Exception> onError;
  private final double share;
  private final ExecutorService pool;
  private final AtomicInteger generation = new AtomicInteger();
  private final AtomicLong budgetLeft = new AtomicLong();
  public final LongAdder fetched = new LongAdder();
  public final LongAdder skipped = new LongAdder();
  private volatile int owed;

  /**
   * @param sizeOf a file's size in bytes
   * @param onError told of a fetch that failed (the id, the exception)
   * @param share the most of the cache's capacity the held samples may take
   */
  public OwedPrefetch(
      TieredCache cache,
      IntToLongFunction sizeOf,
      BiConsumer<Integer, Exception> onError,
      int threads,
      double share) {
    this.cache = cache;
    this.sizeOf = sizeOf;
    this.onError = onError;
    this.share = share;
    this.pool = DaemonThreads.pool("owed-prefetch", threads);
  }

  /** A new epoch owes {@code ids}: fetch and hold as many as the budget allows. */
  public void start(int[] ids) {
    int gen = generation.incrementAndGet();
    cache.index().releaseHolds();
    owed = ids.length;
    budgetLeft.set((long) (cache.index().capacityBytes() * share));
    for (int id : ids) {
      pool.execute(() -> fetch(gen, id));
    }
  }

  private void fetch(int gen, int id) {
    if (gen != generation.get()) {
      return; // a later epoch took over
    }
    long size = sizeOf.applyAsLong(id);
    if (cache.isCached(id) || budgetLeft.addAndGet(-size) < 0) {
      skipped.increment();
      return;
    }
    cache.index().hold(id);
    try {
      cache.prefetch(id);
      fetched.increment();
    } catch (IOException | RuntimeException e) {
      onError.accept(id, e);
    }
  }

  /** Samples the last epoch left owed. */
  public int owed() {
    return owed;
  }

  @Override
  public void close() {
    generation.incrementAndGet();
    pool.shutdownNow();
  }
}
