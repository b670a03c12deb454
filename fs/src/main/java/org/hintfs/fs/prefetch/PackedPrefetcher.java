package org.hintfs.fs.prefetch;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.LongAdder;
import org.hintfs.fs.concurrent.DaemonThreads;
import org.hintfs.fs.store.TieredCache;
import org.hintfs.policy.PackedOrder;

/**
 * Fetches a packed file's samples ahead of its reader, in the order a {@code packed} hint predicts
 * ({@link PackedOrder}): the samples from the reader's low mark (where its slowest worker is) on,
 * as far ahead as the window holds, each one ranged GET of its pages ({@link
 * TieredCache#prefetchPages}: a prefetch, after readers' misses), at most {@link #IN_FLIGHT} at
 * once across every packed file. The pages land in the cache, where the file's pages are evicted
 * among themselves by next use, so what is fetched for the next reads is what stays.
 *
 * <p>The window: {@link #WINDOW_BYTES}, the sample prefetcher's own window, or half the cache if
 * that is less, so that what is fetched ahead never pushes out itself, counted in what its samples
 * take in the cache (whole pages, a page more than a sample on average). It moves on with each READ
 * of the file ({@link #moved}) and with each fetch that ends; a window that has reached its end
 * waits for the reader, nothing is polled.
 */
public final class PackedPrefetcher implements AutoCloseable {
  /** Bytes fetched ahead of one packed file's reader: the sample prefetcher's 256 MiB. */
  static final long WINDOW_BYTES = 256L << 20;

  /** Samples fetched at once, across packed files: 16 ranged GETs, a quarter of --max-fetches. */
  static final int IN_FLIGHT = 16;

  /** The kernel's page: what a READ of a sample is rounded out to at either end. */
  static final long KERNEL_PAGE = 4096;

  private final TieredCache cache;
  private final ExecutorService pool = DaemonThreads.pool("packed-prefetch", IN_FLIGHT);
  private final Map<Integer, Follow> files = new ConcurrentHashMap<>();

  /** Samples fetched ahead (some of their pages were not stored); of them, failed. */
  public final LongAdder fetched = new LongAdder();

  public final LongAdder failed = new LongAdder();

  /** One packed file followed. Guarded by itself. */
  private static final class Follow {
    final int id;
    final PackedOrder order;
    final long windowSamples;
    long next;
    int inFlight;

    Follow(int id, PackedOrder order, long windowSamples) {
      this.id = id;
      this.order = order;
      this.windowSamples = windowSamples;
    }
  }

  public PackedPrefetcher(TieredCache cache) {
    this.cache = cache;
  }

  /** Packed file {@code id} is read in {@code order} from now on: its window starts. */
  public void follow(int id, PackedOrder order) {
    long window = Math.min(WINDOW_BYTES, cache.index().capacityBytes() / 2);
    // What a sample takes in the cache: its bytes and, on average, one page more (a sample at a
    // random place in its pages), each page with its header and LMDB's rounding.
    long perSample =
        order.stride() + cache.pageSize() + 4096L * (order.stride() / cache.pageSize() + 2);
    Follow f = new Follow(id, order, Math.max(1, window / perSample));
    files.put(id, f);
    schedule(f);
  }

  /** Packed files followed now. */
  public int files() {
    return files.size();
  }

  /** A READ of packed file {@code id} was served: its window moves with the reader. */
  public void moved(int id) {
    Follow f = files.get(id);
    if (f != null) {
      schedule(f);
    }
  }

  private void schedule(Follow f) {
    synchronized (f) {
      long low = f.order.lowMark();
      f.next = Math.max(f.next, low);
      long limit = low + f.windowSamples;
      while (f.inFlight < IN_FLIGHT && f.next < limit) {
        long[] range = f.order.rangeAt(f.next++);
        if (range != null) {
          f.inFlight++;
          pool.execute(() -> fetch(f, range));
        }
      }
    }
  }

  private void fetch(Follow f, long[] range) {
    try {
      // The kernel reads whole pages of 4 KiB: a sample's READ reaches into the pages of memory
      // on either side of it, which may lie in the next 64 KiB page of the cache.
      long from = Math.max(0, range[0] - KERNEL_PAGE);
      int length = (int) (range[0] + range[1] + KERNEL_PAGE - from);
      if (!cache.prefetchPages(f.id, from, length)) {
        fetched.increment();
      }
    } catch (IOException | RuntimeException e) {
      failed.increment(); // the reader's READ fetches it, as any miss
    } finally {
      synchronized (f) {
        f.inFlight--;
      }
    }
    if (files.get(f.id) == f) {
      schedule(f);
    }
  }

  @Override
  public void close() {
    files.clear();
    pool.shutdownNow();
  }
}
